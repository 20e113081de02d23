package nsight_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

const msec = 1_000_000

// crossLoops are loops of the analysis's scenarios, one per verdict and
// cause: each is written as Kineto JSON, XPlane and an Nsight export.
var crossLoops = []struct {
	name string
	loop tracetest.Loop
}{
	{"sync then short input", tracetest.Loop{Steps: 6, Input: 3 * msec, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true}},
	{"input longer than compute", tracetest.Loop{Steps: 6, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec}},
	{"sync exposes long input", tracetest.Loop{Steps: 6, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true}},
	{"worker loader", tracetest.Loop{Steps: 6, Input: 500_000, InputName: tracetest.MultiProcessLoader, Dispatch: 1 * msec, Compute: 10 * msec}},
	{"dispatch bound", tracetest.Loop{Steps: 6, Dispatch: 200_000, Kernels: 10, Compute: 50_000}},
	{"no step markers", tracetest.Loop{Steps: 6, NoStepMarkers: true, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec}},
	{"two devices with skew", tracetest.Loop{Steps: 6, Input: 3 * msec, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true, Devices: 2, Skew: 4 * msec}},
	{"backward thread", tracetest.Loop{Steps: 6, Input: 6 * msec, Dispatch: 1 * msec, Kernels: 3, Compute: 2 * msec, Backward: true}},
	{"pageable copy", tracetest.Loop{Steps: 6, Input: 3 * msec, InputName: "## sparse_data_dist ##", PageableCopy: 1 * msec, Dispatch: 1 * msec, Compute: 10 * msec}},
	{"optimizer before sync", tracetest.Loop{Steps: 6, Input: 8 * msec, InputName: tracetest.MultiProcessLoader, Dispatch: 1 * msec, Compute: 10 * msec, Optimizer: 11 * msec, Sync: true}},
}

// crossJAX are JAX programs on a GPU, as the analysis's JAX scenarios
// generate them: their rules read the same names from an export (XLA
// writes its TraceMe annotations as NVTX ranges under nsys).
var crossJAX = []struct {
	name string
	spec func() *tracetest.Spec
}{
	{"jax block until ready", tracetest.JAXLoop{Steps: 6, Dispatch: 1 * msec, Kernels: 2, Compute: 5 * msec, Block: true, Host: 2 * msec}.Spec},
	{"jax input and print", tracetest.JAXProgram{Steps: 6, Load: 3 * msec, Dispatch: msec, Compute: 10 * msec, Print: true}.Spec},
	{"jax dispatch ahead", tracetest.JAXProgram{Steps: 6, Dispatch: msec, Compute: 10 * msec, Depth: 2}.Spec},
	{"jax fetch", tracetest.JAXProgram{Steps: 6, Load: 1 * msec, Dispatch: msec, Compute: 10 * msec, Fetch: 2 * msec}.Spec},
}

// crossWriters write a spec in each format.
var crossWriters = []struct {
	format string
	write  func(io.Writer, *tracetest.Spec) error
}{
	{"chrome", tracetest.WriteChrome},
	{"xplane", tracetest.WriteXPlane},
	{"nsight", tracetest.WriteNsight},
}

// TestSameVerdictEveryFormat: one generated loop gives the same verdict,
// and the same idle split within one point of the window, read from Kineto
// JSON, XPlane or an Nsight Systems export.
func TestSameVerdictEveryFormat(t *testing.T) {
	for _, l := range crossSpecs() {
		t.Run(l.name, func(t *testing.T) {
			var base *analyze.Result
			for _, w := range crossWriters {
				res := analyzeAs(t, l.spec(), w.format, w.write)
				if base == nil {
					base = res
					continue
				}
				if res.Verdict != base.Verdict || res.Framework != base.Framework {
					t.Errorf("%s: verdict %s of %s, chrome %s of %s", w.format, res.Verdict, res.Framework, base.Verdict, base.Framework)
				}
				for c := range analyze.NumCauses {
					got, want := share(res, c), share(base, c)
					if math.Abs(got-want) > 1 {
						t.Errorf("%s: %s %.2f%% of the window, chrome %.2f%%", w.format, c, got, want)
					}
				}
			}
		})
	}
}

// crossSpecs are the loops and the JAX programs, each a name and what
// makes its spec.
func crossSpecs() []struct {
	name string
	spec func() *tracetest.Spec
} {
	specs := slices.Clone(crossJAX)
	for _, l := range crossLoops {
		specs = append(specs, struct {
			name string
			spec func() *tracetest.Spec
		}{l.name, l.loop.Spec})
	}
	return specs
}

// share returns the percentage of the window's device time that cause c
// took.
func share(r *analyze.Result, c analyze.Cause) float64 {
	if r.Window.Dur() <= 0 {
		return 0
	}
	return 100 * float64(r.Idle.Of(c)) / float64(r.Window.Dur())
}

// analyzeAs writes s in a format, reads it back and analyses it.
func analyzeAs(t *testing.T, s *tracetest.Spec, format string, write func(io.Writer, *tracetest.Spec) error) *analyze.Result {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf, s); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	tr, err := trace.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), trace.Options{})
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	if tr.Format != format {
		t.Fatalf("read as %s, want %s", tr.Format, format)
	}
	res, err := advice.Analyze(tr, analyze.DefaultOptions())
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return res
}

// TestCrossFigures logs each format's verdict and idle split, the figures
// TestSameVerdictEveryFormat compares; run with -v.
func TestCrossFigures(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("figures only: run with -v")
	}
	for _, l := range crossSpecs() {
		line := l.name
		for _, w := range crossWriters {
			res := analyzeAs(t, l.spec(), w.format, w.write)
			line += fmt.Sprintf(" | %s %s", w.format, res.Verdict)
			for c := range analyze.NumCauses {
				if v := share(res, c); v > 0 {
					line += fmt.Sprintf(" %s %.1f%%", c, v)
				}
			}
		}
		t.Log(line)
	}
}
