package analyze

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// frameworkWords are words only one framework's advice uses. vLLM runs on
// PyTorch, so PyTorch's words are not foreign to it; tf.data is left out,
// as JAX programs load with it too.
var frameworkWords = map[Framework][]string{
	PyTorch:    {"pin_memory", ".item()", "with_stack", "DataLoader", "torch"},
	JAX:        {"jax", "lax.", "block_until_ready", "grain", "static_argnums", "MaxText"},
	TensorFlow: {"tf.function", "Keras", "tf.summary", "tf.profiler"},
	VLLM:       {"vLLM", "enforce_eager"},
}

// foreignWords returns the words a fix for f must not use: every other
// framework's, and CUDA graphs where the framework has none of its own.
func foreignWords(f Framework) []string {
	if f == UnknownFramework {
		return nil
	}
	var ws []string
	for g, words := range frameworkWords {
		if g != f && (f != VLLM || g != PyTorch) {
			ws = append(ws, words...)
		}
	}
	if f == JAX || f == TensorFlow {
		ws = append(ws, "CUDA graph")
	}
	return ws
}

// checkForeignAdvice fails when a finding of res gives another framework's
// advice.
func checkForeignAdvice(t *testing.T, res *Result) {
	t.Helper()
	for _, f := range res.Findings {
		for _, w := range foreignWords(res.Framework) {
			if strings.Contains(f.Message+" "+f.Fix, w) {
				t.Errorf("%s finding on a %s trace gives another framework's advice (%q): %s", f.ID, res.Framework, w, f.Fix)
			}
		}
	}
	for _, w := range foreignWords(res.Framework) {
		if strings.Contains(res.StackHint, w) {
			t.Errorf("the stack hint on a %s trace gives another framework's advice (%q): %s", res.Framework, w, res.StackHint)
		}
	}
}

// TestVLLMEager checks that vLLM in eager mode, host-bound on a B200, is
// told to serve in graph mode.
func TestVLLMEager(t *testing.T) {
	tr, err := trace.Open(filepath.Join(realtraces.Dir(t), "tracelens-vllm-eager-b200.json.gz"), trace.Options{})
	res := analysisOf(t, tr, err).Result()
	if res.Framework != VLLM || res.Verdict != HostBound {
		t.Fatalf("framework %q, verdict %s; want vLLM, host-bound", res.Framework, res.Verdict)
	}
	if f := res.Findings[0]; f.ID != "dispatch-overhead" || !strings.Contains(f.Fix, "eager mode") || !strings.Contains(f.Fix, "enforce_eager=False") {
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
		f := findingOf(analyzeXPlane(t, s).Result(), "untraced-thread")
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

// TestStackHintFrameworks checks the stack hint in each framework's terms:
// its own words, never another framework's (the fixes' are advice's).
func TestStackHintFrameworks(t *testing.T) {
	for f, want := range map[Framework]string{PyTorch: "with_stack=True", JAX: "jax.profiler.start_trace", TensorFlow: "tf.profiler.experimental.start"} {
		a := &analyzer{t: &trace.Trace{}, res: &Result{Framework: f}}
		got := a.stackHint(false)
		if !strings.Contains(got, want) {
			t.Errorf("%s stack hint %q lacks %q", f, got, want)
		}
		for _, w := range foreignWords(f) {
			if strings.Contains(got, w) {
				t.Errorf("%s stack hint uses %q: %s", f, w, got)
			}
		}
	}
}
