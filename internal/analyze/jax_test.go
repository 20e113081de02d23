package analyze

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/internal/trace/xplane"
	"github.com/tracegap/tracegap/trace"
)

var jaxScenarios = []jaxScenario{
	{
		// GPU. Step: grain 3, dispatch 1, launch 0.01, kernel 10 with
		// print(loss) blocking from the dispatch's return to the kernel's
		// end: 14.01 ms a step, host and device in lockstep. Each kept
		// step's gap (4.01 ms) is the load and dispatch after print
		// returned (after-sync, 4 ms) and the launch with Python already
		// back in print (in-sync, 10 us). Window: step 2's start (14.01)
		// to the last kernel's end (6 x 14.01).
		name:    "jax-a/print-then-short-grain-load",
		program: tracetest.JAXProgram{Steps: 6, Load: 3 * msec, Dispatch: msec, Compute: 10 * msec, Print: true},
		verdict: Sequential, steps: 5,
		window: Interval{14_010 * usec, 84_060 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{InSync: 5 * 10 * usec, AfterSync: 5 * 4 * msec}},
	},
	{
		// TPU, as jax-a: no launch is recorded, the queue thread's
		// enqueue (10 us) takes the launch's place, and nothing links the
		// program to its dispatch but time. The same timeline and figures
		// as jax-a.
		name:    "jax-b/tpu-print-then-short-grain-load",
		program: tracetest.JAXProgram{Steps: 6, TPU: true, Load: 3 * msec, Dispatch: msec, Compute: 10 * msec, Print: true},
		verdict: Sequential, steps: 5,
		window: Interval{14_010 * usec, 84_060 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{InSync: 5 * 10 * usec, AfterSync: 5 * 4 * msec}},
	},
	{
		// GPU, no sync. Host step = grain 20 + dispatch 1; a step's kernel
		// (21.01 to 31.01 after its start) runs during the next load. Each
		// gap (11 ms) is the next load's last 9.99 ms and the launch's
		// 10 us with Python in the load after it (input, 10 ms), and the
		// dispatch (host, 1 ms); but the last launch comes after the
		// program's last event, with Python showing nothing (untraced,
		// 10 us). Steps start when the previous step's kernel ends: window
		// 31.01 to the last kernel's end, 136.01.
		name:    "jax-c/slow-grain-load",
		program: tracetest.JAXProgram{Steps: 6, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec},
		verdict: DataBound, steps: 5,
		window: Interval{31_010 * usec, 136_010 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Input: 5*10*msec - 10*usec, Host: 5 * msec, Untraced: 10 * usec}},
	},
	{
		// GPU, grain 3 and dispatch 1 against 10 ms of compute, queue of
		// two: the host runs ahead until the queue is full and then waits
		// inside the execute; the device runs back to back from 4.01.
		// Steps start every 10 ms from 14.01: no idle at all.
		name:    "jax-d/short-load-hidden-by-async-dispatch",
		program: tracetest.JAXProgram{Steps: 6, Load: 3 * msec, Dispatch: msec, Compute: 10 * msec, Depth: 2},
		verdict: Parallel, steps: 5,
		window: Interval{14_010 * usec, 64_010 * usec},
	},
	{
		// GPU, op by op: 10 jitted calls a step, 200 us of dispatch each
		// against 50 us kernels. Every kernel but the first waits 150 us
		// for its call (host): 140 us of it in the dispatch, 10 us of
		// launch with Python in the next call. A step takes 2 ms on the
		// host; its last kernel ends 60 us later, when the next step
		// starts: window 2.06 to 12.06, 50 gaps of 150 us, the last launch
		// after the program's end (untraced, 10 us).
		name:    "jax-e/op-by-op-dispatch",
		program: tracetest.JAXProgram{Steps: 6, Calls: 10, Dispatch: 200 * usec, Compute: 50 * usec},
		verdict: HostBound, steps: 5,
		window: Interval{2_060 * usec, 12_060 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Host: 50*150*usec - 10*usec, Untraced: 10 * usec}},
	},
	{
		// GPU, every step recompiles (20 ms of backend_compile inside its
		// call) before 1 ms of dispatch: as jax-c with the load replaced
		// by compilation, each gap is 10 ms of runtime work (9.99 of this
		// compile, 10 us of the next; untraced after the last) and 1 ms of
		// dispatch. The runtime-work finding names the compilation.
		name:    "jax-f/recompile-every-step",
		program: tracetest.JAXProgram{Steps: 6, Compile: 20 * msec, Dispatch: msec, Compute: 10 * msec},
		verdict: HostBound, steps: 5,
		window:  Interval{31_010 * usec, 136_010 * usec},
		idle:    Breakdown{ByCause: [NumCauses]int64{Runtime: 5*10*msec - 10*usec, Host: 5 * msec, Untraced: 10 * usec}},
		finding: "runtime-work",
	},
	{
		// GPU, print(loss) then a slow inline grain load: grain 20,
		// dispatch 1, kernel 10 with print blocking until it ends: a step
		// every 31.01 ms, the kernel of step k (from 0) from 31.01k + 21.01
		// to 31.01(k+1). Each kept step's gap (21.01 ms) is the load and
		// dispatch after print returned (after-sync, 21 ms) and the launch
		// with Python back in print (in-sync, 10 us). The sync decides,
		// and the load it exposes (20 ms a step) is longer than the
		// compute (10 ms): removing print(loss) would not hide it.
		name:    "jax-g/print-then-slow-grain-load",
		program: tracetest.JAXProgram{Steps: 6, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, Print: true},
		verdict: DataBound, steps: 5,
		window: Interval{31_010 * usec, 186_060 * usec},
		// After-sync lasts as long as the device ran while print blocked
		// (10 ms): the rest of the load (10 ms) and the dispatch (1 ms)
		// no queued work could have overlapped.
		idle:    Breakdown{ByCause: [NumCauses]int64{InSync: 5 * 10 * usec, AfterSync: 5 * 10 * msec, Input: 5 * 10 * msec, Host: 5 * msec}},
		finding: "slow-input",
	},
	{
		// GPU, two grain workers of 15 ms a batch (a batch every 7.5 ms)
		// against 10 ms of compute, queue of two. Batches 2k and 2k+1 are
		// ready at 15(k+1). Step 1 takes batch 0 at 15 (+0.1), dispatches
		// to 16.1; its kernel runs 16.11 to 26.11. From then on the host
		// is ahead: it waits on the workers (steps 3 and 5, for batches 2
		// and 4) or on the queue, never the device, which runs back to
		// back; steps start every 10 ms from 26.11: no idle at all.
		name:    "jax-h/grain-workers-keep-up",
		program: tracetest.JAXProgram{Steps: 6, Workers: 2, Load: 15 * msec, Dispatch: msec, Compute: 10 * msec, Depth: 2},
		verdict: Parallel, steps: 5,
		window: Interval{26_110 * usec, 76_110 * usec},
	},
	{
		// GPU, one grain worker of 20 ms a batch against 10 ms of
		// compute: batch k is ready at 20(k+1), taken by 20(k+1) + 0.1,
		// dispatched by 20(k+1) + 1.1; its kernel runs 20k + 21.11 to
		// 20k + 31.11. Each gap (10 ms) is the wait on the workers' queue
		// and the take (input, 8.99 ms), the dispatch (host, 1 ms) and
		// the launch with Python already in the next step's wait (input,
		// 10 us); after the last launch the program has ended (untraced,
		// 10 us). The loader runs in worker processes and the loop still
		// waits on them: data-bound.
		name:    "jax-i/grain-workers-fall-behind",
		program: tracetest.JAXProgram{Steps: 6, Workers: 1, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec},
		verdict: DataBound, steps: 5,
		window:  Interval{31_110 * usec, 131_110 * usec},
		idle:    Breakdown{ByCause: [NumCauses]int64{Input: 5*9*msec - 10*usec, Host: 5 * msec, Untraced: 10 * usec}},
		finding: "slow-input",
	},
	{
		// jax-i with print(loss) ending each step. Kernel k runs 20k +
		// 21.11 to 20k + 31.11 as in jax-i (the loader sets the pace:
		// dropping print leaves the step at 20 ms); print returns when it
		// ends. Each 10 ms gap: the wait on the workers' queue and the
		// take (input, 8.99 ms: a wait inside the background loader is
		// input whatever the loop returned from), the dispatch right
		// after print returned (after-sync, 1 ms: the trace does not say
		// when the batch was ready) and the launch with Python in print
		// (in-sync, 10 us). Input decides, the loader in workers the loop
		// waits on: data-bound; sync is 5.05%, a secondary sequential.
		name:    "jax-l/grain-workers-fall-behind-print",
		program: tracetest.JAXProgram{Steps: 6, Workers: 1, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, Print: true},
		verdict: DataBound, steps: 5,
		window:  Interval{31_110 * usec, 131_110 * usec},
		idle:    Breakdown{ByCause: [NumCauses]int64{InSync: 5 * 10 * usec, AfterSync: 5 * msec, Input: 5*9*msec - 5*10*usec}},
		finding: "slow-input",
	},
	{
		// jax-c without the Python tracer: the loop thread shows only
		// the step annotation while grain loads. Each gap is the load's
		// last 9.99 ms and the launch's 10 us with the loop in the next
		// step's load (untraced, 10 ms), and the dispatch (host, 1 ms);
		// the last launch comes after the program's end (untraced, 10
		// us). Untraced alone passes the host threshold (47.6%):
		// host-bound at low confidence. All the untraced idle but that
		// last 10 us is before a step's first dispatch: the likely input.
		name:    "jax-j/python-tracer-off",
		program: tracetest.JAXProgram{Steps: 6, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, NoPythonTracer: true},
		verdict: HostBound, steps: 5,
		window: Interval{31_010 * usec, 136_010 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Host: 5 * msec, Untraced: 5 * 10 * msec}},
		likely: 5*10*msec - 10*usec,
	},
	{
		// jax-j on TPU: the queue thread's enqueue takes the launch's
		// place; the same timeline and figures.
		name:    "jax-k/tpu-python-tracer-off",
		program: tracetest.JAXProgram{Steps: 6, TPU: true, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, NoPythonTracer: true},
		verdict: HostBound, steps: 5,
		window: Interval{31_010 * usec, 136_010 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{Host: 5 * msec, Untraced: 5 * 10 * msec}},
		likely: 5*10*msec - 10*usec,
	},
	{
		// jax-c with grain's Dataset API inline instead of its
		// DataLoader: the load is batch.py > map.py __next__, inside them
		// the prefetch iterator's __next__ for 5 ms and then the user's
		// decode for 15 ms. The generic map.py and batch.py frames are
		// grain's in a trace holding its prefetch frame: the decode is
		// input too, and the figures are jax-c's.
		name:    "jax-m/grain-dataset-inline-slow",
		program: tracetest.JAXProgram{Steps: 6, Grain: tracetest.GrainDataset, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec},
		verdict: DataBound, steps: 5,
		window:  Interval{31_010 * usec, 136_010 * usec},
		idle:    Breakdown{ByCause: [NumCauses]int64{Input: 5*10*msec - 10*usec, Host: 5 * msec, Untraced: 10 * usec}},
		finding: "slow-input",
	},
	{
		// jax-a with grain's Dataset API inline: a 3 ms load, faster
		// than compute, exposed by print(loss): sequential, jax-a's
		// figures.
		name:    "jax-n/grain-dataset-inline-fast-print",
		program: tracetest.JAXProgram{Steps: 6, Grain: tracetest.GrainDataset, Load: 3 * msec, Dispatch: msec, Compute: 10 * msec, Print: true},
		verdict: Sequential, steps: 5,
		window: Interval{14_010 * usec, 84_060 * usec},
		idle:   Breakdown{ByCause: [NumCauses]int64{InSync: 5 * 10 * usec, AfterSync: 5 * 4 * msec}},
	},
	{
		// jax-g with grain's Dataset API inline: the 20 ms load after
		// print(loss) is longer than compute: data-bound, jax-g's figures.
		name:    "jax-o/grain-dataset-inline-slow-print",
		program: tracetest.JAXProgram{Steps: 6, Grain: tracetest.GrainDataset, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, Print: true},
		verdict: DataBound, steps: 5,
		window:  Interval{31_010 * usec, 186_060 * usec},
		idle:    Breakdown{ByCause: [NumCauses]int64{InSync: 5 * 10 * usec, AfterSync: 5 * 10 * msec, Input: 5 * 10 * msec, Host: 5 * msec}},
		finding: "slow-input",
	},
	{
		// jax-i with a ThreadPrefetchIterDataset instead of worker
		// processes: its thread makes a batch every 20 ms, the loop
		// waits in the prefetch iterator's __next__ on its queue (input,
		// the loader in the background: the trace holds the thread's
		// _put_iterator_elements_in_buffer). jax-i's timeline and figures.
		name:    "jax-p/grain-thread-prefetch-falls-behind",
		program: tracetest.JAXProgram{Steps: 6, Grain: tracetest.GrainDataset, Workers: 1, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec},
		verdict: DataBound, steps: 5,
		window:  Interval{31_110 * usec, 131_110 * usec},
		idle:    Breakdown{ByCause: [NumCauses]int64{Input: 5*9*msec - 10*usec, Host: 5 * msec, Untraced: 10 * usec}},
		finding: "slow-input",
	},
	{
		// A ThreadPrefetchIterDataset making a batch every 7.5 ms against
		// 10 ms of compute, queue of two. Batch k is ready at 7.5(k+1);
		// the first step takes it at 7.6, dispatches to 8.6, its kernel
		// runs 8.61 to 18.61; from then on the host is ahead, waiting on
		// the queue or inside the execute, and the device runs back to
		// back: steps every 10 ms from 18.61, no idle.
		name:    "jax-q/grain-thread-prefetch-keeps-up",
		program: tracetest.JAXProgram{Steps: 6, Grain: tracetest.GrainDataset, Workers: 1, Load: 7_500 * usec, Dispatch: msec, Compute: 10 * msec, Depth: 2},
		verdict: Parallel, steps: 5,
		window: Interval{18_610 * usec, 68_610 * usec},
	},
}

// TestJAXRuntimeOnAnotherThread: a TPU inference-like loop whose every
// call waits inside its execute while the execute thread defragments
// device memory (20 ms), then dispatches (1 ms), against 10 ms of
// compute. The timeline is jax-f's with the compilation moved off the loop
// thread: call k (from 0) runs from 21k to 21k + 21 ms, DefragmentMemory
// from 21k to 21k + 20 on py_xla_execute, its work from 21k + 21.01 to
// 21k + 31.01. Window 31.01 to 136.01 (first step dropped); each of the 5
// gaps (31.01 + 21k to 42.01 + 21k) is the defragmentation of the next
// call (9.99 ms) and of the one after (10 us; after the last call the
// program has ended: untraced) and the dispatch (host, 1 ms). So the
// runtime idle, 49.99 ms, is the defragmentation's: one call site of
// runtime cause, DefragmentMemory, 5 calls (steps 1 to 5), and the
// runtime-work finding names it, with the defragmentation's fix first.
func TestJAXRuntimeOnAnotherThread(t *testing.T) {
	p := tracetest.JAXProgram{Steps: 6, TPU: true, Defrag: 20 * msec, Dispatch: msec, Compute: 10 * msec}
	res := analyzeXPlane(t, p.Spec()).Result()
	want := Breakdown{ByCause: [NumCauses]int64{Runtime: 5*10*msec - 10*usec, Host: 5 * msec, Untraced: 10 * usec}}
	if res.Verdict != HostBound || res.Idle != want {
		t.Fatalf("verdict %s, idle %+v; want host-bound, %+v", res.Verdict, res.Idle, want)
	}
	i := slices.IndexFunc(res.CallSites, func(s CallSite) bool { return s.Cause == Runtime })
	if i < 0 {
		t.Fatalf("no runtime call site in %+v", res.CallSites)
	}
	if s := res.CallSites[i]; s.Call != tracetest.JAXDefrag || s.Count != 5 || s.Idle != want.Of(Runtime) {
		t.Errorf("runtime call site %+v, want %s, 5 calls, %d ns", s, tracetest.JAXDefrag, want.Of(Runtime))
	}
	if u := res.Unsited(); u != [NumCauses]int64{Untraced: 10 * usec} {
		t.Errorf("idle in no call site %v, want only the 10 us untraced", u)
	}
	f := res.Findings[0]
	if f.ID != "runtime-work" || !strings.Contains(f.Message, tracetest.JAXDefrag+" (50.0 ms)") ||
		!strings.Contains(f.Message, "on py_xla_execute/11, while the loop thread main/1 waited") ||
		!strings.HasPrefix(f.Fix, "DefragmentMemory means") || strings.Contains(f.Fix, "batch") {
		t.Errorf("first finding %s: %s\nfix: %s\nwant runtime-work naming %s on py_xla_execute, the defragmentation's fix first and no batches", f.ID, f.Message, f.Fix, tracetest.JAXDefrag)
	}
}

// TestJAXRealTraces checks that the shared JAX traces are explained on the
// loop thread: the first long gap of the conv benchmark is its first
// call's buffer allocation on the execute threads, the later ones
// block_until_ready; the TPU inference's long gaps are np.asarray reads,
// compilation, program loading and DefragmentMemory, with the stretches
// of untraced Python between them left untraced.
func TestJAXRealTraces(t *testing.T) {
	dir := realtraces.Dir(t)
	tests := []struct {
		file   string
		thread string
		// first and last are the causes of the longest gap starting
		// before and after split (ns).
		split       int64
		first, last Cause
		// culprits are the names the tally holds for a cause.
		culprits map[Cause]string
		// untraced is the most untraced idle allowed, as a share.
		untraced float64
	}{
		{
			file: "tracelens-jax-conv-block-until-ready.xplane.pb", thread: "python",
			split: 50 * msec, first: Runtime, last: InSync,
			culprits: map[Cause]string{Runtime: "Build buffer allocations", InSync: "api.py:3154 block_until_ready"},
			untraced: 0.01,
		},
		{
			file: "xprof-tpu-inference.xplane.pb", thread: "main/3116817",
			split: 7000 * msec, first: InSync, last: Runtime,
			culprits: map[Cause]string{Runtime: "TfrtTpuClient::DefragmentMemory", InSync: "np.asarray(jax.Array)"},
			untraced: 0.07,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, tt.file), trace.Options{})
			x := analysisOf(t, tr, err)
			res := x.Result()
			if res.Framework != JAX {
				t.Errorf("framework %q, want JAX", res.Framework)
			}
			var first, last *Gap
			for i := range res.Gaps {
				g := &res.Gaps[i]
				if g.Thread != tt.thread {
					t.Fatalf("gap at %d waits on %s, want the loop thread %s", g.Start, g.Thread, tt.thread)
				}
				p := &last
				if g.Start < tt.split {
					p = &first
				}
				if *p == nil || g.Dur > (*p).Dur {
					*p = g
				}
			}
			if first == nil || first.Cause != tt.first {
				t.Errorf("longest gap before %d: %+v, want cause %s", tt.split, first, tt.first)
			}
			if last == nil || last.Cause != tt.last {
				t.Errorf("longest gap after %d: %+v, want cause %s", tt.split, last, tt.last)
			}
			for c, name := range tt.culprits {
				if got := x.a.top(x.a.tally.names[c], 1); len(got) == 0 || got[0] != name {
					t.Errorf("%s idle mostly in %q, want %q", c, got, name)
				}
			}
			checkForeignAdvice(t, res)
			// The runtime work the devices waited on is a call site, and
			// the runtime-work finding names the work it was most.
			if u := res.Unsited(); u[Runtime] != 0 || u[InSync] != 0 {
				t.Errorf("runtime %d ns and sync %d ns of idle in no call site, want 0", u[Runtime], u[InSync])
			}
			i := slices.IndexFunc(res.Findings, func(f Finding) bool { return f.ID == "runtime-work" })
			if rt := tt.culprits[Runtime]; i < 0 || !strings.Contains(res.Findings[i].Message, "mostly in "+rt+" (") {
				t.Errorf("findings %+v: want runtime-work naming %s", res.Findings, rt)
			}
			if u := float64(res.Idle.Of(Untraced)) / float64(res.Window.Dur()); u > tt.untraced {
				t.Errorf("untraced %.1f%% of the window, want at most %.1f%%", 100*u, 100*tt.untraced)
			}
		})
	}
}

// TestJAXNames checks the pattern table on the names JAX, grain and
// MaxText write, as the XPlane reader gives them (Python frames without
// their "$"), and on names that look alike but are not.
func TestJAXNames(t *testing.T) {
	tests := []struct {
		name string
		want class
	}{
		{"api.py:3154 block_until_ready", classSync},
		{"array.py:641 __array__", classSync},
		{"array.py:652 _value", classSync},
		{"array.py:1226 _array_shard_arg", classNone},
		{"np.asarray(jax.Array)", classSync},
		{"data_loader.py:480 __next__", classInput},
		{"process_prefetch.py:212 __next__", classInput},
		{"multihost_dataloading.py:118 __next__", classInput},
		{"Iterator::Prefetch", classInput},
		{"backend_compile", classRuntime},
		{"pxla.py:2213 lower_sharding_computation", classRuntime},
		{"TfrtTpuClient::DefragmentMemory", classRuntime},
		{"LoadProgram", classRuntime},
		{"PjitFunction(train_step)", classDispatch},
		{"TfrtTpuLoadedExecutable::Execute", classDispatch},
		{"Scheduled TfrtTpuLoadedExecutable::Execute", classNone},
		{"PjRtStreamExecutorLoadedExecutable::ExecuteHelper", classNone},
	}
	names := make([]string, len(tests))
	for i, tt := range tests {
		names[i] = tt.name
	}
	opt := DefaultOptions()
	c, err := newClassifier(&trace.Trace{Strings: names}, &opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if got := c.of(trace.StrID(i)); got != tt.want {
			t.Errorf("%q: class %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestGrainNames checks grain's Dataset API names in and out of their
// context (see contextRules): the frames of grain's generic modules
// (map.py, batch.py) are input only in a trace that holds one of grain's
// own names, and its prefetch iterator's __next__ waits on background
// threads only in a trace that holds their frames.
func TestGrainNames(t *testing.T) {
	tests := []struct {
		name         string
		context      []string
		want         class
		inBackground bool
	}{
		{"prefetch.py:242 __next__", nil, classInput, false},
		{"PrefetchDatasetIterator.__next__", nil, classInput, false},
		{"_MapDatasetIterator.__next__", nil, classInput, false},
		{"ThreadPrefetchDatasetIterator.__next__", nil, classInput, true},
		{"Prefetch._getitem", nil, classInput, false},
		{"ArrayRecordDataSource.__getitem__", nil, classInput, false},
		{"map.py:307 __next__", nil, classNone, false},
		{"batch.py:300 __next__", nil, classNone, false},
		{"map.py:307 __next__", []string{"prefetch.py:242 __next__"}, classInput, false},
		{"batch.py:300 __next__", []string{"_BatchDatasetIterator.__next__"}, classInput, false},
		{"dataset.py:385 __getitem__", []string{"data_loader.py:480 __next__"}, classInput, false},
		{"map.py:12 apply", []string{"prefetch.py:242 __next__"}, classNone, false},
		{"prefetch.py:629 __next__", []string{"prefetch.py:510 _put_iterator_elements_in_buffer"}, classInput, true},
		{"PrefetchDatasetIterator.__next__", []string{"Prefetch._getitem"}, classInput, true},
		{"prefetch.py(12): __next__", nil, classNone, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultOptions()
			c, err := newClassifier(&trace.Trace{Strings: append([]string{tt.name}, tt.context...)}, &opt)
			if err != nil {
				t.Fatal(err)
			}
			if got, bg := c.of(0), c.inBackground(0); got != tt.want || bg != tt.inBackground {
				t.Errorf("with %q: class %d, background %v; want %d, %v", tt.context, got, bg, tt.want, tt.inBackground)
			}
		})
	}
}

// jaxScenario is a generated JAX program with its ground truth, worked out
// by hand from the program's timeline (see the comments on each case).
type jaxScenario struct {
	name    string
	program tracetest.JAXProgram
	verdict Verdict
	window  Interval
	steps   int
	idle    Breakdown
	// finding, when set, is the ID of the first finding.
	finding string
	// likely is the untraced idle before a step's first dispatch on a
	// loop thread without Python frames: the likely input (0 when the
	// Python tracer was on).
	likely int64
}

// analyzeXPlane writes s as XPlane, reads it back as the tool would and
// analyses it.
func analyzeXPlane(t *testing.T, s *tracetest.Spec) *Analysis {
	t.Helper()
	var buf bytes.Buffer
	if err := tracetest.WriteXPlane(&buf, s); err != nil {
		t.Fatal(err)
	}
	tr, err := xplane.Decode(buf.Bytes(), trace.Options{})
	return analysisOf(t, tr, err)
}

// analysisOf analyses tr, read with error err, with the default options.
func analysisOf(t *testing.T, tr *trace.Trace, err error) *Analysis {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	x, err := New(tr, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	advised(x.Result())
	return x
}

// TestJAXLoopThreadCopy: a JAX loop thread that copies each step's result
// to the host itself (cuMemcpyDtoHAsync, waiting for the step's work)
// blocks in that copy: its time is the run's blocking time. Each step
// dispatches for 100 us; the copy's call starts then and returns when the
// work (launched 10 us after the dispatch returns, 2 ms long) and the
// 500 us copy are done, 2.51 ms later. Whether the copy blocks is known
// only once every launch is linked, which the device scan, asking the
// loop thread for its dispatches, used to cut short.
func TestJAXLoopThreadCopy(t *testing.T) {
	const perStep = tracetest.LaunchDur + 2_000_000 + 500_000
	p := tracetest.JAXProgram{Steps: 6, Dispatch: 100_000, Compute: 2_000_000, Fetch: 500_000}
	res := analyzeXPlane(t, p.Spec()).Result()
	if res.Framework != JAX || res.Window.Steps == 0 {
		t.Fatalf("framework %q, %d steps: want a JAX run with steps", res.Framework, res.Window.Steps)
	}
	if want := int64(res.Window.Steps) * perStep; res.Blocking != want {
		t.Errorf("blocking %d ns over %d steps, want %d (%d a step in the copy)", res.Blocking, res.Window.Steps, want, int64(perStep))
	}
}

func TestJAXScenarios(t *testing.T) {
	for _, sc := range jaxScenarios {
		t.Run(sc.name, func(t *testing.T) {
			x := analyzeXPlane(t, sc.program.Spec())
			res := x.Result()
			if res.Framework != JAX {
				t.Errorf("framework %q, want JAX", res.Framework)
			}
			if res.Verdict != sc.verdict {
				t.Errorf("verdict %s (%q), want %s", res.Verdict, res.Reasons, sc.verdict)
			}
			if got := (Interval{res.Window.Start, res.Window.End}); got != sc.window || res.Window.Steps != sc.steps {
				t.Errorf("window %v with %d steps, want %v with %d", got, res.Window.Steps, sc.window, sc.steps)
			}
			if res.Idle != sc.idle {
				t.Errorf("idle %+v\nwant %+v", res.Idle, sc.idle)
			}
			if sc.finding != "" && (len(res.Findings) == 0 || res.Findings[0].ID != sc.finding) {
				t.Errorf("findings %+v, want %s first", res.Findings, sc.finding)
			}
			// (A program without load or print has no Python frame to
			// show either way.)
			if got := x.a.untracedBeforeDispatch(); got != sc.likely || sc.program.NoPythonTracer && !res.LoopUntraced {
				t.Errorf("likely input %d with loop untraced %v, want %d", got, res.LoopUntraced, sc.likely)
			}
			checkLikelyInput(t, res, sc.likely > 0)
			checkForeignAdvice(t, res)
		})
	}
}

// checkLikelyInput checks that the likely input of a profile without the
// Python tracer is named, at lower confidence, in a reason and a finding
// that says how to capture the tracer, or that neither is there (want).
func checkLikelyInput(t *testing.T, res *Result, want bool) {
	t.Helper()
	reason := slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, "likely the input pipeline: ") })
	i := slices.IndexFunc(res.Findings, func(f Finding) bool { return f.ID == "likely-input" })
	if reason != want || (i >= 0) != want {
		t.Fatalf("likely-input reason %v and finding %v, want %v: %q", reason, i >= 0, want, res.Reasons)
	}
	if !want {
		return
	}
	if f := res.Findings[i]; f.Severity != "medium" || !strings.Contains(f.Fix, "python_tracer_level") {
		t.Errorf("likely-input finding %+v, want medium severity and how to capture the Python tracer", f)
	}
	if res.Confidence != Low || res.Idle.Of(Input) != 0 {
		t.Errorf("confidence %s and input %d, want low and no input invented", res.Confidence, res.Idle.Of(Input))
	}
}

// TestFrameworkPatternsJoined checks that each framework's joined pattern
// (see joinPatterns) matches a name exactly when one of its patterns does,
// on names that match each pattern, fail at its end, or hold it mid-name.
func TestFrameworkPatternsJoined(t *testing.T) {
	names := []string{
		"", "vllm/worker", "x vllm/worker", "LLMEngine vllm::step", "PjitFunction(train_step)",
		"xPjitFunction(f)", "np.asarray(jax.Array)", "np.asarray(jax.Array) ", "jit_train_step", "jit_",
		"__inference_step_123", "EagerExecute", "EagerExecutes", "EagerKernelExecute",
		"ExecutorState::Process", "tf.data", "ProfilerStep#12", "ProfilerStep#12x", "aten::mm",
		"x aten::mm", "autograd::engine::evaluate", "torch/nn/modules/module.py", "cudaLaunchKernel",
	}
	for i, fp := range frameworkPatterns {
		joined := frameworkRegexps()[i]
		for _, name := range names {
			want := slices.ContainsFunc(fp.patterns, func(p string) bool { return regexp.MustCompile(p).MatchString(name) })
			if got := joined.match(name); got != want {
				t.Errorf("%s: %q matched %v by %q, %v by its patterns", fp.f, name, got, joined.re, want)
			}
		}
	}
}

// TestJAXWorkersOfUnknownCount: four grain workers of 80 ms a batch
// against 10 ms of compute (about 9 keep up: ceil(80 / 10) + 1). The loop
// waits on their queue (process_prefetch) but the profile does not hold
// the workers nor grain_worker_count: the estimate is no count (none that
// may be below the 4 running) and the fix gives the formula in k.
func TestJAXWorkersOfUnknownCount(t *testing.T) {
	r := analyzeSpec(t, tracetest.JAXProgram{Steps: 12, Workers: 4, Load: 80 * msec, Dispatch: msec, Compute: 10 * msec}.Spec())
	p := r.WorkerPlan()
	if p.OK || p.N != 0 || p.Case != WorkersUnknownShort || r.Loader.Known || !r.Loader.Background {
		t.Errorf("estimate %+v, loader %+v; want none, workers in the background of unknown count falling behind", p, r.Loader)
	}
	f := findingOf(r, "slow-input")
	if f == nil || !strings.Contains(f.Fix, "with k workers now") || regexp.MustCompile(`grain_worker_count=\d`).MatchString(f.Fix) || len(f.Settings) != 0 ||
		!strings.Contains(f.Fix, "grain.experimental.pick_performance_config (MaxText's grain_worker_count=-1)") {
		t.Errorf("slow-input %+v; want the formula in k, no count, and grain's own tuning", f)
	}
}

// TestJAXHostAhead: four grain workers deliver four batches at once every
// 80 ms, so the loop dispatches steps 2-4 (6-8, 10-12) within 0.3 ms and
// the GPU runs their 10 ms of work one after another, each launched as
// its dispatch returns. Each step holds its own dispatch's work: 10 ms,
// all busy; steps 5 and 9 wait 40 ms on input first. (The work used to go
// to the last dispatch that returned before it started, so steps 2-3 were
// empty and step 4 held 30 ms.)
func TestJAXHostAhead(t *testing.T) {
	r := analyzeSpec(t, tracetest.JAXProgram{Steps: 12, Workers: 4, Load: 80 * msec, Dispatch: msec, Compute: 10 * msec}.Spec())
	if len(r.Steps) != 11 {
		t.Fatalf("%d steps, want 11 (the warm-up dropped)", len(r.Steps))
	}
	for i, s := range r.Steps {
		want := Step{Dur: 10 * msec, DeviceBusy: 10 * msec}
		if n := i + 2; n == 5 || n == 9 {
			want.Dur = 50 * msec
		}
		if s.Dur != want.Dur || s.DeviceBusy != want.DeviceBusy {
			t.Errorf("step %d: %s long, %s busy; want %s, %s", i+2, human.Duration(s.Dur), human.Duration(s.DeviceBusy), human.Duration(want.Dur), human.Duration(want.DeviceBusy))
		}
	}
}

// TestForcedSyncCountsAgree: print(loss) ends each of 6 steps (jax-b's
// program); the window's 5 steps start 5 prints, and 6 hold the GPU idle
// in it (the warm-up step's print, whose return the first gap follows).
// The finding says why its count and the call sites' differ.
func TestForcedSyncCountsAgree(t *testing.T) {
	r := analyzeSpec(t, tracetest.JAXProgram{Steps: 6, Load: 3 * msec, Dispatch: msec, Compute: 10 * msec, Print: true}.Spec())
	f := findingOf(r, "forced-sync")
	if f == nil || len(f.Sites) != 1 || f.Sites[0].Count != 6 ||
		!strings.Contains(f.Message, "1 blocking call per step") || !strings.Contains(f.Message, "Of the 5 calls started in the window") || !strings.Contains(f.Message, "before the window if its first gap follows it: 6 calls.") {
		t.Errorf("forced-sync %+v; want 1 call per step, 6 at the site and why", f)
	}
}

// findingOf returns r's finding id, or nil.
func findingOf(r *Result, id string) *Finding {
	for i := range r.Findings {
		if r.Findings[i].ID == id {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestJAXWorkerAdviceSameOnGPUAndTPU: two grain worker processes in the
// profile, each making a batch in 124 ms (their per-batch frames back to
// back), against 40 ms of compute a step. The count is ceil(P / C) + 1 =
// ceil(124 / 40) + 1 = 5 on GPU and on TPU: T, C and P are the window's
// and the workers' figures, whichever step each device run is given to.
// The fix names the per-worker buffer and grain's own tuning beside it.
func TestJAXWorkerAdviceSameOnGPUAndTPU(t *testing.T) {
	for _, tpu := range []bool{false, true} {
		s := tracetest.JAXProgram{Steps: 12, TPU: tpu, Workers: 2, Load: 124 * msec, Dispatch: msec, Compute: 40 * msec}.Spec()
		for w := range int64(2) {
			s.Threads = append(s.Threads, tracetest.Thread{TID: 40 + w, Name: "grain_worker"})
			for i := range int64(7) {
				s.Events = append(s.Events, tracetest.Event{Role: tracetest.Python, Name: "$process_prefetch.py:300 _put_dataset_elements_in_buffer",
					Thread: 40 + w, Start: i * 124 * msec, Dur: 124 * msec})
			}
		}
		r := analyzeXPlane(t, s).Result()
		if p := r.WorkerPlan(); !p.OK || p.N != 5 {
			t.Errorf("TPU %v: estimate %+v; want 5", tpu, p)
		}
		f := findingOf(r, "slow-input")
		if f == nil || !strings.Contains(f.Fix, "grain_worker_count=5 (with grain_per_worker_buffer_size") ||
			!strings.Contains(f.Fix, "grain.experimental.pick_performance_config") {
			t.Errorf("TPU %v: slow-input %+v; want grain_worker_count=5 with the buffer and grain's own tuning", tpu, f)
		}
	}
}

// TestWorkElsewhereNamed: jax-k (TPU, the Python tracer off: each gap is
// 10 ms untraced and 1 ms of dispatch) with a runtime pool thread whose
// long-running loop holds BufferSequencingEvent::Execute over the first
// gap (31.01 to 42.01 ms). The untraced-thread finding names the inner
// work, not the loop around it, and how much of the gap it covered; on
// the real conv benchmark the forced-sync finding names a pool thread's
// BufferSequencingEvent::Execute in the same way.
func TestWorkElsewhereNamed(t *testing.T) {
	s := tracetest.JAXProgram{Steps: 6, TPU: true, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, NoPythonTracer: true}.Spec()
	s.Threads = append(s.Threads, tracetest.Thread{TID: 50, Name: "tf_pjrt_thread_pool"})
	s.Events = append(s.Events,
		tracetest.Event{Role: tracetest.CPUOp, Name: "ThreadPool::WorkerLoop", Thread: 50, Start: 0, Dur: 200 * msec},
		tracetest.Event{Role: tracetest.CPUOp, Name: "BufferSequencingEvent::Execute", Thread: 50, Start: 31_010 * usec, Dur: 11 * msec})
	f := findingOf(analyzeXPlane(t, s).Result(), "untraced-thread")
	want := "During the longest such gap (11.0 ms on TPU:0), tf_pjrt_thread_pool/50 ran BufferSequencingEvent::Execute for 11.0 ms of it"
	if f == nil || !strings.Contains(f.Message, want) {
		t.Errorf("untraced-thread %+v\nwant %q", f, want)
	}
	res := analyzeReal(t, "tracelens-jax-conv-block-until-ready.xplane.pb")
	if f := findingOf(res, "forced-sync"); f == nil || !regexp.MustCompile(`tf_pjrt_thread_pool/-?\d+ ran BufferSequencingEvent::Execute for \d`).MatchString(f.Message) {
		t.Errorf("conv benchmark forced-sync %+v: want the pool thread's BufferSequencingEvent::Execute named", f)
	}
}

// TestGrainDatasetAdvice: the slow-input finding of grain's Dataset API
// (jax-m inline, jax-p with a thread-prefetch iterator) calls the loader
// a grain Dataset pipeline and gives its own knob, mp_prefetch's worker
// count (inline: ceil(20 / 10) + 1 = 3), with grain's own tuning beside
// it; never the DataLoader's grain_worker_count.
func TestGrainDatasetAdvice(t *testing.T) {
	for _, tt := range []struct {
		name    string
		workers int
		fix     string
	}{
		{"inline", 0, "ds.mp_prefetch(grain.MultiprocessingOptions(num_workers=3))"},
		{"thread-prefetch", 1, "Raise the pipeline's worker processes, ds.mp_prefetch(grain.MultiprocessingOptions(num_workers=k))"},
	} {
		p := tracetest.JAXProgram{Steps: 6, Grain: tracetest.GrainDataset, Workers: tt.workers, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec}
		f := findingOf(analyzeXPlane(t, p.Spec()).Result(), "slow-input")
		if f == nil || !strings.Contains(f.Message, "The grain Dataset pipeline (") || !strings.Contains(f.Fix, tt.fix) ||
			!strings.Contains(f.Fix, "pick_performance_config") || strings.Contains(f.Fix, "grain_worker_count=3") {
			t.Errorf("%s: slow-input %+v\nwant the grain Dataset pipeline and %q", tt.name, f, tt.fix)
		}
		if want := []Setting{{"grain.mp_prefetch.num_workers", "3"}}; tt.workers == 0 && (f == nil || !slices.Equal(f.Settings, want)) {
			t.Errorf("%s: settings of %+v, want %v", tt.name, f, want)
		}
	}
}

// TestContextRuleLiterals: each name a context rule looks for holds one
// of its literals, which are looked for first.
func TestContextRuleLiterals(t *testing.T) {
	for i, r := range contextRules {
		for _, p := range r.when {
			if !slices.ContainsFunc(r.literals, func(l string) bool { return strings.Contains(p, l) }) {
				t.Errorf("rule %d: %q holds none of %q", i, p, r.literals)
			}
		}
	}
}

// TestGrainAnnotationsWithoutTracer: jax-k (TPU, the Python tracer off)
// whose loader is grain's Dataset API: grain still writes its annotation
// for XProf's input-pipeline analysis around each __next__
// (PrefetchDatasetIterator.__next__, the step's first 20 ms). The load is
// then input, not untraced: jax-c's figures, data-bound, and no
// likely-input guess.
func TestGrainAnnotationsWithoutTracer(t *testing.T) {
	p := tracetest.JAXProgram{Steps: 6, TPU: true, Load: 20 * msec, Dispatch: msec, Compute: 10 * msec, NoPythonTracer: true}
	s := p.Spec()
	for _, e := range s.Events {
		if e.Role == tracetest.Annotation && e.Name == "train" {
			s.Events = append(s.Events, tracetest.Event{Role: tracetest.CPUOp, Name: "PrefetchDatasetIterator.__next__", Thread: e.Thread, Start: e.Start, Dur: p.Load})
		}
	}
	x := analyzeXPlane(t, s)
	res := x.Result()
	want := Breakdown{ByCause: [NumCauses]int64{Input: 5*10*msec - 10*usec, Host: 5 * msec, Untraced: 10 * usec}}
	if res.Verdict != DataBound || res.Idle != want {
		t.Errorf("verdict %s, idle %+v; want data-bound, %+v", res.Verdict, res.Idle, want)
	}
	if got := x.a.untracedBeforeDispatch(); got != 0 {
		t.Errorf("likely input %d, want 0", got)
	}
	checkLikelyInput(t, res, false)
	checkForeignAdvice(t, res)
}
