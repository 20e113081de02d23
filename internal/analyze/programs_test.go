package analyze

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/internal/trace/xplane"
	"github.com/tracegap/tracegap/trace"
)

// analyzeAsXPlane writes s as an XPlane, reads it back and analyses it.
func analyzeAsXPlane(t *testing.T, s *tracetest.Spec) *Result {
	t.Helper()
	var buf bytes.Buffer
	if err := tracetest.WriteXPlane(&buf, s); err != nil {
		t.Fatal(err)
	}
	tr, err := xplane.Decode(buf.Bytes(), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := analyzeAdvised(tr, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestJAXStepsFromLinks: JAX loops whose host runs steps ahead of the
// device, on GPU (the launch's correlation id names the work's dispatch)
// and on TPU (XProf's flows lead from each program's run on the "XLA
// Modules" line up to the loop thread's Execute), give every step its own
// work: the same steps, figures and verdict on both.
//
//   - healthy: 4 grain workers make a batch in 30 ms each, 7.5 ms a batch
//     against 10 ms of compute: after the first batches the host runs
//     ahead and every step is 10 ms, all busy.
//   - bursty: 4 workers at 80 ms, 20 ms a batch: 4 batches arrive at once
//     every 80 ms, the loop dispatches their steps within a millisecond,
//     and every 4th step (5, 9) waits 40 ms on input before its 10 ms.
//   - uncaptured: the healthy loop with the capture begun after 2 steps
//     were dispatched: their work runs in the trace with no dispatch; the
//     warm-up step is the first captured one (3) and its work stays out.
func TestJAXStepsFromLinks(t *testing.T) {
	for _, tt := range []struct {
		name    string
		p       tracetest.JAXProgram
		first   int64 // the first step in the window
		long    []int64
		verdict Verdict
		period  int // the erratic loader's, 0 for none
	}{
		{"healthy", tracetest.JAXProgram{Steps: 12, Workers: 4, Load: 30 * msec, Dispatch: msec, Compute: 10 * msec}, 2, nil, Parallel, 0},
		{"bursty", tracetest.JAXProgram{Steps: 12, Workers: 4, Load: 80 * msec, Dispatch: msec, Compute: 10 * msec}, 2, []int64{5, 9}, DataBound, 4},
		{"uncaptured", tracetest.JAXProgram{Steps: 12, Workers: 4, Load: 30 * msec, Dispatch: msec, Compute: 10 * msec, Uncaptured: 2}, 4, nil, Parallel, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var gpu *Result
			for _, tpu := range []bool{false, true} {
				p := tt.p
				p.TPU = tpu
				r := analyzeAsXPlane(t, p.Spec())
				checkOwnWork(t, r, tt.first, tt.long)
				if r.Verdict != tt.verdict || r.Confidence != High {
					t.Errorf("TPU %v: %s (%s), want %s (high); reasons %q", tpu, r.Verdict, r.Confidence, tt.verdict, r.Reasons)
				}
				st := r.Stability()
				if got := 0; st.Loader != nil {
					got = st.Loader.Period
					if got != tt.period {
						t.Errorf("TPU %v: erratic loader every %d steps, want %d", tpu, got, tt.period)
					}
				} else if tt.period != 0 {
					t.Errorf("TPU %v: no erratic loader, want one every %d steps", tpu, tt.period)
				}
				if tt.period == 0 && (findingOf(r, "slow-input") != nil || findingOf(r, "erratic-loader") != nil) {
					t.Errorf("TPU %v: a loader finding on a loader that keeps up: %+v", tpu, r.Findings)
				}
				if !tpu {
					gpu = r
					continue
				}
				if !sameSteps(gpu.Steps, r.Steps) || gpu.Idle != r.Idle || gpu.Verdict != r.Verdict {
					t.Errorf("TPU and GPU differ:\nGPU %s %+v %+v\nTPU %s %+v %+v", gpu.Verdict, gpu.Idle, gpu.Steps, r.Verdict, r.Idle, r.Steps)
				}
			}
		})
	}
}

// checkOwnWork checks that r's steps, from step number first, each hold
// 10 ms of device work, busy throughout, the steps numbered long after a
// 40 ms wait on input first.
func checkOwnWork(t *testing.T, r *Result, first int64, long []int64) {
	t.Helper()
	if n := 12 - first + 1; int64(len(r.Steps)) != n {
		t.Fatalf("%d steps, want %d (from step %d)", len(r.Steps), n, first)
	}
	for i, s := range r.Steps {
		want := Step{Num: first + int64(i), Dur: 10 * msec, DeviceBusy: 10 * msec}
		for _, n := range long {
			if n == want.Num {
				want.Dur = 50 * msec
			}
		}
		if s.Num != want.Num || s.Dur != want.Dur || s.DeviceBusy != want.DeviceBusy {
			t.Errorf("step %d: %s long, %s busy; want step %d, %s, %s", s.Num, human.Duration(s.Dur), human.Duration(s.DeviceBusy), want.Num, human.Duration(want.Dur), human.Duration(want.DeviceBusy))
		}
	}
	if _, busy, _ := r.PerStep(); busy != 10*msec {
		t.Errorf("compute per step %s, want 10.0 ms: the warm-up step's work leaks into the window", human.Duration(busy))
	}
}

// sameSteps compares two runs' steps, names and start times aside (GPU
// and TPU runs name steps alike but need not start on the same clock).
func sameSteps(a, b []Step) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Start, y.Start = 0, 0
		if x.Num != y.Num || x.Dur != y.Dur || x.DeviceBusy != y.DeviceBusy || x.Input != y.Input || x.Sync != y.Sync || x.Idle != y.Idle || x.Verdict != y.Verdict {
			return false
		}
	}
	return true
}

// TestJAXStepsWithoutLinks: a TPU trace without XProf's flows (older
// profilers, or a converted trace) keeps the old rule, each step holding
// the work that started after its dispatch returned, and says so: with
// the bursty loader the rule leaves steps of a burst empty, and the
// confidence drops for it.
func TestJAXStepsWithoutLinks(t *testing.T) {
	s := tracetest.JAXProgram{Steps: 12, TPU: true, Workers: 4, Load: 80 * msec, Dispatch: msec, Compute: 10 * msec}.Spec()
	for i := range s.Events {
		s.Events[i].Flow = tracetest.Flow{}
	}
	r := analyzeAsXPlane(t, s)
	if r.Confidence == High || !strings.Contains(strings.Join(r.Reasons, "\n"), "link to no dispatch") {
		t.Errorf("confidence %s, reasons %q; want lower, saying the work links to no dispatch", r.Confidence, r.Reasons)
	}
	empty := 0
	for _, st := range r.Steps {
		if st.DeviceBusy == 0 {
			empty++
		}
	}
	if empty == 0 {
		t.Errorf("no empty step: the test no longer shows what the links fix")
	}
}

// TestTPULinksReal follows the flows of the shared TPU capture, whose
// every program run on an "XLA Modules" line consumes a flow (_ct=12)
// that one host DoEnqueueProgram produces (_pt=12), up to the loop
// thread. With the steps the user's regex names (each call of f), no step
// the links give work to is empty, and no run the links place in a step
// of the window falls outside it.
func TestTPULinksReal(t *testing.T) {
	tr, err := trace.Open(realtraces.Path(t, "xprof-tpu-inference.xplane.pb"), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.StepRegex = `PjitFunction\(f\)`
	a, err := analyzeTrace(tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	r := a.res
	if len(r.Steps) != 99 || a.guessed != 0 {
		t.Fatalf("%d steps, %d pieces of work by no link; want 99 and 0", len(r.Steps), a.guessed)
	}
	for _, s := range r.Steps {
		if s.DeviceBusy == 0 {
			t.Errorf("step at %d ns is empty", s.Start)
		}
	}
	runs, onLoop, inWindow := 0, 0, 0
	for _, d := range a.devs {
		for _, run := range a.linkPrograms(d) {
			runs++
			if run.top < 0 || a.trackOf(run.top) != a.loop {
				continue
			}
			onLoop++
			launch := tr.Events[run.top].Start
			k, _ := slices.BinarySearchFunc(a.hostSpans, launch, func(s Interval, t int64) int { return cmp.Compare(s.End, t+1) })
			if k == len(a.hostSpans) || launch < a.hostSpans[k].Start {
				continue
			}
			inWindow++
			before := d.busyIn(Interval{run.start, min(run.end, r.Window.Start)})
			after := d.busyIn(Interval{max(run.start, r.Window.End), run.end})
			if before > 0 || after > 0 {
				t.Errorf("%s: a run [%d, %d) of step %d has work outside the window [%d, %d)", d.id, run.start, run.end, k, r.Window.Start, r.Window.End)
			}
		}
	}
	// 414 runs, each linked up to the loop thread; 396 of them (99 steps
	// on 4 TPUs) dispatched in a step of the window.
	if runs != 414 || onLoop != 414 || inWindow != 396 {
		t.Errorf("%d runs, %d linked to the loop thread, %d in the window's steps; want 414, 414, 396", runs, onLoop, inWindow)
	}
}

// TestJAXHostAfterSync: each step prints its loss, waiting 10 ms for the
// device, then logs for 30 ms in Python (log_metrics) before the next
// 1 ms call. The 31 ms gap follows a sync, but the host's logging is
// longer than the device work it could have overlapped: the sync's share
// is at most the 10 ms a step the device ran while it blocked, the rest
// is host work, and the run is host-bound, alike on GPU and TPU.
func TestJAXHostAfterSync(t *testing.T) {
	var gpu *Result
	for _, tpu := range []bool{false, true} {
		r := analyzeAsXPlane(t, tracetest.JAXProgram{Steps: 6, TPU: tpu, Dispatch: msec, Compute: 10 * msec, Print: true, Host: 30 * msec}.Spec())
		if r.Verdict != HostBound || r.Idle.Sync() > 10*msec*int64(len(r.Steps)) || r.Idle.HostWork() < 2*r.Idle.Sync() {
			t.Errorf("TPU %v: %s (%s), want host-bound; idle %+v, reasons %q", tpu, r.Verdict, r.Confidence, r.Idle, r.Reasons)
		}
		if gpu == nil {
			gpu = r
		} else if gpu.Idle != r.Idle || !sameSteps(gpu.Steps, r.Steps) {
			t.Errorf("GPU and TPU differ: %+v against %+v", gpu.Idle, r.Idle)
		}
	}
}

// TestJAXScenariosOnTPU: every JAX scenario of a GPU (but those that copy
// a result back through CUDA, which a TPU program does not) gives the
// same verdict, idle and steps laid out as a TPU writes it: the step of
// each piece of work follows the trace's links on both.
func TestJAXScenariosOnTPU(t *testing.T) {
	for _, sc := range jaxScenarios {
		if sc.program.TPU || sc.program.Fetch > 0 {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			gpu := analyzeAsXPlane(t, sc.program.Spec())
			p := sc.program
			p.TPU = true
			tpu := analyzeAsXPlane(t, p.Spec())
			if gpu.Verdict != tpu.Verdict || gpu.Idle != tpu.Idle || !sameSteps(gpu.Steps, tpu.Steps) {
				t.Errorf("GPU %s %+v, TPU %s %+v", gpu.Verdict, gpu.Idle, tpu.Verdict, tpu.Idle)
			}
		})
	}
}
