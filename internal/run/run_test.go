package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/run/runtest"
	_ "github.com/tracegap/tracegap/trace/all"
)

// example is the small data-bound trace the project ships.
const example = "../../testdata/example.pt.trace.json.gz"

// writeFile writes data to name in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEach checks the fan-out: every index once, and at most jobs at once,
// with jobs reached (the first calls wait until that many run together).
func TestEach(t *testing.T) {
	const n, jobs = 10, 3
	var running, most atomic.Int64
	var seen [n]atomic.Int64
	var full sync.WaitGroup // the first jobs calls
	full.Add(jobs)
	each(n, jobs, func(i int) {
		cur := running.Add(1)
		defer running.Add(-1)
		for old := most.Load(); cur > old && !most.CompareAndSwap(old, cur); old = most.Load() {
		}
		seen[i].Add(1)
		if i < jobs {
			full.Done()
			full.Wait()
		}
	})
	if most.Load() != jobs {
		t.Errorf("at most %d calls ran at once, want %d", most.Load(), jobs)
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Errorf("f(%d) called %d times, want 1", i, c)
		}
	}
}

// TestAnalyzeArgs analyses a directory, a panicking input, garbage and a
// missing file together: outcomes in argument order, each input's failure
// its own.
func TestAnalyzeArgs(t *testing.T) {
	dir := t.TempDir()
	good := readFile(t, example)
	traces := filepath.Join(dir, "traces")
	os.Mkdir(traces, 0o755)
	a := writeFile(t, traces, "a.pt.trace.json.gz", good)
	b := writeFile(t, traces, "b.pt.trace.json.gz", good)
	bug := writeFile(t, dir, "bug.json", []byte(runtest.PanicMagic))
	junk := writeFile(t, dir, "junk.json", []byte("not a trace\n"))
	missing := filepath.Join(dir, "missing.json")

	e := &Engine{Analysis: analyze.DefaultOptions(), Jobs: 2}
	out := e.AnalyzeArgs(context.Background(), []string{bug, traces, junk, missing})
	var paths []string
	for _, o := range out {
		paths = append(paths, o.Path)
	}
	if want := []string{bug, a, b, junk, missing}; !slices.Equal(paths, want) {
		t.Fatalf("outcomes for %q, want %q", paths, want)
	}
	for _, o := range out[1:3] {
		if o.Err != nil || o.Result.Verdict != analyze.DataBound || o.Result.Source.Path != o.Path {
			t.Errorf("%s: %v, %+v; want data-bound, named by its path", o.Path, o.Err, o.Result)
		}
	}
	var pe *PanicError
	if err := out[0].Err; !errors.As(err, &pe) || err.Error() != bug+": internal error while analysing: "+runtest.PanicValue || len(pe.Stack) == 0 {
		t.Errorf("panicking input: %v, want a PanicError with a stack naming %s", err, bug)
	}
	if err := out[3].Err; err == nil || !strings.HasPrefix(err.Error(), junk+": unrecognised format") {
		t.Errorf("garbage: %v, want an unrecognised format named by the file", err)
	}
	if err := out[4].Err; !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want not found", err)
	}
}

// TestAnalyzeStream reads an input from a reader under its display name,
// and stops reading when the context is cancelled.
func TestAnalyzeStream(t *testing.T) {
	data := readFile(t, example)
	e := &Engine{Analysis: analyze.DefaultOptions()}
	res, err := e.Analyze(context.Background(), Input{R: bytes.NewReader(data), Size: int64(len(data)), Name: "upload"})
	if err != nil || res.Source.Path != "upload" || res.Verdict != analyze.DataBound {
		t.Fatalf("stream: %v, %+v; want data-bound named upload", err, res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.Analyze(ctx, Input{R: bytes.NewReader(data), Name: "upload"})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "upload: ") {
		t.Errorf("cancelled: %v, want context.Canceled naming upload", err)
	}
}

// TestNamed checks that an input is named once in its error.
func TestNamed(t *testing.T) {
	for _, tc := range []struct{ name, err, want string }{
		{"a.json", "empty file", "a.json: empty file"},
		{"a.json", "a.json: empty file", "a.json: empty file"},
		{"a.json", "a.json.gz: empty file", "a.json: a.json.gz: empty file"},
	} {
		if got := Named(tc.name, errors.New(tc.err)).Error(); got != tc.want {
			t.Errorf("Named(%q, %q) = %q, want %q", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestNoEvents: a trace without any event is unusable input, one error
// naming the file; a trace with host events only is analysed (no-device).
func TestNoEvents(t *testing.T) {
	dir := t.TempDir()
	for _, text := range []string{`[]`, `{"traceEvents":[]}`, `{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}}]}`} {
		p := filepath.Join(dir, "empty.json")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		o := (&Engine{Analysis: analyze.DefaultOptions()}).AnalyzeFiles(context.Background(), []string{p})[0]
		if !errors.Is(o.Err, ErrNoEvents) || !strings.HasPrefix(o.Err.Error(), p+": the trace holds no events at all") {
			t.Errorf("%s: %v, want the file named and ErrNoEvents", text, o.Err)
		}
	}
	host := filepath.Join(dir, "host.json")
	os.WriteFile(host, []byte(`{"traceEvents":[{"ph":"X","name":"step","pid":1,"tid":1,"ts":0,"dur":10}]}`), 0o644)
	o := (&Engine{Analysis: analyze.DefaultOptions()}).AnalyzeFiles(context.Background(), []string{host})[0]
	if o.Err != nil || o.Result.Verdict != analyze.NoDevice {
		t.Errorf("a host-only trace: %v, %v; want no-device", o.Err, o.Result)
	}
}

// TestUnreadURL: an http(s):// argument is said to be a URL tracegap does
// not read, naming those it does, not "no such file or directory".
func TestUnreadURL(t *testing.T) {
	for _, u := range []string{"http://example.com/run.json", "HTTPS://example.com/a.xplane.pb"} {
		o := (&Engine{Analysis: analyze.DefaultOptions()}).AnalyzeArgs(context.Background(), []string{u})[0]
		want := u + ": " + strings.ToLower(u[:strings.Index(u, ":")]) + ":// URLs are not read: download the file first, or give a URL of gs://, s3://, azblob:// or file://"
		if o.Err == nil || o.Err.Error() != want {
			t.Errorf("%s: %v, want %q", u, o.Err, want)
		}
	}
}
