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
	"github.com/tracegap/tracegap/internal/testservers"
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

// TestS3Job analyses a job's directory in a real S3-compatible store and
// checks each report equals that of the same files on disk.
func TestS3Job(t *testing.T) {
	s := needS3(t)
	s.Bucket(t, "job-reports")
	local := linkDir(t, "job42", uploadDir(t, s, "job-reports", "job42/", filepath.Join(realtraces.Dir(t), jobDir)))
	for _, format := range []string{"text", "json", "markdown", "html"} {
		sameReport(t, local, "s3://job-reports/job42/", "analyze", "--format", format)
	}
	sameReport(t, local, "s3://job-reports/job42", "check")
	// The gocloud URL form, with the endpoint in the query rather than
	// the environment, reads the same.
	q := "?endpoint=" + s.Endpoint + "&region=" + testservers.S3Region + "&use_path_style=true"
	t.Setenv("AWS_ENDPOINT_URL", "")
	code, out, stderr := tracegap("analyze", "s3://job-reports/job42/"+q)
	if code != 0 || !strings.Contains(out, "s3://job-reports/job42") {
		t.Errorf("analyze with the endpoint in the URL: exit %d, %s%s", code, clip(out), stderr)
	}
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
func uploadDir(t *testing.T, s *testservers.S3Server, bucket, prefix, dir string) string {
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

// TestS3Object reads single objects of each kind: Kineto JSON gzipped,
// XPlane, and a TensorBoard run folder's layout.
func TestS3Object(t *testing.T) {
	s := needS3(t)
	s.Bucket(t, "single")
	for _, name := range []string{"kineto-resnet50-workers0.pt.trace.json.gz", "xprof-tpu-inference.xplane.pb"} {
		local := realtraces.Path(t, name)
		s.Upload(t, "single", "runs/"+name, local)
		sameReport(t, local, "s3://single/runs/"+name, "analyze")
		sameReport(t, local, "s3://single/runs/"+name, "analyze", "--format", "json")
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
	sameReport(t, filepath.Join(tb, "logs"), "s3://single/logs", "analyze")
}

// TestS3Errors checks that what cannot be read is one line naming the URL
// and what was wrong, exit status 2.
func TestS3Errors(t *testing.T) {
	s := needS3(t)
	s.Bucket(t, "errs")
	s.Upload(t, "errs", "job/rank0.pt.trace.json.gz", realtraces.Path(t, "kineto-resnet50-workers0.pt.trace.json.gz"))
	cases := []struct {
		name, url, want string
		badKey          bool
	}{
		{"missing object", "s3://errs/job/rank9.pt.trace.json.gz", "not found", false},
		{"missing bucket", "s3://no-such-bucket/job/rank0.pt.trace.json.gz", "not found", false},
		{"missing bucket, directory", "s3://no-such-bucket/job/", "not found", false},
		{"refused credentials", "s3://errs/job/rank0.pt.trace.json.gz", "access denied", true},
		{"refused credentials, directory", "s3://errs/job/", "access denied", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.badKey {
				useS3(t, s.Endpoint, testservers.S3AccessKey, "not-the-secret")
			}
			for _, cmd := range []string{"analyze", "summarize"} {
				args := []string{cmd, c.url}
				if cmd == "summarize" {
					args = append(args, "-o", t.TempDir()+"/x.summary.json.gz")
				}
				code, _, stderr := tracegap(args...)
				line := strings.TrimSuffix(stderr, "\n")
				if code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, c.url) || !strings.Contains(line, c.want) {
					t.Errorf("%s %s: exit %d, stderr %q; want exit 2 and one line naming the URL and saying %q", cmd, c.url, code, stderr, c.want)
				}
			}
		})
	}
}

// TestS3TwoPhase runs a job's two phases from and to the bucket:
// summarize each rank's trace to summaries/, then analyze summaries/,
// which must report as the same two phases on local files do.
func TestS3TwoPhase(t *testing.T) {
	s := needS3(t)
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
		url := "s3://twophase/job42/" + filepath.Base(tr)
		if code, _, stderr := tracegap("summarize", url, "-o", "s3://twophase/job42/summaries/"+base); code != 0 {
			t.Fatalf("summarize %s: exit %d: %s", url, code, stderr)
		}
	}
	if keys := s.Keys(t, "twophase", "job42/summaries/"); len(keys) != 8 {
		t.Fatalf("summaries written: %v, want 8", keys)
	}
	for _, format := range []string{"text", "json"} {
		code, lout, lerr := tracegap("analyze", "--format", format, local+"/")
		rcode, rout, rerr := tracegap("analyze", "--format", format, "s3://twophase/job42/summaries/")
		if code != 0 || rcode != 0 {
			t.Fatalf("analyze summaries: exit %d (%s) locally, %d (%s) from the bucket", code, lerr, rcode, rerr)
		}
		want := strings.ReplaceAll(lout, local, "s3://twophase/job42/summaries")
		want = strings.ReplaceAll(want, job, "s3://twophase/job42")
		if rout != want {
			t.Errorf("analyze s3://.../summaries/ (%s) differs from the local two phases: %s", format, firstDiff(rout, want))
		}
	}
}

// TestS3FailedRunWritesNothing checks that no object is written for a run
// that fails: an input that cannot be read, one that holds no trace, and
// a write that fails part way through a multipart upload.
func TestS3FailedRunWritesNothing(t *testing.T) {
	s := needS3(t)
	s.Bucket(t, "failed")
	bad := filepath.Join(t.TempDir(), "bad.pt.trace.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents": [{"ph": "X", "ts": `), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Upload(t, "failed", "in/bad.pt.trace.json", bad)
	for _, args := range [][]string{
		{"summarize", "s3://failed/in/missing.pt.trace.json", "-o", "s3://failed/out/a.summary.json.gz"},
		{"summarize", "s3://failed/in/bad.pt.trace.json", "-o", "s3://failed/out/b.summary.json.gz"},
		{"analyze", "s3://failed/in/bad.pt.trace.json", "-o", "s3://failed/out/report.json"},
	} {
		if code, _, stderr := tracegap(args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
	err := objects.WriteFile(context.Background(), "s3://failed/out/big.json", func(w io.Writer) error {
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
	if code, _, stderr := tracegap("analyze", realtraces.Path(t, "xprof-tpu-inference.xplane.pb"), "-o", "s3://failed/out/report.json"); code != 0 {
		t.Fatalf("analyze -o s3://...: exit %d: %s", code, stderr)
	}
	if keys := s.Keys(t, "failed", "out/"); !slices.Equal(keys, []string{"out/report.json"}) {
		t.Errorf("a run that succeeded wrote %v, want out/report.json", keys)
	}
}

// TestHostileObjectNames checks that object names listed from a directory
// URL reach the terminal escaped: names with a bidirectional override and
// a line separator, one holding no trace (skipped with a warning), one a
// trace. (S3 listings are XML, which cannot carry most control
// characters: a store lists those as U+FFFD.)
func TestHostileObjectNames(t *testing.T) {
	s := needS3(t)
	s.Bucket(t, "hostile")
	meta := filepath.Join(t.TempDir(), "metrics.json")
	if err := os.WriteFile(meta, []byte(`{"name": "metrics"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Upload(t, "hostile", "run/\u2028owned\u202e.json", meta)
	s.Upload(t, "hostile", "run/\u202ehost.xplane.pb", realtraces.Path(t, "xprof-tpu-inference.xplane.pb"))
	code, stdout, stderr := tracegap("analyze", "s3://hostile/run/")
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
