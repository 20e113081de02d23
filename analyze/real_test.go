package analyze

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/chrome"
	_ "github.com/tracegap/tracegap/trace/xplane"
)

// sharedTraces returns the directory of the real traces, ../shared/traces
// from the module root, skipping the test when it is not there.
func sharedTraces(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	traces := filepath.Join(dir, "..", "shared", "traces")
	if _, err := os.Stat(filepath.Join(traces, "expected.tsv")); err != nil {
		t.Skipf("real traces not available: %v", err)
	}
	return traces
}

// TestRealTraces checks the verdict on every trace listed in expected.tsv
// against the experts' (one of them where several are listed; "error" means
// reading or analysing must fail).
func TestRealTraces(t *testing.T) {
	dir := sharedTraces(t)
	f, err := os.Open(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	header := true
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if header || len(fields) < 2 {
			header = false
			continue
		}
		name, want := fields[0], strings.Split(fields[1], "|")
		t.Run(name, func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, name), trace.Options{})
			var res *Result
			if err == nil {
				res, err = Analyze(tr, DefaultOptions())
			}
			if slices.Contains(want, "error") {
				if err == nil {
					t.Errorf("got verdict %s, want an error", res.Verdict)
				} else if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans several lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(want, string(res.Verdict)) {
				t.Errorf("verdict %s (%s), want %s; idle %+v; reasons %q", res.Verdict, res.Confidence, fields[1], res.Idle, res.Reasons)
			}
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
