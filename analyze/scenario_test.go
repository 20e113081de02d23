package analyze

import (
	"reflect"
	"testing"

	"github.com/tracegap/tracegap/trace"
	"github.com/tracegap/tracegap/trace/tracetest"
)

const (
	usec = int64(1_000)
	msec = int64(1_000_000)
)

// scenario is a generated loop with its ground truth, worked out by hand
// from the loop's timeline (see the comments on each case).
type scenario struct {
	name       string
	loop       tracetest.Loop
	verdict    Verdict
	confidence Confidence
	window     Interval
	idle       Breakdown
	// sync is the blocking call every in-sync and after-sync segment
	// names (Segment.Sync).
	sync string
}

var scenarios = []scenario{
	{
		// Step: input 3, dispatch 1, kernel 10 with the host blocked in
		// the sync until it ends; step = 14 ms. Each kept step's gap (4 ms)
		// follows the sync's return: after-sync. Input 3 < compute 10.
		name:    "a/sync-then-short-input",
		loop:    tracetest.Loop{Steps: 6, Input: 3 * msec, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true},
		verdict: Sequential, confidence: High,
		window: Interval{14 * msec, 84 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{AfterSync: 5 * 4 * msec}},
		sync:   "aten::item",
	},
	{
		// Host step = input 20 + dispatch 1; the kernel (10) runs during
		// the next input, so each gap is the last 10 ms of input and the
		// 1 ms op. Window: the warm-up's kernel ends (31; step 2's host
		// start, 21, falls inside it) to the last kernel's end (136).
		name:    "b/input-longer-than-compute",
		loop:    tracetest.Loop{Steps: 6, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec},
		verdict: DataBound, confidence: High,
		window: Interval{31 * msec, 136 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Input: 5 * 10 * msec, Host: 5 * 1 * msec}},
	},
	{
		// As a, with input 20 > compute 10: the sync exposes input that
		// would not fit inside compute anyway.
		name:    "c/sync-and-long-input",
		loop:    tracetest.Loop{Steps: 6, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true},
		verdict: DataBound, confidence: High,
		window: Interval{31 * msec, 186 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{AfterSync: 5 * 21 * msec}},
		sync:   "aten::item",
	},
	{
		// Host step 1.5 ms against 10 ms kernels: the queue never drains.
		// The host runs ahead, so the steps are paced by the device: from
		// the warm-up's kernel's end (11.5 ms), 10 ms each.
		name:    "d/prefetching-workers",
		loop:    tracetest.Loop{Steps: 6, Input: 500 * usec, InputName: tracetest.MultiProcessLoader, Dispatch: 1 * msec, Compute: 10 * msec},
		verdict: Parallel, confidence: High,
		window: Interval{11500 * usec, 61500 * usec},
	},
	{
		// Ten 200 us ops per step, each launching a 50 us kernel at its
		// end: 150 us of every 200 us idle inside aten::linear. Window:
		// the warm-up's last kernel's end (2.05 ms) to the last kernel's
		// end (12.05 ms).
		name:    "e/heavy-dispatch",
		loop:    tracetest.Loop{Steps: 6, Dispatch: 200 * usec, Kernels: 10, Compute: 50 * usec},
		verdict: HostBound, confidence: High,
		window: Interval{2050 * usec, 12050 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Host: 50 * 150 * usec}},
	},
	{
		// Each step syncs on the previous step's work while its own kernel
		// is queued: 8.5 ms of sync per step, all of it over busy time.
		name:    "f/syncs-overlapped",
		loop:    tracetest.Loop{Steps: 6, Input: 500 * usec, InputName: tracetest.MultiProcessLoader, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true, SyncPrevious: true},
		verdict: Parallel, confidence: High,
		window: Interval{11500 * usec, 61500 * usec},
	},
	{
		// b without step markers: the window is the device span, the
		// warm-up's kernel included.
		name:    "g/no-steps",
		loop:    tracetest.Loop{Steps: 6, NoStepMarkers: true, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec},
		verdict: DataBound, confidence: Medium,
		window: Interval{21 * msec, 136 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Input: 5 * 10 * msec, Host: 5 * 1 * msec}},
	},
	{
		// One step of b: [0, 21) stretched to its kernel's end (31); the
		// only gap is the input (20) and the op (1).
		name:    "h/single-step",
		loop:    tracetest.Loop{Steps: 1, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec},
		verdict: DataBound, confidence: Medium,
		window: Interval{0, 31 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Input: 20 * msec, Host: 1 * msec}},
	},
	{
		// a on two GPUs, GPU:1's kernels 4 ms shorter; step = 13.99 ms.
		// GPU:0 idles 3.99 ms per step after the sync. GPU:1 idles 7.99 ms:
		// 3.99 in the sync, 4 after it (window edges: the first step only
		// after, the tail only in-sync). Averaged over the two devices.
		name:    "i/two-devices",
		loop:    tracetest.Loop{Steps: 6, Input: 3 * msec, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true, Devices: 2, Skew: 4 * msec},
		verdict: Sequential, confidence: High,
		window: Interval{13990 * usec, 6 * 13990 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{InSync: (5 * 3990 * usec) / 2, AfterSync: (5*3990*usec + 5*4*msec) / 2}},
		sync:   "aten::item",
	},
	{
		// The backward thread launches two of the three kernels per step,
		// so it has the most launches, but the gap before each step's
		// first kernel is ended by the main thread's launch: 2 ms of input
		// and 1 ms of dispatch there, not untraced time. Loading (6 ms a
		// step) is no slower than the device's work (6 ms) but inline:
		// sequential. The steps start where the previous step's last
		// kernel ends (13 ms for the first kept one).
		name:    "j/backward-thread",
		loop:    tracetest.Loop{Steps: 6, Input: 6 * msec, Dispatch: 1 * msec, Kernels: 3, Compute: 2 * msec, Backward: true},
		verdict: Sequential, confidence: High,
		window: Interval{13 * msec, 58 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Input: 5 * 2 * msec, Host: 5 * 1 * msec}},
	},
	{
		// b with the loader untraced and no steps: the thread shows
		// nothing for 10 ms of each gap. The trace starts at the first
		// event, 20 ms into b's timeline. Untraced idle alone is over the
		// host threshold: host-bound, at low confidence.
		name:    "k/untraced",
		loop:    tracetest.Loop{Steps: 6, NoStepMarkers: true, UntracedInput: true, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec},
		verdict: HostBound, confidence: Low,
		window: Interval{1 * msec, 116 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Untraced: 5 * 10 * msec, Host: 5 * 1 * msec}},
	},
}

func analyzeSpec(t *testing.T, s *tracetest.Spec) *Result {
	t.Helper()
	res, err := Analyze(tracetest.Build(s), DefaultOptions())
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return res
}

func checkScenario(t *testing.T, sc scenario, res *Result) {
	t.Helper()
	if res.Verdict != sc.verdict || res.Confidence != sc.confidence {
		t.Errorf("verdict %s (%s), want %s (%s); reasons %q", res.Verdict, res.Confidence, sc.verdict, sc.confidence, res.Reasons)
	}
	if got := (Interval{res.Window.Start, res.Window.End}); got != sc.window {
		t.Errorf("window %v, want %v", got, sc.window)
	}
	if res.Idle != sc.idle {
		t.Errorf("idle\n got %+v\nwant %+v", res.Idle, sc.idle)
	}
	checkSegmentSyncs(t, sc.sync, res)
}

// checkSegmentSyncs checks that every in-sync and after-sync segment names
// the blocking call sync and no other segment names one.
func checkSegmentSyncs(t *testing.T, sync string, res *Result) {
	t.Helper()
	var n int64
	for _, g := range res.Gaps {
		for _, s := range g.Segments {
			want := ""
			if s.Cause == InSync || s.Cause == AfterSync {
				want = sync
				n += s.Dur
			}
			if s.Sync != want {
				t.Errorf("%s gap at %d: %s segment at %d names sync %q, want %q", g.Device, g.Start, s.Cause, s.Start, s.Sync, want)
			}
		}
	}
	if (n > 0) != (sync != "") {
		t.Errorf("%d ns of sync segments, want some exactly when a sync is named (%q)", n, sync)
	}
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			checkScenario(t, sc, analyzeSpec(t, sc.loop.Spec()))
		})
	}
}

func TestScenarioSteps(t *testing.T) {
	// f: each step's sync time on the launching thread, over busy time.
	res := analyzeSpec(t, scenarios[5].loop.Spec())
	if len(res.Steps) != 5 {
		t.Fatalf("%d steps, want 5", len(res.Steps))
	}
	for i, s := range res.Steps {
		want := 8500 * usec
		if i == 0 {
			want = 8495 * usec
		}
		if s.Sync != want || s.Verdict != Parallel || s.Num != int64(i+2) {
			t.Errorf("step %d: %s sync %d verdict %s, want ProfilerStep#%d sync %d parallel", i, s.Name, s.Sync, s.Verdict, i+2, want)
		}
	}
	// a: every step has 4 ms of after-sync idle, 10 ms busy, 3 ms input.
	res = analyzeSpec(t, scenarios[0].loop.Spec())
	for i, s := range res.Steps {
		if s.Dur != 14*msec || s.DeviceBusy != 10*msec || s.Input != 3*msec || s.Idle.Of(AfterSync) != 4*msec || s.Verdict != Sequential {
			t.Errorf("step %d: %+v", i, s)
		}
	}
}

func TestPerStep(t *testing.T) {
	for _, tc := range []struct {
		scenario      int
		input, busy   int64
		ok            bool
		stepsInResult int
	}{
		// b: each step's span holds the tail of the previous step's
		// kernel and the head of its own, 10 ms in all; the last step's
		// span also holds its own kernel's tail, which PerStep leaves out.
		{1, 20 * msec, 10 * msec, true, 5},
		// h: one step, its own figures.
		{7, 20 * msec, 10 * msec, true, 1},
		// g: no steps.
		{6, 0, 0, false, 0},
	} {
		sc := scenarios[tc.scenario]
		res := analyzeSpec(t, sc.loop.Spec())
		input, busy, ok := res.PerStep()
		if input != tc.input || busy != tc.busy || ok != tc.ok || len(res.Steps) != tc.stepsInResult {
			t.Errorf("%s: PerStep() = %d, %d, %v over %d steps; want %d, %d, %v over %d",
				sc.name, input, busy, ok, len(res.Steps), tc.input, tc.busy, tc.ok, tc.stepsInResult)
		}
	}
}

func TestNoDevice(t *testing.T) {
	s := &tracetest.Spec{Events: []tracetest.Event{{Role: tracetest.CPUOp, Name: "aten::add", Thread: 1, Dur: 1000}}}
	res := analyzeSpec(t, s)
	if res.Verdict != NoDevice || len(res.Reasons) == 0 {
		t.Errorf("verdict %s reasons %q, want no-device with a reason", res.Verdict, res.Reasons)
	}
	res, err := Analyze(&trace.Trace{}, DefaultOptions())
	if err != nil || res.Verdict != NoDevice {
		t.Errorf("empty trace: %v, %v", res, err)
	}
}

func TestBadOptions(t *testing.T) {
	for _, mod := range []func(*Options){
		func(o *Options) { o.StepRegex = "(" },
		func(o *Options) { o.SyncPatterns = []string{"[a-"} },
		func(o *Options) { o.InputPatterns = []string{"*"} },
		func(o *Options) { o.MinGap = -1 },
		func(o *Options) { o.HostThreshold = 1.5 },
	} {
		o := DefaultOptions()
		mod(&o)
		if _, err := Analyze(tracetest.Build(scenarios[0].loop.Spec()), o); err == nil {
			t.Errorf("options %+v: no error", o)
		}
	}
}

// TestSegmentSync checks the blocking call that sync segments name where it
// is not the launching thread's aten::item: a pageable copy, and another
// thread's block_until_ready while the launching thread shows nothing.
func TestSegmentSync(t *testing.T) {
	const main, runtime = 1, 2
	launch := func(tid int64, start int64, corr uint64, kStart, kDur int64) []tracetest.Event {
		return []tracetest.Event{
			{Role: tracetest.Runtime, Name: "cudaLaunchKernel", Thread: tid, Start: start, Dur: 10 * usec, Corr: corr},
			{Role: tracetest.Kernel, Name: "gemm", Start: kStart, Dur: kDur, Corr: corr},
		}
	}
	for _, tc := range []struct {
		name   string
		events []tracetest.Event
		want   []Segment
	}{
		{
			// The pageable copy returns at 5.2 ms, 100 us after the
			// device finished it; the next kernel is launched at 6 ms.
			name: "pageable-copy",
			events: append(append(launch(main, 0, 1, 10*usec, 4990*usec),
				tracetest.Event{Role: tracetest.Runtime, Name: "cudaMemcpyAsync", Thread: main, Start: 20 * usec, Dur: 5180 * usec, Corr: 2},
				tracetest.Event{Role: tracetest.Memcpy, Name: "Memcpy DtoH (Device -> Pageable)", Start: 5 * msec, Dur: 100 * usec, Corr: 2},
				tracetest.Event{Role: tracetest.CPUOp, Name: "aten::linear", Thread: main, Start: 5200 * usec, Dur: 800 * usec}),
				launch(main, 5990*usec, 3, 6*msec, msec)...),
			want: []Segment{
				{Start: 5100 * usec, Dur: 100 * usec, Cause: InSync, Stack: []string{"cudaMemcpyAsync"}, Sync: "cudaMemcpyAsync"},
				{Start: 5200 * usec, Dur: 790 * usec, Cause: AfterSync, Stack: []string{"aten::linear"}, Sync: "cudaMemcpyAsync"},
				{Start: 5990 * usec, Dur: 10 * usec, Cause: AfterSync, Stack: []string{"aten::linear", "cudaLaunchKernel"}, Sync: "cudaMemcpyAsync"},
			},
		},
		{
			// JAX: Python blocks until 5.5 ms; the runtime thread that
			// launches shows nothing until its next launch at 6 ms.
			name: "other-thread",
			events: append(append(launch(runtime, 0, 1, 10*usec, 4990*usec),
				tracetest.Event{Role: tracetest.Python, Name: "block_until_ready", Thread: main, Start: 20 * usec, Dur: 5480 * usec}),
				launch(runtime, 6*msec, 2, 6010*usec, msec)...),
			want: []Segment{
				{Start: 5 * msec, Dur: 500 * usec, Cause: InSync, Stack: []string{}, Sync: "block_until_ready"},
				{Start: 5500 * usec, Dur: 500 * usec, Cause: AfterSync, Stack: []string{}, Sync: "block_until_ready"},
				{Start: 6 * msec, Dur: 10 * usec, Cause: Host, Stack: []string{"cudaLaunchKernel"}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := analyzeSpec(t, &tracetest.Spec{Events: tc.events})
			if len(res.Gaps) != 1 {
				t.Fatalf("%d gaps, want 1: %+v", len(res.Gaps), res.Gaps)
			}
			if got := res.Gaps[0].Segments; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("segments\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
