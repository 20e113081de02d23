package analyze

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
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
	// load, when positive, is L: every step's loading time (Step.Input).
	load int64
	// reason, when set, is part of one of the verdict's reasons.
	reason string
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
		// would not fit inside compute anyway. After-sync lasts as long as
		// the device ran while the host blocked (10 ms): had the host not
		// blocked, that much of the input would have overlapped the
		// kernel; the other 10 ms of input and the 1 ms op no queued work
		// could have overlapped.
		name:    "c/sync-and-long-input",
		loop:    tracetest.Loop{Steps: 6, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true},
		verdict: DataBound, confidence: High,
		window: Interval{31 * msec, 186 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{AfterSync: 5 * 10 * msec, Input: 5 * 10 * msec, Host: 5 * msec}},
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
		// event, 20 ms into b's timeline. Untraced idle alone (50 of
		// 115 ms) is over the host threshold and host work (5 ms) is not:
		// host-bound, at low confidence as the largest share of idle is
		// untraced (advice's TestFindings checks the finding naming the thread
		// and how to capture it).
		name:    "k/untraced",
		loop:    tracetest.Loop{Steps: 6, NoStepMarkers: true, UntracedInput: true, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec},
		verdict: HostBound, confidence: Low,
		window: Interval{1 * msec, 116 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Untraced: 5 * 10 * msec, Host: 5 * 1 * msec}},
		reason: "the waited-for host thread shows no event: it was not traced",
	},
	{
		// An inline loader faster than compute, on a host slower than the
		// device: each step loads 6 ms, then four 1.5 ms ops each launch a
		// 2 ms kernel at their end. Host step 12 ms, device step 8 ms, so
		// the host paces the run and nothing syncs. From a step's host
		// start h: kernels run back to back over [h+7.5, h+15.5); the next
		// step's first kernel starts at h+12+7.5, so the gap [h+15.5,
		// h+19.5) is the last 2.5 ms of the next load (input) and its first
		// op (host, 1.5). Window: the warm-up's last kernel's end (15.5)
		// to step 6's (60+15.5). L = 6 < C = 8 per step, and the loader is
		// a single-process one: sequential (host 12.5% stays under 15%).
		name:    "l/inline-loader-dispatch-bound",
		loop:    tracetest.Loop{Steps: 6, Input: 6 * msec, Dispatch: 1500 * usec, Kernels: 4, Compute: 2 * msec},
		verdict: Sequential, confidence: High,
		window: Interval{15500 * usec, 75500 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Input: 5 * 2500 * usec, Host: 5 * 1500 * usec}},
		load:   6 * msec,
	},
	{
		// l with worker processes: the same timeline, the loop waiting
		// 6 ms a step on the workers' queue, less than compute (8 ms).
		// The loader is already in the background, so more of it is the
		// fix: data-bound.
		name:    "m/background-loader-waited-on",
		loop:    tracetest.Loop{Steps: 6, Input: 6 * msec, InputName: tracetest.MultiProcessLoader, Dispatch: 1500 * usec, Kernels: 4, Compute: 2 * msec},
		verdict: DataBound, confidence: High,
		window: Interval{15500 * usec, 75500 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Input: 5 * 2500 * usec, Host: 5 * 1500 * usec}},
		load:   6 * msec,
	},
	{
		// TorchRec-style input: 3 ms of loading, then inside the same
		// "## sparse_data_dist ##" a device-to-host copy to pageable
		// memory (1 ms on the device, returning 1 ms after it), then a
		// 1 ms op launching a 10 ms kernel. The copy waits for the
		// previous kernel (ending at E): copy [E, E+1), call returns E+2,
		// kernel [E+3, E+13). Each gap [E+1, E+3) is 1 ms in-sync (inside
		// the copy call) and 1 ms after it. The warm-up's kernel ends at
		// 16 (copy [3,4), call returns 5, kernel [6,16)); steps of 13.
		// L is the 3 ms of loading, not the 9 ms call (E-7 to E+2): 3 <
		// C = 11 (kernel and copy): sequential. Counting the call as
		// loading would give 12 > 11, data-bound.
		name:    "n/pageable-copy-in-input",
		loop:    tracetest.Loop{Steps: 6, Input: 3 * msec, InputName: "## sparse_data_dist ##", PageableCopy: 1 * msec, Dispatch: 1 * msec, Compute: 10 * msec},
		verdict: Sequential, confidence: High,
		window: Interval{16 * msec, 81 * msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{InSync: 5 * msec, AfterSync: 5 * msec}},
		sync:   "cudaMemcpyAsync",
		load:   3 * msec,
	},
	{
		// Each step: the workers' queue (8 ms), a 1 ms op launching a
		// 10 ms kernel, an 11 ms CPU optimizer, and aten::item, which finds
		// the kernel done 1 ms before and returns after 5 us: a sync on an
		// empty queue. Step = 20.005 ms; from a step's host start h the gap
		// [h+19, h+P+9) is 1 ms optimizer (host), 5 us in-sync, then the
		// next step's 8 ms wait on the loader (input, not after-sync: the
		// sync waited for nothing) and its op (host). Window: step 2's
		// host start (20.005, after the warm-up's kernel ends at 19) to
		// step 6's kernel's end (5*20.005+19); the last step's optimizer
		// and sync fall after it. L = 8 < C = 10 with background workers:
		// data-bound; host 9/99.02 under 15%.
		name:    "o/sync-on-empty-queue",
		loop:    tracetest.Loop{Steps: 6, Input: 8 * msec, InputName: tracetest.MultiProcessLoader, Dispatch: 1 * msec, Compute: 10 * msec, Optimizer: 11 * msec, Sync: true},
		verdict: DataBound, confidence: High,
		window: Interval{20005 * usec, 5*20005*usec + 19*msec},
		idle:   Breakdown{ByCause: [NumCauses]int64{InSync: 4 * tracetest.SyncMin, Input: 5 * 8 * msec, Host: 5*msec + 4*msec}},
		sync:   "aten::item",
		load:   8 * msec,
	},
}

func analyzeSpec(t *testing.T, s *tracetest.Spec) *Result {
	t.Helper()
	res, err := analyzeAdvised(tracetest.Build(s), DefaultOptions())
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
	if sc.reason != "" && !strings.Contains(strings.Join(res.Reasons, "\n"), sc.reason) {
		t.Errorf("reasons %q lack %q", res.Reasons, sc.reason)
	}
	if sc.load > 0 {
		for _, s := range res.Steps {
			if s.Input != sc.load {
				t.Errorf("%s: loading %d, want %d", s.Name, s.Input, sc.load)
			}
		}
	}
}

// checkSegmentSyncs checks that every in-sync and after-sync segment names
// the blocking call sync and no other segment names one.
func checkSegmentSyncs(t *testing.T, sync string, res *Result) {
	t.Helper()
	var n int64
	for _, g := range res.Gaps {
		for _, s := range res.NamedSegments(&g) {
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

// TestNoDevice: a trace without device activity is no-device, at high
// confidence when whole; a cut trace may have lost its device events
// (Kineto writes them after the host's), so it is never graded high and
// the reasons say the file was cut.
func TestNoDevice(t *testing.T) {
	cpuOnly := &tracetest.Spec{Threads: []tracetest.Thread{{TID: 1, Name: "python"}}}
	for i := range 200 {
		cpuOnly.Events = append(cpuOnly.Events, tracetest.Event{Role: tracetest.CPUOp, Name: "aten::add", Thread: 1, Start: int64(i) * 2 * usec, Dur: usec})
	}
	var file bytes.Buffer
	if err := tracetest.WriteChrome(&file, cpuOnly); err != nil {
		t.Fatal(err)
	}
	cut := file.Bytes()[:file.Len()/2]
	read, err := trace.Read(bytes.NewReader(cut), int64(len(cut)), trace.Options{})
	if err != nil {
		t.Fatalf("reading the cut file: %v", err)
	}
	truncated := tracetest.Build(cpuOnly)
	truncated.Truncated = true
	for _, tc := range []struct {
		name       string
		t          *trace.Trace
		confidence Confidence
		cut        bool
	}{
		{"whole", tracetest.Build(cpuOnly), High, false},
		{"empty", &trace.Trace{}, High, false},
		{"truncated", truncated, Low, true},
		{"cut-file", read, Low, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := analyzeAdvised(tc.t, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != NoDevice || res.Confidence != tc.confidence || len(res.Reasons) == 0 {
				t.Errorf("verdict %s (%s), reasons %q; want no-device (%s) with a reason", res.Verdict, res.Confidence, res.Reasons, tc.confidence)
			}
			if said := strings.Contains(strings.Join(res.Reasons, "\n"), "cut short"); said != tc.cut {
				t.Errorf("reasons %q say the file was cut: %v, want %v", res.Reasons, said, tc.cut)
			}
		})
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
		if _, err := analyzeAdvised(tracetest.Build(scenarios[0].loop.Spec()), o); err == nil {
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
		want   []NamedSegment
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
			want: []NamedSegment{
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
			want: []NamedSegment{
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
			if got := res.NamedSegments(&res.Gaps[0]); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("segments\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestStepsTileWindow checks, on every scenario with steps, that the steps
// tile the window (each starts where the one before ends, the first at the
// window's start, the last ending at its end), that each step's busy time
// and idle, every cause and the idle below MinGap, add up to its length to
// the nanosecond, and that the steps' idle adds up to the window's. The
// loops on several devices with odd figures check that the averaging over
// devices keeps the sums exact.
func TestStepsTileWindow(t *testing.T) {
	loops := map[string]tracetest.Loop{
		"odd/two-devices":   {Steps: 6, Input: 3 * msec, Dispatch: msec + 3, Compute: 10*msec + 7, Sync: true, Devices: 2, Skew: 4*msec + 1},
		"odd/three-devices": {Steps: 6, Input: 3*msec + 1, Dispatch: msec + 3, Compute: 10*msec + 7, Devices: 3, Skew: 4*msec + 1},
	}
	for _, sc := range scenarios {
		loops[sc.name] = sc.loop
	}
	for name, l := range loops {
		t.Run(name, func(t *testing.T) {
			res := analyzeSpec(t, l.Spec())
			if len(res.Steps) == 0 {
				if !l.NoStepMarkers {
					t.Fatal("no steps in a loop with step markers")
				}
				return
			}
			at := res.Window.Start
			var idle Breakdown
			for _, s := range res.Steps {
				if s.Start != at {
					t.Errorf("%s starts at %d, want %d (the end of the step before)", s.Name, s.Start, at)
				}
				if sum := s.DeviceBusy + s.Idle.Total(); sum != s.Dur {
					t.Errorf("%s: busy %d + idle %d = %d, want its length %d", s.Name, s.DeviceBusy, s.Idle.Total(), sum, s.Dur)
				}
				at = s.Start + s.Dur
				idle.AddAll(&s.Idle)
			}
			if at != res.Window.End {
				t.Errorf("steps end at %d, want the window's end %d", at, res.Window.End)
			}
			if idle != res.Idle {
				t.Errorf("steps' idle %+v, want the window's %+v", idle, res.Idle)
			}
		})
	}
}

// TestHostOnlySteps: a host-only trace's reasons give its steps and the
// loader's share of them. The loop without its device work: each 4 ms step
// is 3 ms in the DataLoader and a 1 ms op.
func TestHostOnlySteps(t *testing.T) {
	s := tracetest.Loop{Steps: 6, Input: 3 * msec, Dispatch: msec, Compute: msec}.Spec()
	s.Events = slices.DeleteFunc(s.Events, func(e tracetest.Event) bool { return e.Role.Device() })
	for _, tc := range []struct {
		name string
		spec *tracetest.Spec
		want string
	}{
		{"loop", s, "host only: 6 steps (ProfilerStep) of 4.00 ms on average; the input pipeline takes 3.00 ms of each, 75.0% of the steps' time"},
		{"no steps", &tracetest.Spec{Threads: s.Threads, Events: []tracetest.Event{{Role: tracetest.CPUOp, Name: "aten::add", Thread: tracetest.MainTID, Dur: usec}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := analyzeSpec(t, tc.spec)
			got := ""
			if len(res.Reasons) > 1 {
				got = res.Reasons[1]
			}
			if res.Verdict != NoDevice || got != tc.want {
				t.Errorf("verdict %s, reasons %q; want no-device with %q", res.Verdict, res.Reasons, tc.want)
			}
		})
	}
}
