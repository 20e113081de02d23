package analyze

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// hostCauses is the idle b puts on the host: every cause but stalled.
func hostCauses(b *Breakdown) int64 { return b.Attributed() - b.Of(Stall) }

// idleScenario is a generated trace with its ground truth, worked out by
// hand from the builder's timeline.
type idleScenario struct {
	name       string
	spec       *tracetest.Spec
	verdict    Verdict
	confidence Confidence
	secondary  []Verdict
	window     Interval
	idle       Breakdown
	// inSync is Result.StalledInSync; deps the dependencies, streams left
	// out (each format names them its own way).
	inSync int64
	deps   []Dependency
	// finding is the high finding's id; says, when set, is part of its
	// message or fix.
	finding, says string
	// reason, when set, is part of one of the reasons.
	reason string
}

var idleScenarios = []idleScenario{
	{
		// Each 13 ms step: aten::linear 0-1 ms, whose last calls launch
		// an untraced side kernel (0.97), record an event, make the
		// compute stream wait on it and launch the step's kernel
		// (returns at 1); the side kernel's event fires at 9, the kernel
		// runs 9-13 while the host blocks in aten::item from 1 to 13.
		// Each kept step's gap, 0-9: after-sync to 1 (the op after the
		// last step's sync, which waited 4 ms on the device), then
		// stalled 1-9: the kernel was queued, the host blocked on a
		// device that waited on the event.
		name:    "stall/queued-behind-event",
		spec:    tracetest.StreamWait{Steps: 6, Dispatch: msec, Wait: 8030 * usec, Compute: 4 * msec}.Spec(),
		verdict: Stalled, confidence: High, secondary: []Verdict{Sequential},
		window:  Interval{13 * msec, 78 * msec},
		idle:    Breakdown{ByCause: [NumCauses]int64{AfterSync: 5 * msec, Stall: 5 * 8 * msec}},
		inSync:  5 * 8 * msec,
		deps:    []Dependency{{Waited: Waited{Kind: "event", Call: "cudaStreamWaitEvent"}, Idle: 5 * 8 * msec, Gaps: 5}},
		finding: "stalled-device", says: "waited on (cudaStreamWaitEvent before the launch) (40.0 ms in 5 gaps)",
	},
	{
		// The same with the side kernel traced: the device is busy on the
		// side stream 0.97-9 while the step's kernel waits, so it does not
		// idle; each kept step's gap is the 0.97 ms of the op after the
		// last sync, whose side kernel was launched at its end: after-sync.
		name:    "stall/side-stream-busy",
		spec:    tracetest.StreamWait{Steps: 6, Dispatch: msec, Wait: 8030 * usec, Compute: 4 * msec, SideTraced: true}.Spec(),
		verdict: Sequential, confidence: High,
		window:  Interval{13 * msec, 78 * msec},
		idle:    Breakdown{ByCause: [NumCauses]int64{AfterSync: 5 * 970 * usec}},
		finding: "forced-sync",
	},
	{
		// Each 24.025 ms iteration: aten::fill_ on the CPU 0-24, aten::mul
		// 24-24.02 launching a 4 us kernel (24.02-24.024), aten::item to
		// 24.025. The sync waited 4 us on the device, so 4 us of the next
		// iteration is after-sync; the rest of the cache clear and the op
		// (24.016 ms) no queued work could have overlapped: host. The
		// sync's last 1 us is in-sync (but in the last step, whose window
		// ends with its kernel).
		name:    "bench/cache-clear",
		spec:    tracetest.CacheClear{Iters: 6, Clear: 24 * msec, Dispatch: 20 * usec, Kernel: 4 * usec}.Spec(),
		verdict: HostBound, confidence: High,
		window:  Interval{24025 * usec, 144149 * usec},
		idle:    Breakdown{ByCause: [NumCauses]int64{InSync: 4 * usec, AfterSync: 5 * 4 * usec, Host: 5 * 24016 * usec}},
		finding: "dispatch-overhead",
	},
	{
		// 1.305 ms steps: aten::linear 0-0.1 launching a 1 ms kernel at
		// its end, the optimizer 0.1-1.3, a sync finding the device done.
		// Step 2's launch takes 30 ms (loading the kernel's module), step
		// 4 starts with a 10 ms cudaFree: runtime. The rest is the ops
		// (90 us in step 2, 100 us in steps 3-6), the optimizer's 200 us
		// past the kernel and the 5 us syncs of steps 2-5.
		name:    "warmup/first-launch-and-free",
		spec:    tracetest.Warmup{Steps: 6, Dispatch: 100 * usec, Compute: msec, Optimizer: 1200 * usec, FirstLaunch: 30 * msec, Free: 10 * msec}.Spec(),
		verdict: HostBound, confidence: Medium,
		window:  Interval{1305 * usec, 47615 * usec},
		idle:    Breakdown{ByCause: [NumCauses]int64{InSync: 4 * tracetest.SyncMin, Runtime: 40 * msec, Host: 1290 * usec}},
		finding: "runtime-work", says: "CUDA_MODULE_LOADING=EAGER",
		reason: "the window holds warm-up the step markers did not exclude",
	},
}

// TestIdleScenarios checks each scenario's verdict and idle split, built
// directly and read back from each format; the idle put on host causes
// must be within 3 points of the window of the truth, and queued idle is
// never the host's.
func TestIdleScenarios(t *testing.T) {
	for _, sc := range idleScenarios {
		t.Run(sc.name+"/build", func(t *testing.T) { checkIdleScenario(t, sc, analyzeSpec(t, sc.spec)) })
		for _, w := range writers {
			t.Run(sc.name+"/"+w.name, func(t *testing.T) { checkIdleScenario(t, sc, readBack(t, w.write, sc.spec)) })
		}
	}
}

func checkIdleScenario(t *testing.T, sc idleScenario, res *Result) {
	t.Helper()
	if res.Verdict != sc.verdict || res.Confidence != sc.confidence || !slices.Equal(res.Secondary, sc.secondary) {
		t.Errorf("verdict %s (%s) secondary %v, want %s (%s) %v; reasons %q", res.Verdict, res.Confidence, res.Secondary, sc.verdict, sc.confidence, sc.secondary, res.Reasons)
	}
	if got := (Interval{res.Window.Start, res.Window.End}); got != sc.window {
		t.Errorf("window %v, want %v", got, sc.window)
	}
	if res.Idle != sc.idle {
		t.Errorf("idle\n got %+v\nwant %+v", res.Idle, sc.idle)
	}
	w := float64(res.Window.Dur())
	if d := float64(hostCauses(&res.Idle)-hostCauses(&sc.idle)) / w; d > 0.03 || d < -0.03 {
		t.Errorf("host causes %.1f%% of the window, truth %.1f%%", 100*float64(hostCauses(&res.Idle))/w, 100*float64(hostCauses(&sc.idle))/w)
	}
	if res.StalledInSync != sc.inSync {
		t.Errorf("stalled in sync %d, want %d", res.StalledInSync, sc.inSync)
	}
	var deps []Dependency
	for _, d := range res.Dependencies {
		d.Stream = ""
		deps = append(deps, d)
	}
	if !reflect.DeepEqual(deps, sc.deps) {
		t.Errorf("dependencies %+v, want %+v", deps, sc.deps)
	}
	f := findingByID(res, sc.finding)
	if f == nil || f.Severity != "high" || !strings.Contains(f.Message+" "+f.Fix, sc.says) {
		t.Errorf("finding %s: %+v, want high saying %q; findings %+v", sc.finding, f, sc.says, res.Findings)
	}
	if sc.reason != "" && !strings.Contains(strings.Join(res.Reasons, "\n"), sc.reason) {
		t.Errorf("reasons %q lack %q", res.Reasons, sc.reason)
	}
}
