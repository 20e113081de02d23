package analyze

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/internal/trace/trackname"
)

// TestCallSites runs scenarios a, b and n with Python stacks: the loop's
// loader, op, sync and copy calls sit at known lines (tracetest's *Line
// constants), and the idle of each scenario (see scenarios) lands on them.
func TestCallSites(t *testing.T) {
	script := func(line int) Frame { return Frame{File: tracetest.Script, Line: line, Function: "<module>"} }
	// The library frames the loop's lines call through (see loop.go).
	next := Frame{File: "torch/utils/data/dataloader.py", Line: 631, Function: "__next__"}
	callImpl := Frame{File: "torch/nn/modules/module.py", Line: 1779, Function: "_call_impl"}
	to := Frame{File: "torch/_tensor.py", Line: 1087, Function: "to"}
	tests := []struct {
		name  string
		loop  tracetest.Loop
		sites []CallSite
	}{
		{
			// a: each kept step's 4 ms gap follows aten::item's return.
			name: "a/sync-then-short-input",
			loop: scenarios[0].loop,
			sites: []CallSite{
				{Frame: script(tracetest.ItemLine), Call: "aten::item", Cause: InSync, Count: 5, Idle: 5 * 4 * msec},
			},
		},
		{
			// b: the last 10 ms of each input and the 1 ms op.
			name: "b/input-longer-than-compute",
			loop: scenarios[1].loop,
			sites: []CallSite{
				{Frame: script(tracetest.LoaderLine), Via: next, Call: tracetest.SingleProcessLoader, Cause: Input, Count: 5, Idle: 5 * 10 * msec},
				{Frame: script(tracetest.OpLine), Via: callImpl, Call: "aten::linear", Cause: Host, Count: 5, Idle: 5 * msec},
			},
		},
		{
			// n: 1 ms inside the copy call and 1 ms after it, each step.
			name: "n/pageable-copy-in-input",
			loop: scenarios[13].loop,
			sites: []CallSite{
				{Frame: Frame{File: tracetest.CopyFile, Line: tracetest.CopyLine, Function: "fetch_lengths"}, Via: to, Call: "cudaMemcpyAsync", Cause: InSync, Count: 5, Idle: 5 * 2 * msec},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.loop
			l.Stacks = true
			res := analyzeSpec(t, l.Spec())
			if !reflect.DeepEqual(res.CallSites, tc.sites) {
				t.Errorf("call sites\n got %+v\nwant %+v", res.CallSites, tc.sites)
			}
			if res.StackHint != "" {
				t.Errorf("stack hint %q on a trace with stacks", res.StackHint)
			}
			// Without stacks: the same calls, no frames, and the hint.
			res = analyzeSpec(t, tc.loop.Spec())
			for i := range tc.sites {
				tc.sites[i].Frame, tc.sites[i].Via = Frame{}, Frame{}
			}
			if !reflect.DeepEqual(res.CallSites, tc.sites) || res.StackHint == "" {
				t.Errorf("without stacks: call sites\n got %+v\nwant %+v\nhint %q", res.CallSites, tc.sites, res.StackHint)
			}
		})
	}
}

// TestPageableCopy: scenario n's device-to-host copy to pageable memory
// (704 bytes, 1 ms on the device) sits inside the input event; its call
// blocks 9 ms a step (from the end of loading, 7 ms before the previous
// kernel ends, to 1 ms after the copy) and 2 ms of each gap are blamed on
// it. Five kept steps.
func TestPageableCopy(t *testing.T) {
	l := scenarios[13].loop
	l.Stacks = true
	res := analyzeSpec(t, l.Spec())
	site := Frame{File: tracetest.CopyFile, Line: tracetest.CopyLine, Function: "fetch_lengths"}
	want := []CopyStat{{
		Direction: "DtoH", Memory: "pageable", Count: 5, Bytes: 5 * tracetest.PageableCopyBytes, Device: 5 * msec,
		Blocking: true, HostBlocked: 5 * 9 * msec, Idle: 5 * 2 * msec,
		Top: CopySize{Bytes: tracetest.PageableCopyBytes, Count: 5, HostBlocked: 5 * 9 * msec, Idle: 5 * 2 * msec, Call: "cudaMemcpyAsync", Frame: site},
	}}
	if !reflect.DeepEqual(res.Copies, want) {
		t.Errorf("copies\n got %+v\nwant %+v", res.Copies, want)
	}
	f := findingByID(res, "blocking-copy")
	if f == nil {
		t.Fatalf("no blocking-copy finding in %+v", res.Findings)
	}
	if f.Idle != 10*msec || !reflect.DeepEqual(f.Calls, []string{"cudaMemcpyAsync"}) || len(f.Sites) != 1 || f.Sites[0].Frame != site {
		t.Errorf("blocking-copy: idle %d, calls %q, sites %+v", f.Idle, f.Calls, f.Sites)
	}
}

// TestOpTable: scenario b's op, one aten::linear per step launching one
// kernel: 1 ms of host time and 1 ms of idle in each of the five kept
// steps, whose host spans make the window the calls are counted over (the
// warm-up step's is outside it).
func TestOpTable(t *testing.T) {
	l := scenarios[1].loop
	l.Stacks = true
	res := analyzeSpec(t, l.Spec())
	if len(res.Ops) != 1 {
		t.Fatalf("ops %+v, want aten::linear alone", res.Ops)
	}
	o := res.Ops[0]
	if o.Name != "aten::linear" || o.Idle != 5*msec || o.Calls != 5 || o.Launches != 5 || o.Host != 5*msec || o.Frame.Line != tracetest.OpLine {
		t.Errorf("op row %+v", o)
	}
}

func findingByID(res *Result, id string) *Finding {
	for i := range res.Findings {
		if res.Findings[i].ID == id {
			return &res.Findings[i]
		}
	}
	return nil
}

func TestParseFrame(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Frame
	}{
		{"train.py(42): <module>", Frame{"train.py", 42, "<module>"}},
		{"vllm/model_executor/models/llama.py(310): forward", Frame{"vllm/model_executor/models/llama.py", 310, "forward"}},
		{"train.py:42 train_step", Frame{"train.py", 42, "train_step"}},
		{"<built-in method item of Tensor object at 0x7f>", Frame{}},
		{"aten::linear", Frame{}},
		{"x.py(): f", Frame{}},
	} {
		if got := parseFrame(tc.in); got != tc.want {
			t.Errorf("parseFrame(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	for file, want := range map[string]bool{"torch/nn/modules/module.py": true, "/usr/lib/python3.11/threading.py": true, "site-packages/jax/_src/api.py": true, "train.py": false, "vllm/attention/layer.py": false,
		"api.py": true, "ufunc_api.py": true, "prefetch.py": true, "fromnumeric.py": true, "utils.py": false, "my/api.py": false} {
		if got := trackname.LibraryFile(file, false); got != want {
			t.Errorf("trackname.LibraryFile(%q) = %v, want %v", file, got, want)
		}
	}
	// grain's modules of common names are grain's only in a trace that
	// runs grain.
	for _, file := range []string{"map.py", "batch.py", "dataset.py", "data_loader.py"} {
		if trackname.LibraryFile(file, false) || !trackname.LibraryFile(file, true) {
			t.Errorf("trackname.LibraryFile(%q): want the user's without grain, grain's with it", file)
		}
	}
}

// nestedCallsTrace writes a Kineto trace of one host thread and two GPUs.
// The thread calls PjitFunction(step) twice, at 0 and 210 us; each call runs a
// nested PjitFunction(step) around its work, as JAX's jitted-function
// wrapper does (a name without "::", so the innermost event is blamed:
// the nested call, then the outer one after it returns). The first call
// launches a 30 us kernel on each GPU at 10 us, so the window (the
// devices' span; no steps) opens at 20 us, after the call began; both
// calls end by launching the next kernels after their nested call has
// returned, and the GPUs idle meanwhile, in the nested call and after it.
// Ground truth: two calls of PjitFunction(step), both during the window, each
// holding both GPUs idle.
func nestedCallsTrace() string {
	var evs []string
	add := func(format string, args ...any) { evs = append(evs, fmt.Sprintf(format, args...)) }
	corr := 0
	launch := func(at, start, dur int) {
		for dev := range 2 {
			corr++
			add(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":1,"args":{"correlation":%d}}`, at+dev, corr)
			add(`{"ph":"X","cat":"kernel","name":"k","pid":%d,"tid":7,"ts":%d,"dur":%d,"args":{"device":%d,"stream":7,"correlation":%d}}`, dev, start, dur, dev, corr)
		}
	}
	add(`{"ph":"X","cat":"cpu_op","name":"PjitFunction(step)","pid":1,"tid":1,"ts":0,"dur":150}`)
	add(`{"ph":"X","cat":"cpu_op","name":"PjitFunction(step)","pid":1,"tid":1,"ts":5,"dur":115}`)
	launch(10, 20, 30)
	launch(146, 155, 45)
	add(`{"ph":"X","cat":"cpu_op","name":"PjitFunction(step)","pid":1,"tid":1,"ts":210,"dur":50}`)
	add(`{"ph":"X","cat":"cpu_op","name":"PjitFunction(step)","pid":1,"tid":1,"ts":212,"dur":28}`)
	launch(255, 265, 35)
	return `{"traceEvents":[` + strings.Join(evs, ",") + `]}`
}

// TestCallCountsOnce: a call site counts each call once, however many
// devices and gaps it held idle and however deep it calls itself, and the
// op table counts the same calls, the one begun before the window too.
func TestCallCountsOnce(t *testing.T) {
	res := analyzeJSON(t, nestedCallsTrace())
	var site *CallSite
	for i := range res.CallSites {
		if res.CallSites[i].Call == "PjitFunction(step)" {
			site = &res.CallSites[i]
		}
	}
	if site == nil || site.Count != 2 {
		t.Errorf("PjitFunction(step) call site %+v in %+v, want 2 calls", site, res.CallSites)
	}
	if i := slices.IndexFunc(res.Ops, func(o OpCost) bool { return o.Name == "PjitFunction(step)" }); i < 0 || res.Ops[i].Calls != 2 {
		t.Errorf("ops %+v, want PjitFunction(step) with 2 calls", res.Ops)
	}
}

// TestUserLineThroughLibraries: jax-e's op-by-op program (10 jitted calls
// a step, all host-bound) with Python frames around each call, as JAX's
// tracer writes them (basenames, no folders). Every host call site names
// the innermost frame outside the libraries (libraryModules) and, beside
// it, the library frame that line called through; where no frame is the
// user's, none is named and the outermost library frame is the via.
func TestUserLineThroughLibraries(t *testing.T) {
	user := Frame{File: "elementwise.py", Line: 12, Function: "step"}
	model := Frame{File: "model.py", Line: 5, Function: "apply"}
	ufunc := Frame{File: "ufunc_api.py", Line: 182, Function: "__call__"}
	api := Frame{File: "api.py", Line: 1290, Function: "vmap_f"}
	lax := Frame{File: "lax_numpy.py", Line: 2470, Function: "where"}
	for _, tc := range []struct {
		name       string
		stack      []Frame // outermost first, around each call
		frame, via Frame
	}{
		{"user-through-numpy-api", []Frame{user, ufunc, {File: "reductions.py", Line: 300, Function: "_reduce_sum"}}, user, ufunc},
		{"user-callback-inside-jax", []Frame{user, api, {File: "pjit.py", Line: 337, Function: "cache_miss"}, model, lax}, model, lax},
		{"no-user-frame", []Frame{api, {File: "threading.py", Line: 320, Function: "wait"}}, Frame{}, api},
		{"user-frame-only", []Frame{user}, user, Frame{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tracetest.JAXProgram{Steps: 6, Calls: 10, Dispatch: 200 * usec, Compute: 50 * usec}.Spec()
			// The frames go first: of events of one interval, the first
			// holds the others.
			var frames []tracetest.Event
			for _, e := range s.Events {
				if e.Name != tracetest.JAXDispatch {
					continue
				}
				for _, f := range tc.stack {
					frames = append(frames, tracetest.Event{Role: tracetest.Python, Name: "$" + f.String(), Thread: e.Thread, Start: e.Start, Dur: e.Dur})
				}
			}
			s.Events = append(frames, s.Events...)
			res := analyzeXPlane(t, s).Result()
			n := 0
			for _, site := range res.CallSites {
				if site.Cause != Host {
					continue
				}
				n++
				if site.Frame != tc.frame || site.Via != tc.via {
					t.Errorf("host call site %q at %q via %q, want at %q via %q", site.Call, site.Frame, site.Via, tc.frame, tc.via)
				}
			}
			if n == 0 {
				t.Fatalf("no host call site in %+v", res.CallSites)
			}
			f := findingByID(res, "dispatch-overhead")
			if want := "Called from " + user.String() + " via " + ufunc.String(); tc.name == "user-through-numpy-api" && (f == nil || !strings.Contains(f.Message, want)) {
				t.Errorf("dispatch-overhead finding %+v, want %q", f, want)
			}
		})
	}
}
