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

// TestDeepStackUnwound: a thread nested 3,000 frames deep that returns
// from them one nanosecond at a time inside the last gap passes through
// 3,000 stacks there. Each is kept to its innermost maxWalk names under
// deepMark, so the stacks kept are the empty one, the launches', the
// frames' 26 deep ones (the names cycle) and one per depth within maxWalk,
// not 3,000 of up to 3,000 names:
// kept whole they took memory of the depth squared (a 100,000-deep
// trace, gigabytes).
func TestDeepStackUnwound(t *testing.T) {
	const depth, gaps = 3000, 50
	s := tracetest.DeepStack(depth, gaps)
	// DeepStack's last gap runs from the end of kernel gaps-2 to the start
	// of kernel gaps-1: the frames end inside it, innermost first.
	lastEnd := int64(depth) + 100_000 + int64(gaps-2)*90_000 + 45_000
	for i := range s.Events {
		if e := &s.Events[i]; e.Role == tracetest.Python {
			e.Dur = lastEnd + 10 + int64(depth-i) - e.Start
		}
	}
	res := analyzeSpec(t, s)
	deep := 0
	for i := range res.Gaps {
		for seg := range res.Segments(&res.Gaps[i]) {
			names := res.Stack(seg.Stack)
			if len(names) > maxWalk+1 || len(names) == maxWalk+1 && names[0] != deepMark {
				t.Fatalf("gap %d: a stack of %d names starting %q; want at most %d under %q", i, len(names), names[0], maxWalk, deepMark)
			}
			if len(names) > 0 && names[0] == deepMark {
				deep++
			}
		}
	}
	if most := 3 + 26 + maxWalk; deep == 0 || res.Stacks() > most {
		t.Errorf("%d segments in deep stacks, %d stacks kept; want some, and at most %d stacks", deep, res.Stacks(), most)
	}
}
