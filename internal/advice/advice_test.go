package advice

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
)

const (
	usec = int64(1000)
	msec = 1000 * usec
)

// frameworkWords are words only one framework's advice uses. vLLM runs on
// PyTorch, so PyTorch's words are not foreign to it; tf.data is left out,
// as JAX programs load with it too.
var frameworkWords = map[analyze.Framework][]string{
	analyze.PyTorch:    {"pin_memory", ".item()", "with_stack", "DataLoader", "torch"},
	analyze.JAX:        {"jax", "lax.", "block_until_ready", "grain", "static_argnums", "MaxText"},
	analyze.TensorFlow: {"tf.function", "Keras", "tf.summary", "tf.profiler"},
	analyze.VLLM:       {"vLLM", "enforce_eager"},
}

// foreignWords returns the words a fix for f must not use: every other
// framework's, and CUDA graphs where the framework has none of its own.
func foreignWords(f analyze.Framework) []string {
	if f == analyze.UnknownFramework {
		return nil
	}
	var ws []string
	for g, words := range frameworkWords {
		if g != f && (f != analyze.VLLM || g != analyze.PyTorch) {
			ws = append(ws, words...)
		}
	}
	if f == analyze.JAX || f == analyze.TensorFlow {
		ws = append(ws, "CUDA graph")
	}
	return ws
}

// TestFrameworkFixes checks each fix in each framework's terms: its own
// words, never another framework's.
func TestFrameworkFixes(t *testing.T) {
	fixes := map[string]func(a *adviser) string{
		"sync":     (*adviser).syncFix,
		"dispatch": (*adviser).dispatchFix,
		"runtime":  (*adviser).runtimeFix,
		"untraced": (*adviser).untracedFix,
		"stacks":   func(a *adviser) string { return stackHintFor(a.r.Framework, false) },
	}
	tests := []struct {
		f      analyze.Framework
		graphs bool // the trace launches graphs
		// want holds a phrase each fix must use, by fix.
		want map[string]string
	}{
		{f: analyze.PyTorch, want: map[string]string{"sync": ".item()", "dispatch": "torch.compile", "untraced": "with_stack=True", "stacks": "with_stack=True"}},
		{f: analyze.JAX, want: map[string]string{"sync": "jax.device_get", "dispatch": "jax.jit", "runtime": "static_argnums", "untraced": "python_tracer_level=1", "stacks": "jax.profiler.start_trace"}},
		{f: analyze.TensorFlow, want: map[string]string{"sync": "tf.summary", "dispatch": "tf.function", "runtime": "input_signature", "untraced": "python_tracer_level=1", "stacks": "tf.profiler.experimental.start"}},
		{f: analyze.UnknownFramework, want: map[string]string{"sync": "cudaMemcpyAsync", "dispatch": "cudaGraphLaunch"}},
		{f: analyze.VLLM, want: map[string]string{"dispatch": "eager mode (the trace holds no CUDA or HIP graph launch)"}},
		{f: analyze.VLLM, graphs: true, want: map[string]string{"dispatch": "vLLM already replays CUDA graphs"}},
	}
	for _, tt := range tests {
		r := &analyze.Result{Framework: tt.f, Facts: analyze.Facts{GraphLaunches: tt.graphs}}
		a := &adviser{r: r, f: &r.Facts}
		for name, fix := range fixes {
			got := fix(a)
			if w, ok := tt.want[name]; ok && !strings.Contains(got, w) {
				t.Errorf("%s %s fix %q lacks %q", tt.f, name, got, w)
			}
			for _, w := range foreignWords(tt.f) {
				if strings.Contains(got, w) {
					t.Errorf("%s %s fix uses %q: %s", tt.f, name, w, got)
				}
			}
		}
	}
}

// TestJITFix: run-time CUDA compilation gets the JIT fix in any
// framework, with how to leave warm-up out of the profiler that recorded
// the trace: nsys's capture range, torch.profiler's schedule.
func TestJITFix(t *testing.T) {
	tests := []struct {
		f           analyze.Framework
		format      string
		want, never string
	}{
		{analyze.UnknownFramework, nsightFormat, "--capture-range=cudaProfilerApi", "torch"},
		{analyze.PyTorch, nsightFormat, "--capture-range=cudaProfilerApi", "torch.profiler"},
		{analyze.PyTorch, "chrome", "torch.profiler.schedule", "nsys"},
		{analyze.JAX, "xplane", "NVRTC", "torch"},
	}
	for _, tt := range tests {
		r := &analyze.Result{Framework: tt.f, Source: analyze.Source{Format: tt.format}}
		r.Facts.Causes[analyze.Runtime].Top = []analyze.NamedIdle{{Name: "nvrtcCompileProgram", Idle: msec}}
		got := (&adviser{r: r, f: &r.Facts}).runtimeFix()
		if !strings.Contains(got, "NVRTC") || !strings.Contains(got, tt.want) || strings.Contains(got, tt.never) {
			t.Errorf("%s %s: runtime fix %q, want NVRTC and %q, not %q", tt.f, tt.format, got, tt.want, tt.never)
		}
	}
}

// TestLoaderAdvice: every kind of input pipeline with advice of its own is
// a kind the analysis names, and one with settings says how to set them.
func TestLoaderAdvice(t *testing.T) {
	known := map[string]bool{}
	for _, name := range []string{"_SingleProcessDataLoaderIter", "_MultiProcessingDataLoaderIter", "IteratorGetNext", "grain_iterator_next", "prefetch.py:450 __next__"} {
		known[analyze.LoaderKindOf(name)] = true
	}
	for _, k := range loaderKinds {
		if !known[k.name] {
			t.Errorf("loader kind %q is not one the analysis names", k.name)
		}
		if k.settings != nil && k.advice == nil {
			t.Errorf("loader kind %q has settings but no advice to give them in", k.name)
		}
	}
}
func TestWorkerAdvice(t *testing.T) {
	for _, tc := range []struct {
		kind          string
		load, compute int64
		want          string
	}{
		// ResNet50 with num_workers=0: 46.8 ms of loading per 104 ms step.
		{"single-process DataLoader", 46800 * usec, 104 * msec, "num_workers=2, pin_memory=True, persistent_workers=True). Derived as ceil(load / compute) + 1 = ceil(46.8 ms / 104 ms) + 1 = 2: one worker loading in the background keeps up with compute, plus one spare."},
		{"single-process DataLoader", 30 * msec, 10 * msec, "= 4: 3 workers loading side by side keep up"},
		{"multi-process DataLoader", 5 * msec, 10 * msec, "ceil(k * (10.0 ms + 5.00 ms) / 10.0 ms) would keep up (from k = 4: 6)"},
	} {
		if got := workerAdvice(tc.kind, tc.load, tc.compute); !strings.Contains(got, tc.want) {
			t.Errorf("workerAdvice(%s, %d, %d) = %q, want it to hold %q", tc.kind, tc.load, tc.compute, got, tc.want)
		}
	}
}

// TestOpFixes: every known op cost the analysis names has a fix here, and
// every fix is of a known cost.
func TestOpFixes(t *testing.T) {
	known := analyze.KnownCosts()
	for _, k := range known {
		if x, ok := opFixes[k]; !ok || x.fix == "" || x.setting.Name == "" {
			t.Errorf("known cost %q has no fix or setting", k)
		}
	}
	for k := range opFixes {
		if !slices.Contains(known, k) {
			t.Errorf("fix for %q, which the analysis does not name", k)
		}
	}
}

// TestDerive: each case of the worker estimate is derived from its own
// figures.
func TestDerive(t *testing.T) {
	for _, tt := range []struct {
		p    analyze.WorkerPlan
		want string
	}{
		{analyze.WorkerPlan{}, ""},
		{analyze.WorkerPlan{Case: analyze.WorkersInline, N: 3, OK: true, Input: 20 * msec, Compute: 10 * msec}, "ceil(L / C) + 1 = ceil(20.0 ms / 10.0 ms) + 1 = 3:"},
		{analyze.WorkerPlan{Case: analyze.WorkersBehind, N: 5, OK: true, Step: 40 * msec, Compute: 20 * msec, PerBatch: 80 * msec, Workers: 2}, "with k = 2 workers a batch comes every step of T = 40.0 ms, so a worker takes about P = k * T = 80.0 ms per batch; ceil(P / C) + 1 = ceil(80.0 ms / 20.0 ms) + 1 = 5"},
		{analyze.WorkerPlan{Case: analyze.WorkersPerBatchEnough, N: 4, OK: true, Compute: 40 * msec, PerBatch: 120 * msec, Workers: 4}, "a worker takes P = 120 ms per batch, so 4 deliver one per 30.0 ms against C = 40.0 ms"},
		{analyze.WorkerPlan{Case: analyze.WorkersUnknownShort, Step: 30 * msec, Compute: 10 * msec}, "each takes about k * T = k * 30.0 ms per batch, so about ceil(k * 30.0 ms / 10.0 ms) + 1"},
	} {
		if got := derive(&tt.p); !strings.Contains(got, tt.want) || (tt.want == "") != (got == "") {
			t.Errorf("derive(%+v) = %q, want it to hold %q", tt.p, got, tt.want)
		}
	}
}

// TestStabilitySentence: the step times' stability in a line, graded from
// MinSteadySteps steps on.
func TestStabilitySentence(t *testing.T) {
	for _, tt := range []struct {
		durs []int64
		want string
	}{
		{nil, "no steps"},
		{[]int64{3_070_000}, "not graded, 1 step only: median 3.07 ms, max 3.07 ms"},
		{[]int64{10_000_000, 30_000_000}, "not graded, 2 steps only: median 20.0 ms, max 30.0 ms"},
		{[]int64{10_000_000, 10_000_000, 10_000_000}, "stable: median 10.0 ms, p90 10.0 ms, max 10.0 ms, spread 0.0% over 3 steps"},
	} {
		r := &analyze.Result{}
		for _, d := range tt.durs {
			r.Steps = append(r.Steps, analyze.Step{Dur: d})
		}
		st := r.Stability()
		if got := StabilitySentence(&st); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.durs, got, tt.want)
		}
	}
}

// TestDecisionSentence: each way the verdict rule decides, with its
// figures.
func TestDecisionSentence(t *testing.T) {
	share := func(name string, v, threshold float64) analyze.CauseShare {
		return analyze.CauseShare{Name: name, Share: v, Threshold: threshold}
	}
	shares := [4]analyze.CauseShare{share("sync", 0.01, 0.05), share("input", 0.3, 0.05), share("host", 0.02, 0.15), share("stalled", 0, 0.15)}
	for _, tt := range []struct {
		d    analyze.Decision
		want string
	}{
		{analyze.Decision{How: analyze.DecidedEmpty}, "the window is empty"},
		{analyze.Decision{How: analyze.DecidedNone, Shares: shares}, "no cause of device idle passes its threshold: sync 1.0% (threshold 5.0%), input 30.0% (5.0%), other host work 2.0% (15.0%), stalled 0.0% (15.0%)"},
		{analyze.Decision{How: analyze.DecidedByUntraced, Untraced: 0.4, HostThreshold: 0.15}, "device idle while the waited-for host thread shows no event is 40.0% of the window (over the host threshold 15.0%)"},
		{analyze.Decision{How: analyze.DecidedByShare, Top: shares[1], Slow: true, Input: 20 * msec, Busy: 10 * msec}, "input-caused device idle is 30.0% of the window (threshold 5.0%), and loading (20.0 ms) takes longer than the device's compute (10.0 ms)"},
		{analyze.Decision{How: analyze.DecidedByShare, Top: shares[1], Background: true, Input: 5 * msec, Busy: 10 * msec}, "the loop still waits on their queue (5.00 ms against compute 10.0 ms)"},
	} {
		if got := DecisionSentence(&tt.d); !strings.Contains(got, tt.want) {
			t.Errorf("DecisionSentence(%+v) = %q, want it to hold %q", tt.d, got, tt.want)
		}
	}
}

// TestReasons: the reasons of a run without device work and why a run's
// confidence is not high, each from its grounds, in order.
func TestReasons(t *testing.T) {
	nodev := noDeviceReasons(&analyze.Grounds{HostEvents: 12, HostSteps: &analyze.HostSteps{N: 2, Source: "ProfilerStep", Dur: 40 * msec, Input: 10 * msec}, Truncated: true})
	want := []string{
		"the trace holds 12 host events but no device activity (no kernels, copies or device ops): nothing to attribute",
		"host only: 2 steps (ProfilerStep) of 20.0 ms on average; the input pipeline takes 5.00 ms of each, 25.0% of the steps' time",
		"the trace file was cut short and only its first part was read: the device activity may be in the part that is missing (profilers write device events after host events)",
	}
	if !slices.Equal(nodev, want) {
		t.Errorf("no-device reasons %q, want %q", nodev, want)
	}
	conf := confidenceReasons(&analyze.Grounds{FewSteps: 2, MostlyUntraced: true, Untraced: 7 * msec, FewLinks: true, Linked: 3, LinkWork: 10})
	want = []string{
		"only 2 steps in the window: too few to tell a steady state",
		"the largest share of device idle (7.00 ms) falls where the waited-for host thread shows no event: it was not traced",
		"only 3 of 10 pieces of device work link back to a host launch: the waited-for thread is a best guess",
	}
	if !slices.Equal(conf, want) {
		t.Errorf("confidence reasons %q, want %q", conf, want)
	}
}

// TestLoaderFrom: where the worker count was read, in words, for each
// source the analysis names.
func TestLoaderFrom(t *testing.T) {
	for _, tt := range []struct {
		l    analyze.Loader
		want string
	}{
		{analyze.Loader{Known: true, Workers: 8, Source: analyze.LoaderFromMeta, MetaKey: "num_workers"}, "num_workers in the trace's metadata"},
		{analyze.Loader{Known: true, Workers: 1, Source: analyze.LoaderFromThreads}, "1 worker thread in the trace"},
		{analyze.Loader{Known: true, Workers: 4, Source: analyze.LoaderFromThreads}, "4 worker threads in the trace"},
		{analyze.Loader{Known: true, Source: analyze.LoaderFromIterator}, "the single-process DataLoader iterator"},
		{analyze.Loader{}, ""},
	} {
		if got := loaderFrom(tt.l); got != tt.want {
			t.Errorf("loaderFrom(%+v) = %q, want %q", tt.l, got, tt.want)
		}
	}
}
