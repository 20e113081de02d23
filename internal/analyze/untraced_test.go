package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestUntracedBetween: a JAX loop profiled without the Python tracer loads
// each batch for 20 ms in Python the profile does not show, between one
// step's call (PjitFunction(train_step), returning once its 10 ms of work
// is queued) and the next. The untraced-thread finding says where the
// longest such stretch lies: the 20 ms of loading less the 10.01 ms the
// device still ran the previous step's work (queued 10 us after the call
// returned), after that call returned and before the next began (its
// PjitFunction and the Execute inside it start together; the gap goes on
// through the 1 ms call, which is host work).
func TestUntracedBetween(t *testing.T) {
	for _, tpu := range []bool{false, true} {
		r := analyzeAsXPlane(t, tracetest.JAXProgram{Steps: 6, TPU: tpu, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, NoPythonTracer: true}.Spec())
		f := findingOf(r, "untraced-thread")
		want := "The longest stretch, 9.99 ms of a 11.0 ms gap on "
		if f == nil || !strings.Contains(f.Message, want) || !strings.Contains(f.Message, "falls after PjitFunction(train_step) returned and before ") {
			t.Errorf("TPU %v: untraced-thread finding %+v; want it to say %q and between which calls", tpu, f, want)
		}
	}
}

// TestDeepStacks: a thread nested 300 or 3,000 frames deep around 50
// gaps gives the same figures (the stack is walked on from gap to gap,
// not rebuilt), and the deeper one says that only the innermost levels
// are looked through for call sites.
func TestDeepStacks(t *testing.T) {
	shallow := analyzeSpec(t, tracetest.DeepStack(maxWalk-10, 50))
	deep := analyzeSpec(t, tracetest.DeepStack(3000, 50))
	if shallow.Idle != deep.Idle || len(shallow.Gaps) != len(deep.Gaps) || shallow.Verdict != deep.Verdict {
		t.Errorf("deep %s %+v (%d gaps), shallow %s %+v (%d gaps): want the same", deep.Verdict, deep.Idle, len(deep.Gaps), shallow.Verdict, shallow.Idle, len(shallow.Gaps))
	}
	if len(shallow.Gaps) != 49 {
		t.Errorf("%d gaps, want 49", len(shallow.Gaps))
	}
	warned := func(r *Result) bool {
		return slices.ContainsFunc(r.Source.Warnings, func(w string) bool { return strings.Contains(w, "nest up to 3001 deep") })
	}
	if !warned(deep) || warned(shallow) {
		t.Errorf("warnings: deep %q, shallow %q; want the deep one alone to say how deep", deep.Source.Warnings, shallow.Source.Warnings)
	}
}
