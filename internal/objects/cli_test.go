package objects_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/cli"
	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/realtraces"
)

// tracegap runs the command line and returns its exit status and output.
func tracegap(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cli.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// jobDir is the real eight-rank job the tests read from a bucket.
const jobDir = "param-dlrm-8ranks"

// sameReport runs args with local (a path) and then with remote (the URL
// of the same files) in its place, and checks the two reports are the
// same byte for byte once the local path reads as the URL.
func sameReport(t *testing.T, local, remote string, args ...string) {
	t.Helper()
	run := func(in string) (int, string, string) {
		return tracegap(append(slices.Clone(args), in)...)
	}
	lc, lout, lerr := run(local)
	rc, rout, rerr := run(remote)
	if lc != 0 || rc != 0 {
		t.Fatalf("%v: exit %d (%s) for the files, %d (%s) for the URL", args, lc, lerr, rc, rerr)
	}
	want := strings.ReplaceAll(lout, strings.TrimSuffix(local, "/"), strings.TrimSuffix(remote, "/"))
	if rout != want {
		t.Errorf("%v %s differs from the same files on disk: %s", args, remote, firstDiff(rout, want))
	}
	if args[0] == "analyze" && !slices.Contains(args, "markdown") && !strings.Contains(rout, strings.TrimSuffix(remote, "/")) {
		t.Errorf("%v %s: the report does not name the URL", args, remote)
	}
}

func clip(s string) string { return s[:min(len(s), 3000)] }

// firstDiff returns the first line where got and want differ, each.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n  got:  %s\n  want: %s", i+1, clip(g[i]), clip(w[i]))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// TestFileURLs reads through gocloud's file:// provider, which needs no
// server: a job's directory, one trace, and summaries written to and read
// from file:// URLs, each the same as the plain paths give.
func TestFileURLs(t *testing.T) {
	job := filepath.Join(realtraces.Dir(t), jobDir)
	one := realtraces.Path(t, "xprof-tpu-inference.xplane.pb")
	for _, format := range []string{"text", "json"} {
		sameReport(t, job+"/", "file://"+job+"/", "analyze", "--format", format)
	}
	sameReport(t, one, "file://"+one, "analyze")
	sameReport(t, one, "file://"+one, "gaps")

	out := t.TempDir()
	traces, err := filepath.Glob(filepath.Join(job, "*.pt.trace.json.gz"))
	if err != nil || len(traces) != 8 {
		t.Fatalf("the job's traces: %v, %v", traces, err)
	}
	for i, tr := range traces {
		name := filepath.Join(out, "summaries", "rank-"+string(rune('0'+i))+".summary.json.gz")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := tracegap("summarize", "file://"+tr, "-o", "file://"+name); code != 0 {
			t.Fatalf("summarize to a file:// URL: exit %d: %s", code, stderr)
		}
	}
	code, viaURL, stderr := tracegap("analyze", "file://"+out+"/summaries/")
	if code != 0 {
		t.Fatalf("analyze file://.../summaries/: exit %d: %s", code, stderr)
	}
	_, direct, _ := tracegap("analyze", job)
	if strings.Count(viaURL, "\n") < 10 || firstVerdict(viaURL) != firstVerdict(direct) {
		t.Errorf("the job from its summaries says %q, from its traces %q", firstVerdict(viaURL), firstVerdict(direct))
	}
}

// firstVerdict returns a text report's verdict line (its third).
func firstVerdict(report string) string {
	lines := strings.Split(report, "\n")
	if len(lines) < 3 {
		return ""
	}
	return lines[2]
}

// TestStoreJob analyses a job's directory in each real object store and
// checks each report equals that of the same files on disk.
func TestStoreJob(t *testing.T) {
	eachStore(t, func(t *testing.T, s store) {
		s.Bucket(t, "job-reports")
		local := linkDir(t, "job42", uploadDir(t, s, "job-reports", "job42/", filepath.Join(realtraces.Dir(t), jobDir)))
		url := s.url("job-reports", "job42")
		for _, format := range []string{"text", "json", "markdown", "html"} {
			sameReport(t, local, url+"/", "analyze", "--format", format)
		}
		sameReport(t, local, url, "check")
		if s.endpointInURL == nil {
			return
		}
		// The gocloud URL form, with the endpoint in the query rather
		// than the environment, reads the same.
		q, clear := s.endpointInURL(s.server)
		for _, k := range clear {
			t.Setenv(k, "")
		}
		objects.ForgetBuckets()
		code, out, stderr := tracegap("analyze", url+"/"+q)
		if code != 0 || !strings.Contains(out, url) {
			t.Errorf("analyze with the endpoint in the URL: exit %d, %s%s", code, clip(out), stderr)
		}
	})
}

// linkDir returns a directory called name whose files link to those of
// dir: the same files under the name the bucket gives them, which
// Markdown and HTML reports title a job with.
func linkDir(t *testing.T, name, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(out, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// uploadDir uploads the files of dir under prefix in bucket and returns
// dir.
func uploadDir(t *testing.T, s server, bucket, prefix, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		s.Upload(t, bucket, prefix+e.Name(), filepath.Join(dir, e.Name()))
	}
	return dir
}

// TestStoreObject reads single objects of each kind from each store:
// Kineto JSON gzipped, XPlane, and a TensorBoard run folder's layout.
func TestStoreObject(t *testing.T) {
	eachStore(t, testObject)
}

func testObject(t *testing.T, s store) {
	s.Bucket(t, "single")
	for _, name := range []string{"kineto-resnet50-workers0.pt.trace.json.gz", "xprof-tpu-inference.xplane.pb"} {
		local := realtraces.Path(t, name)
		s.Upload(t, "single", "runs/"+name, local)
		sameReport(t, local, s.url("single", "runs/"+name), "analyze")
		sameReport(t, local, s.url("single", "runs/"+name), "analyze", "--format", "json")
	}
	// A TensorBoard log directory: <logdir>/plugins/profile/<run>/.
	tb := t.TempDir()
	run := filepath.Join(tb, "logs", "plugins", "profile", "2024_01_02_03_04_05")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	trace := realtraces.Path(t, "xprof-tpu-inference.xplane.pb")
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "host.xplane.pb"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s.Upload(t, "single", "logs/plugins/profile/2024_01_02_03_04_05/host.xplane.pb", trace)
	sameReport(t, filepath.Join(tb, "logs"), s.url("single", "logs"), "analyze")
}

// TestStoreErrors checks that what cannot be read from each store is one
// line naming the URL and what was wrong, exit status 2.
func TestStoreErrors(t *testing.T) {
	eachStore(t, testErrors)
}

func testErrors(t *testing.T, s store) {
	s.Bucket(t, "errs")
	s.Upload(t, "errs", "job/rank0.pt.trace.json.gz", realtraces.Path(t, "kineto-resnet50-workers0.pt.trace.json.gz"))
	cases := []struct {
		name, url, want string
		refused         bool
	}{
		{"missing object", s.url("errs", "job/rank9.pt.trace.json.gz"), "not found", false},
		{"missing bucket", s.url("no-such-bucket", "job/rank0.pt.trace.json.gz"), "not found (no such bucket)", false},
		{"missing bucket, directory", s.url("no-such-bucket", "job/"), "not found (no such bucket)", false},
		{"refused credentials", s.url("errs", "job/rank0.pt.trace.json.gz"), "access denied", true},
		{"refused credentials, directory", s.url("errs", "job/"), "access denied", true},
	}
	refuse := func(t *testing.T) {
		if s.refuse == nil {
			t.Skip(s.noRefusal)
		}
		s.refuse(t, s.server)
		forgetBuckets(t)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.refused {
				refuse(t)
			}
			oneLine(t, c.url, c.want, "analyze", c.url)
			oneLine(t, c.url, c.want, "summarize", c.url, "-o", t.TempDir()+"/x.summary.json.gz")
		})
	}
	t.Run("refused credentials, write", func(t *testing.T) {
		refuse(t)
		url := s.url("errs", "out/report.json")
		oneLine(t, url, "access denied", "analyze", realtraces.Path(t, "xprof-tpu-inference.xplane.pb"), "-o", url)
	})
}

// oneLine runs args and checks they fail with exit status 2 and one line
// that names url and says want.
func oneLine(t *testing.T, url, want string, args ...string) {
	t.Helper()
	code, _, stderr := tracegap(args...)
	line := strings.TrimSuffix(stderr, "\n")
	if code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, url) || !strings.Contains(line, want) {
		t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %s and saying %q", args, code, stderr, url, want)
	}
}

// TestStoreTwoPhase runs a job's two phases from and to a bucket of each
// store: summarize each rank's trace to summaries/, then analyze
// summaries/, which must report as the same two phases on local files do.
func TestStoreTwoPhase(t *testing.T) {
	eachStore(t, testTwoPhase)
}

func testTwoPhase(t *testing.T, s store) {
	s.Bucket(t, "twophase")
	job := filepath.Join(realtraces.Dir(t), jobDir)
	uploadDir(t, s, "twophase", "job42/", job)
	traces, err := filepath.Glob(filepath.Join(job, "*.pt.trace.json.gz"))
	if err != nil || len(traces) != 8 {
		t.Fatalf("the job's traces: %v, %v", traces, err)
	}
	local := filepath.Join(t.TempDir(), "summaries")
	if err := os.Mkdir(local, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tr := range traces {
		base := strings.TrimSuffix(filepath.Base(tr), ".pt.trace.json.gz") + ".summary.json.gz"
		if code, _, stderr := tracegap("summarize", tr, "-o", filepath.Join(local, base)); code != 0 {
			t.Fatalf("summarize %s: exit %d: %s", tr, code, stderr)
		}
		url := s.url("twophase", "job42/"+filepath.Base(tr))
		if code, _, stderr := tracegap("summarize", url, "-o", s.url("twophase", "job42/summaries/"+base)); code != 0 {
			t.Fatalf("summarize %s: exit %d: %s", url, code, stderr)
		}
	}
	if keys := s.Keys(t, "twophase", "job42/summaries/"); len(keys) != 8 {
		t.Fatalf("summaries written: %v, want 8", keys)
	}
	for _, format := range []string{"text", "json"} {
		code, lout, lerr := tracegap("analyze", "--format", format, local+"/")
		rcode, rout, rerr := tracegap("analyze", "--format", format, s.url("twophase", "job42/summaries/"))
		if code != 0 || rcode != 0 {
			t.Fatalf("analyze summaries: exit %d (%s) locally, %d (%s) from the bucket", code, lerr, rcode, rerr)
		}
		want := strings.ReplaceAll(lout, local, s.url("twophase", "job42/summaries"))
		want = strings.ReplaceAll(want, job, s.url("twophase", "job42"))
		if rout != want {
			t.Errorf("analyze %s (%s) differs from the local two phases: %s", s.url("twophase", "job42/summaries/"), format, firstDiff(rout, want))
		}
	}
}

// TestStoreFailedRunWritesNothing checks that no object is written to
// each store for a run that fails: an input that cannot be read, one that
// holds no trace, and a write that fails part way through a multipart
// upload.
func TestStoreFailedRunWritesNothing(t *testing.T) {
	eachStore(t, testFailedRunWritesNothing)
}

func testFailedRunWritesNothing(t *testing.T, s store) {
	s.Bucket(t, "failed")
	bad := filepath.Join(t.TempDir(), "bad.pt.trace.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents": [{"ph": "X", "ts": `), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Upload(t, "failed", "in/bad.pt.trace.json", bad)
	for _, args := range [][]string{
		{"summarize", s.url("failed", "in/missing.pt.trace.json"), "-o", s.url("failed", "out/a.summary.json.gz")},
		{"summarize", s.url("failed", "in/bad.pt.trace.json"), "-o", s.url("failed", "out/b.summary.json.gz")},
		{"analyze", s.url("failed", "in/bad.pt.trace.json"), "-o", s.url("failed", "out/report.json")},
	} {
		if code, _, stderr := tracegap(args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
	err := objects.WriteFile(context.Background(), s.url("failed", "out/big.json"), func(w io.Writer) error {
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 12 { // past one part of a multipart upload
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return errors.New("the report could not be rendered")
	})
	if err == nil {
		t.Error("a failed write returned no error")
	}
	if keys := s.Keys(t, "failed", "out/"); len(keys) != 0 {
		t.Errorf("failed runs wrote %v", keys)
	}
	if code, _, stderr := tracegap("analyze", realtraces.Path(t, "xprof-tpu-inference.xplane.pb"), "-o", s.url("failed", "out/report.json")); code != 0 {
		t.Fatalf("analyze -o %s: exit %d: %s", s.url("failed", "out/report.json"), code, stderr)
	}
	if keys := s.Keys(t, "failed", "out/"); !slices.Equal(keys, []string{"out/report.json"}) {
		t.Errorf("a run that succeeded wrote %v, want out/report.json", keys)
	}
}

// TestHostileObjectNames checks that object names listed from a directory
// URL of each store reach the terminal escaped: names with a
// bidirectional override and a line separator, one holding no trace
// (skipped with a warning), one a trace. (S3 and Azure listings are XML,
// which cannot carry most control characters: a store lists those as
// U+FFFD.)
func TestHostileObjectNames(t *testing.T) {
	eachStore(t, testHostileNames)
}

func testHostileNames(t *testing.T, s store) {
	s.Bucket(t, "hostile")
	meta := filepath.Join(t.TempDir(), "metrics.json")
	if err := os.WriteFile(meta, []byte(`{"name": "metrics"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Upload(t, "hostile", "run/\u2028owned\u202e.json", meta)
	s.Upload(t, "hostile", "run/\u202ehost.xplane.pb", realtraces.Path(t, "xprof-tpu-inference.xplane.pb"))
	code, stdout, stderr := tracegap("analyze", s.url("hostile", "run/"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsAny(stdout+stderr, "\u2028\u202e") {
		t.Errorf("an object's name reached the terminal unescaped:\n%q\n%q", clip(stdout), stderr)
	}
	if !strings.Contains(stderr, "skipped") || !strings.Contains(stdout, "host.xplane.pb") {
		t.Errorf("want the trace analysed and the other object skipped with a warning:\n%s\n%s", clip(stdout), stderr)
	}
}

// TestNoCredentials checks that a gs:// or azblob:// URL read without
// credentials is one line saying so, exit status 2, and nothing on
// standard output (where gocloud would print a warning).
func TestNoCredentials(t *testing.T) {
	home := t.TempDir()
	for k, v := range map[string]string{
		"GOOGLE_APPLICATION_CREDENTIALS":  "",
		"CLOUDSDK_CONFIG":                 home,
		"HOME":                            home,
		"NO_GCE_CHECK":                    "True", // not the metadata server's service account either
		"STORAGE_EMULATOR_HOST":           "",
		"STORAGE_EMULATOR_HOST_GRPC":      "",
		"AZURE_STORAGE_ACCOUNT":           "",
		"AZURE_STORAGE_CONNECTION_STRING": "",
	} {
		t.Setenv(k, v)
	}
	objects.ForgetBuckets()
	for _, url := range []string{"gs://tracegap-test/run.xplane.pb", "azblob://tracegap-test/run/"} {
		code, stdout, stderr := tracegap("analyze", url)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, url+": no credentials") {
			t.Errorf("analyze %s: exit %d, stdout %q, stderr %q; want exit 2 and one line saying no credentials", url, code, stdout, stderr)
		}
	}
}
