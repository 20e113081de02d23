package advice

import (
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestFindings: the first finding of analyze's scenarios (scenario_test.go
// there, by name), with its severity, figures and fix.
func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		loop     tracetest.Loop // the loops of analyze's scenarios
		id       string         // "" for no finding at all
		severity string
		message  []string // substrings of the message
		fix      []string // substrings of the fix
	}{
		{"a/sync-then-short-input", tracetest.Loop{Steps: 6, Input: 3 * msec, Dispatch: 1 * msec, Compute: 10 * msec, Sync: true}, "forced-sync", "high", []string{"On thread 1 (python) the host blocks on the GPU in aten::item (1 blocking call per step)", "20.0 ms of idle in all, 28.6% of the window"}, []string{".item()"}},
		// Input per step 20 ms against a 10 ms kernel per step (the
		// window starts where the warm-up step's kernel ends):
		// ceil(20/10) + 1 = 3.
		{"b/input-longer-than-compute", tracetest.Loop{Steps: 6, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec}, "slow-input", "high", []string{"The single-process DataLoader (" + tracetest.SingleProcessLoader + ")", "20.0 ms per step on thread 1 (python)", "against 10.0 ms of GPU work per step", "47.6% of the window"},
			[]string{"num_workers=3", "ceil(20.0 ms / 10.0 ms) + 1 = 3: 2 workers loading side by side keep up", "estimate"}},
		{"d/prefetching-workers", tracetest.Loop{Steps: 6, Input: 500 * usec, InputName: tracetest.MultiProcessLoader, Dispatch: 1 * msec, Compute: 10 * msec}, "", "", nil, nil},
		{"e/heavy-dispatch", tracetest.Loop{Steps: 6, Dispatch: 200 * usec, Kernels: 10, Compute: 50 * usec}, "dispatch-overhead", "high", []string{"75.0% of the window, mostly while thread 1 (python) is in aten::linear"}, []string{"CUDA graphs"}},
		// Untraced idle alone decided host-bound: its finding is the
		// verdict's, naming the thread and how to capture it.
		{"k/untraced", tracetest.Loop{Steps: 6, NoStepMarkers: true, UntracedInput: true, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec}, "untraced-thread", "high", []string{"43.5%", "thread 1 (python)"}, []string{"with_stack=True"}},
		// l: loading 6 ms inline against 8 ms of compute, exposed.
		{"l/inline-loader-dispatch-bound", tracetest.Loop{Steps: 6, Input: 6 * msec, Dispatch: 1500 * usec, Kernels: 4, Compute: 2 * msec}, "inline-input", "high", []string{"The single-process DataLoader", "6.00 ms per step on thread 1 (python)", "against 8.00 ms of GPU work per step"}, []string{"num_workers=2"}},
		// n: one pageable copy per step, counted over the steps' host
		// spans (each starts before the device ends the step before).
		{"n/pageable-copy-in-input", tracetest.Loop{Steps: 6, Input: 3 * msec, InputName: "## sparse_data_dist ##", PageableCopy: 1 * msec, Dispatch: 1 * msec, Compute: 10 * msec}, "forced-sync", "high", []string{"in cudaMemcpyAsync (1 blocking call per step)", "10.0 ms of idle in all"}, []string{"pin_memory=True"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Analyze(tracetest.Build(tc.loop.Spec()), analyze.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if tc.id == "" {
				if len(res.Findings) != 0 {
					t.Errorf("findings %+v, want none", res.Findings)
				}
				return
			}
			if len(res.Findings) == 0 || res.Findings[0].ID != tc.id || res.Findings[0].Severity != tc.severity {
				t.Fatalf("findings %+v, want %s (%s) first", res.Findings, tc.id, tc.severity)
			}
			f := res.Findings[0]
			for _, s := range tc.message {
				if !strings.Contains(f.Message, s) {
					t.Errorf("message %q lacks %q", f.Message, s)
				}
			}
			for _, s := range tc.fix {
				if !strings.Contains(f.Fix, s) {
					t.Errorf("fix %q lacks %q", f.Fix, s)
				}
			}
		})
	}
}
