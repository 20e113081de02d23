package analyze

import (
	"reflect"
	"testing"

	"github.com/tracegap/tracegap/trace/tracetest"
)

// TestCallSites runs scenarios a, b and n with Python stacks: the loop's
// loader, op, sync and copy calls sit at known lines (tracetest's *Line
// constants), and the idle of each scenario (see scenarios) lands on them.
func TestCallSites(t *testing.T) {
	script := func(line int) Frame { return Frame{File: tracetest.Script, Line: line, Function: "<module>"} }
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
				{Frame: script(tracetest.LoaderLine), Call: tracetest.SingleProcessLoader, Cause: Input, Count: 5, Idle: 5 * 10 * msec},
				{Frame: script(tracetest.OpLine), Call: "aten::linear", Cause: Host, Count: 5, Idle: 5 * msec},
			},
		},
		{
			// n: 1 ms inside the copy call and 1 ms after it, each step.
			name: "n/pageable-copy-in-input",
			loop: scenarios[13].loop,
			sites: []CallSite{
				{Frame: Frame{File: tracetest.CopyFile, Line: tracetest.CopyLine, Function: "fetch_lengths"}, Call: "cudaMemcpyAsync", Cause: InSync, Count: 5, Idle: 5 * 2 * msec},
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
				tc.sites[i].Frame = Frame{}
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
	for file, want := range map[string]bool{"torch/nn/modules/module.py": true, "/usr/lib/python3.11/threading.py": true, "site-packages/jax/_src/api.py": true, "train.py": false, "vllm/attention/layer.py": false} {
		if got := frameworkFile(file); got != want {
			t.Errorf("frameworkFile(%q) = %v, want %v", file, got, want)
		}
	}
}
