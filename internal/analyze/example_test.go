package analyze

import (
	"bytes"
	"compress/gzip"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

var update = flag.Bool("update", false, "rewrite testdata/example.pt.trace.json.gz")

// exampleLoop is the loop of the README's example trace: six steps of a
// single-process DataLoader taking 60 ms against 45 ms of kernels (30
// kernels of 1.5 ms, each launched by a 100 us op). The host step is 63 ms
// and the kernels queue behind each other, so each step leaves one 18 ms
// gap: 17.9 ms of it inside the loader, 0.1 ms in the op that launches the
// step's first kernel.
var exampleLoop = tracetest.Loop{Steps: 6, Input: 60 * msec, Dispatch: 100 * usec, Kernels: 30, Compute: 1500 * usec}

func TestExample(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := tracetest.WriteChrome(zw, exampleLoop.Spec()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/analyze -run TestExample -update)", err)
	}
	if !bytes.Equal(old, buf.Bytes()) {
		t.Errorf("%s is out of date: run go test ./internal/analyze -run TestExample -update", path)
	}
	tr, err := trace.Open(path, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := analyzeAdvised(tr, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := Breakdown{ByCause: [NumCauses]int64{Input: 5 * 17900 * usec, Host: 5 * 100 * usec}}
	if res.Verdict != DataBound || res.Confidence != High || res.Idle != want {
		t.Errorf("verdict %s (%s), idle %+v; want data-bound (high), idle %+v", res.Verdict, res.Confidence, res.Idle, want)
	}
	// The window runs from the warm-up step's kernel's end (105.1 ms),
	// when the device is ready for the first kept step, to the last
	// kernel's end: five steps of 63 ms.
	if got := (Interval{res.Window.Start, res.Window.End}); got != (Interval{105100 * usec, 420100 * usec}) {
		t.Errorf("window %v, want [105.1 ms, 420.1 ms)", got)
	}
	// A typical step loads for 60 ms against 45 ms of kernels:
	// ceil(60 / 45) + 1 = 3 workers.
	if len(res.Findings) == 0 || res.Findings[0].ID != "slow-input" {
		t.Fatalf("findings %+v, want slow-input first", res.Findings)
	}
	f := res.Findings[0]
	for _, want := range []string{"The single-process DataLoader (" + tracetest.SingleProcessLoader + ") takes 60.0 ms per step", "against 45.0 ms of GPU work per step"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	if want := "DataLoader(num_workers=3,"; !strings.Contains(f.Fix, want) {
		t.Errorf("fix %q lacks %q", f.Fix, want)
	}
}
