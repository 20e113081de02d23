package advice

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/internal/trace/xplane"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// analyzed analyses and advises tr, read with error err, with the default
// options.
func analyzed(t *testing.T, tr *trace.Trace, err error) *analyze.Result {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(tr, analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// analyzeXPlane analyses and advises s written as XPlane and read back.
func analyzeXPlane(t *testing.T, s *tracetest.Spec) *analyze.Result {
	t.Helper()
	var buf bytes.Buffer
	if err := tracetest.WriteXPlane(&buf, s); err != nil {
		t.Fatal(err)
	}
	tr, err := xplane.Decode(buf.Bytes(), trace.Options{})
	return analyzed(t, tr, err)
}

// findingOf returns r's finding with id, nil when none.
func findingOf(r *analyze.Result, id string) *analyze.Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestVLLMEager checks that vLLM in eager mode, host-bound on a B200, is
// told to serve in graph mode.
func TestVLLMEager(t *testing.T) {
	tr, err := trace.Open(filepath.Join(realtraces.Dir(t), "tracelens-vllm-eager-b200.json.gz"), trace.Options{})
	res := analyzed(t, tr, err)
	if res.Framework != analyze.VLLM || res.Verdict != analyze.HostBound {
		t.Fatalf("framework %q, verdict %s; want vLLM, host-bound", res.Framework, res.Verdict)
	}
	if f := res.Findings[0]; f.ID != FindDispatch || !strings.Contains(f.Fix, "eager mode") || !strings.Contains(f.Fix, "enforce_eager=False") {
		t.Errorf("first finding %+v, want dispatch-overhead with graph mode (enforce_eager=False)", f)
	}
}

// TestUntracedFixFitsTrace: the untraced-thread finding's fix suggests the
// Python tracer only for a trace without Python frames (jax-k: the loop
// thread shows nothing while it loads); with a frame elsewhere in the
// trace, it suggests annotating the stretches, in the framework's terms.
func TestUntracedFixFitsTrace(t *testing.T) {
	for _, frames := range []bool{false, true} {
		s := tracetest.JAXProgram{Steps: 6, TPU: true, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, NoPythonTracer: true}.Spec()
		if frames {
			s.Threads = append(s.Threads, tracetest.Thread{TID: 30, Name: "logger"})
			s.Events = append(s.Events, tracetest.Event{Role: tracetest.Python, Name: "$logger.py:12 flush", Thread: 30, Start: 0, Dur: msec})
		}
		f := findingOf(analyzeXPlane(t, s), FindUntracedThread)
		if f == nil {
			t.Fatalf("frames %v: no untraced-thread finding", frames)
		}
		tracer := strings.Contains(f.Fix, "python_tracer_level")
		annotate := strings.Contains(f.Fix, "jax.profiler.TraceAnnotation")
		if tracer == frames || annotate != frames || strings.Contains(f.Fix, "torch") {
			t.Errorf("frames %v: fix %q", frames, f.Fix)
		}
	}
}
