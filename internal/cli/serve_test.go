package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/serve"
	"github.com/tracegap/tracegap/internal/testservers"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// ruleSets are the rules the command line and the service are held to in
// TestServiceAgrees, as check's flags: the defaults; rules that nearly
// every run fails, so that every outcome's figure shows in the message;
// and rules that every run passes.
var ruleSets = [][]string{
	nil,
	{"--fail-on", "parallel,sequential,data-bound,host-bound,stalled,no-device", "--max-idle", "0%", "--max-sync-idle", "0%",
		"--max-input-idle", "0%", "--min-utilization", "100%", "--min-steps", "1000"},
	{"--fail-on", "none", "--max-idle", "100%", "--min-steps", "1"},
	{"--fail-on", "stalled"},
}

// serviceVerdicts are verdicts TestServiceAgrees holds the service to
// beyond expected.tsv's labels: the stalled verdict, which its one real
// trace must give, and ruleSets fail on.
var serviceVerdicts = map[string]string{"hta-torchrec-a100-rank0.json.gz": "stalled"}

// TestServiceAgrees runs every real trace that analyses, and the ranks of
// the DLRM job, through the command line and through the upload service
// wired as `tracegap serve` wires it. Uploaded under the names the command
// line gives them, each must get the same JSON report (bytes), the same
// rule outcomes under each of ruleSets, and workers0 against workers4 the
// same comparison; the trace that cannot be read, the same error.
func TestServiceAgrees(t *testing.T) {
	dir := realtraces.Dir(t)
	svc := newTestService(t)
	for _, c := range realtraces.Sample(t) {
		p := filepath.Join(dir, c.File)
		t.Run(c.File, func(t *testing.T) {
			if c.Expect[0] == "error" {
				code, _, stderr := runCmd("analyze", "--format", "json", p)
				status, body := svc.upload(t, p)
				if code != exitUsage || status != http.StatusUnprocessableEntity || stderr != "tracegap: "+errorOf(t, body)+"\n" {
					t.Errorf("command: exit %d, %q; service: %d %s; want exit 2 and 422 with the same message", code, stderr, status, body)
				}
				return
			}
			status, body := svc.upload(t, p)
			if status != http.StatusCreated {
				t.Fatalf("upload: %d %s", status, body)
			}
			id := idOf(t, body)
			svc.agree(t, p, id)
			var rep struct{ Verdict string }
			if err := json.Unmarshal([]byte(svc.get(t, "/api/v1/traces/"+id)), &rep); err != nil {
				t.Fatal(err)
			}
			if want, ok := serviceVerdicts[c.File]; ok && rep.Verdict != want || !slices.Contains(c.Expect, rep.Verdict) {
				t.Errorf("the service's verdict %s, want one of %v (%s)", rep.Verdict, c.Expect, serviceVerdicts[c.File])
			}
		})
	}
	t.Run("param-dlrm-8ranks", func(t *testing.T) {
		job := filepath.Join(dir, "param-dlrm-8ranks")
		status, body := svc.uploadJob(t, job)
		var res []struct {
			ID, Kind string
		}
		if err := json.Unmarshal(body, &res); status != http.StatusCreated || err != nil || len(res) != 1 || res[0].Kind != serve.KindJob {
			t.Fatalf("job upload: %d %s, want one job stored", status, body)
		}
		svc.agree(t, job, res[0].ID)
	})
	t.Run("generated-tpu-loop", func(t *testing.T) {
		// A JAX loop on TPU whose host runs ahead, its steps found
		// through XProf's flows (analyze's TestJAXStepsFromLinks).
		p := filepath.Join(t.TempDir(), "jax-tpu-bursty.xplane.pb")
		var buf bytes.Buffer
		spec := tracetest.JAXProgram{Steps: 12, TPU: true, Workers: 4, Load: 80 * 1e6, Dispatch: 1e6, Compute: 10 * 1e6}.Spec()
		if err := tracetest.WriteXPlane(&buf, spec); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		status, body := svc.upload(t, p)
		if status != http.StatusCreated {
			t.Fatalf("upload: %d %s", status, body)
		}
		svc.agree(t, p, idOf(t, body))
	})
	t.Run("compare", func(t *testing.T) {
		var ids [2]string
		paths := [2]string{filepath.Join(dir, "kineto-resnet50-workers0.pt.trace.json.gz"), filepath.Join(dir, "kineto-resnet50-workers4.pt.trace.json.gz")}
		for i, p := range paths {
			_, body := svc.upload(t, p) // stored above: a duplicate
			ids[i] = idOf(t, body)
		}
		code, cli, stderr := runCmd("compare", "--format", "json", paths[0], paths[1])
		if code != exitOK {
			t.Fatalf("compare: exit %d, %s", code, stderr)
		}
		if got := svc.get(t, "/api/v1/compare?base="+ids[0]+"&new="+ids[1]); got != cli {
			t.Errorf("the service's comparison differs from the command's:\nservice:\n%s\ncommand:\n%s", got, cli)
		}
	})
}

// testService is the upload service as `tracegap serve` configures it.
type testService struct{ url string }

// Under TRACEGAP_SERVE_STORE=shared (.ci/run), it is two replicas that
// keep their records in PostgreSQL and their files in an S3 bucket, real
// servers, through the --database and --blobs flags, behind a round-robin
// balancer: a trace uploaded through one is checked through the other.
func newTestService(t *testing.T) *testService {
	t.Helper()
	var store []string
	replicas := 1
	if os.Getenv("TRACEGAP_SERVE_STORE") == "shared" {
		store, replicas = sharedStoreFlags(t), 2
	}
	var urls []*url.URL
	for range replicas {
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f := addServeFlags(fs)
		if err := fs.Parse(append([]string{"--data-dir", t.TempDir()}, store...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := f.serveConfig(fs, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		s, err := serve.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		t.Cleanup(func() { hs.Close(); s.Close() })
		u, _ := url.Parse(hs.URL)
		urls = append(urls, u)
	}
	if replicas == 1 {
		return &testService{url: urls[0].String()}
	}
	var n atomic.Int64
	lb := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(urls[n.Add(1)%int64(len(urls))])
	}})
	t.Cleanup(lb.Close)
	return &testService{url: lb.URL}
}

// agree checks that the service's report and rule outcomes for the stored
// run id are the command line's for path (a trace, or a job's directory).
func (s *testService) agree(t *testing.T, path, id string) {
	t.Helper()
	code, cli, stderr := runCmd("analyze", "--format", "json", path)
	if code != exitOK {
		t.Fatalf("analyze: exit %d, %s", code, stderr)
	}
	if got := s.get(t, "/api/v1/traces/"+id); got != cli {
		t.Errorf("the service's report differs from the command's:\nservice:\n%.2000s\ncommand:\n%.2000s", got, cli)
	}
	for _, rules := range ruleSets {
		junit := filepath.Join(t.TempDir(), "junit.xml")
		code, cli, stderr := runCmd(append(append([]string{"check", "--junit", junit}, rules...), path)...)
		var a struct {
			Verdict, Confidence string
			Failed              bool
			Outcomes            []struct {
				Rule, Message string
				Failed        bool
			}
		}
		if err := json.Unmarshal([]byte(s.get(t, "/api/v1/traces/"+id+"/check?"+query(rules))), &a); err != nil {
			t.Fatal(err)
		}
		// The command's output and JUnit cases as the service's outcomes
		// would make them.
		want, wantCode, cases := "", exitOK, ""
		for _, o := range a.Outcomes {
			cases += o.Rule
			if o.Failed {
				want += "FAIL " + path + ": " + o.Message + "\n"
				wantCode, cases = exitCheck, cases+": "+o.Message
			}
			cases += "\n"
		}
		if !a.Failed {
			want = fmt.Sprintf("ok   %s: %s (%s confidence), %d rules passed\n", path, a.Verdict, a.Confidence, len(a.Outcomes))
			want = strings.Replace(want, " 1 rules", " 1 rule", 1)
		}
		if code != wantCode || cli != want || stderr != "" || junitOf(t, junit) != cases {
			t.Errorf("check %q: command exit %d:\n%s%s\nservice's outcomes give exit %d:\n%s%s", rules, code, cli, junitOf(t, junit), wantCode, want, cases)
		}
	}
}

// query turns check's flags into the service's query parameters.
func query(flags []string) string {
	v := url.Values{}
	for i := 0; i+1 < len(flags); i += 2 {
		v.Add(strings.TrimPrefix(flags[i], "--"), flags[i+1])
	}
	return v.Encode()
}

// junitOf lists a JUnit file's cases, one a line: the rule, and the
// failure's message if it failed.
func junitOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out strings.Builder
	for _, c := range doc.Cases {
		out.WriteString(c.Name)
		if c.Failure != nil {
			out.WriteString(": " + c.Failure.Message)
		}
		out.WriteString("\n")
	}
	return out.String()
}

// upload posts the trace at path as a raw body named path.
func (s *testService) upload(t *testing.T, path string) (int, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s.do(t, "POST", "/api/v1/traces?name="+url.QueryEscape(path), "", bytes.NewReader(data))
}

// uploadJob posts every trace in dir in one multipart form named dir.
func (s *testService) uploadJob(t *testing.T, dir string) (int, []byte) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fw, err := mw.CreateFormFile("file", filepath.Base(p))
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	return s.do(t, "POST", "/api/v1/traces?name="+url.QueryEscape(dir), mw.FormDataContentType(), &body)
}

// get returns the body of a 200 answer to GET path.
func (s *testService) get(t *testing.T, path string) string {
	t.Helper()
	code, body := s.do(t, "GET", path, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return string(body)
}

func (s *testService) do(t *testing.T, method, path, ctype string, body io.Reader) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func idOf(t *testing.T, body []byte) string {
	t.Helper()
	var a struct{ ID string }
	if err := json.Unmarshal(body, &a); err != nil || a.ID == "" {
		t.Fatalf("upload answer %s: no id (%v)", body, err)
	}
	return a.ID
}

func errorOf(t *testing.T, body []byte) string {
	t.Helper()
	var a struct{ Error string }
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("error answer %s: %v", body, err)
	}
	return a.Error
}

// TestServeConfig: --config gives the check endpoint its default rules
// ([check]) and the analysis the settings ([analysis]) its flags left
// alone.
func TestServeConfig(t *testing.T) {
	path := writeConfig(t, "[check]\nfail_on = [\"host-bound\"]\nmax_idle = \"10%\"\n[analysis]\nmin_gap = \"50us\"\ntop = 3\n")
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f := addServeFlags(fs)
	if err := fs.Parse([]string{"--data-dir", t.TempDir(), "--config", path, "--top", "7"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.serveConfig(fs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := check.Rules{FailOn: []analyze.Verdict{analyze.HostBound}, MaxIdle: check.Limit{Share: 0.1, On: true}}
	if !reflect.DeepEqual(*cfg.Rules, want) || f.analysis.minGap != 50_000 || f.analysis.top != 7 {
		t.Errorf("rules %+v, min-gap %d, top %d; want %+v, the file's 50us and the flag's 7", *cfg.Rules, f.analysis.minGap, f.analysis.top, want)
	}
	fs = pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f = addServeFlags(fs)
	fs.Parse([]string{"--config", writeConfig(t, "[check]\nmax_idle = \"lots\"\n")})
	if _, err := f.serveConfig(fs, io.Discard); err == nil || !strings.Contains(err.Error(), `max_idle: invalid percentage "lots"`) {
		t.Errorf("bad config: %v, want the bad key named", err)
	}
}

// sharedStoreFlags returns --database and --blobs flags naming a new
// PostgreSQL database and a new directory in an S3 bucket, on real servers
// (internal/testservers), and sets the AWS environment for the test.
func sharedStoreFlags(t *testing.T) []string {
	t.Helper()
	database, blobs := testservers.Storage(t)
	return []string{"--database", database, "--blobs", blobs}
}

// TestCheckStore runs serve --check-store on a data directory: consistent
// after an upload, then with a blob no record holds and with a record's
// blob gone, each named on a line of its own, and on stores it cannot
// open.
func TestCheckStore(t *testing.T) {
	dir := t.TempDir()
	analyze := func(context.Context, serve.Upload) (serve.Reports, error) {
		return serve.Reports{Verdict: "parallel", Confidence: "high", Format: "chrome", JSON: []byte(`{}`)}, nil
	}
	upload := func(t *testing.T, s *serve.Server) {
		t.Helper()
		hs := httptest.NewServer(s.Handler())
		defer hs.Close()
		resp, err := http.Post(hs.URL+"/api/v1/traces?name=a", "application/json", strings.NewReader(`{"traceEvents":[]}`))
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("upload: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	s, err := serve.New(serve.Config{DataDir: dir, Analyze: analyze})
	if err != nil {
		t.Fatal(err)
	}
	upload(t, s)
	s.Close()
	stored := fmt.Sprintf("%x", sha256.Sum256([]byte(`{"traceEvents":[]}`)))

	check := func(want int, wantOut, wantErr string, args ...string) {
		t.Helper()
		code, stdout, stderr := runCmd(append([]string{"serve", "--check-store"}, args...)...)
		if code != want || stdout != wantOut || !strings.Contains(stderr, wantErr) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("serve --check-store %q = %d, %q, %q; want %d, %q and one line with %q", args, code, stdout, stderr, want, wantOut, wantErr)
		}
	}
	check(0, "", "the store is consistent", "--data-dir", dir)

	orphan := strings.Repeat("ab", 32)
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "ab"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "blobs", "ab", orphan), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "blobs", stored[:2], stored)); err != nil {
		t.Fatal(err)
	}
	check(1, "blob "+orphan+" is held by no record\nblob "+stored+" is missing: a record holds it\n", "not consistent: 2 problems", "--data-dir", dir)
	check(2, "", "expected a postgres:// URL", "--data-dir", dir, "--database", "mysql://u:secret@h/db")
	empty := t.TempDir()
	check(2, "", "no database "+filepath.Join(empty, "tracegap.db")+": expected the data directory", "--data-dir", empty)
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("checking an empty directory wrote %d files in it", len(left))
	}
	check(2, "", "expected a gs://, s3://, azblob:// or file:// URL", "--data-dir", dir, "--blobs", "/srv/blobs")
	if _, _, stderr := runCmd("serve", "--check-store", "--data-dir", dir, "--database", "mysql://u:secret@h/db"); strings.Contains(stderr, "secret") {
		t.Errorf("a database URL's password in a message: %s", stderr)
	}

	t.Run("shared", func(t *testing.T) {
		store := append([]string{"--data-dir", t.TempDir()}, sharedStoreFlags(t)...)
		check(2, "", "no tracegap schema found", store...)
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f := addServeFlags(fs)
		if err := fs.Parse(store); err != nil {
			t.Fatal(err)
		}
		cfg := serve.Config{DataDir: f.dataDir, Database: f.database, Blobs: f.blobs, Analyze: analyze}
		s, err := serve.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		upload(t, s)
		s.Close()
		check(0, "", "the store is consistent", store...)
	})
}
