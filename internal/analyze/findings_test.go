package analyze

import (
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		scenario int
		id       string // "" for no finding at all
		severity string
		message  []string // substrings of the message
		fix      []string // substrings of the fix
	}{
		{0, "forced-sync", "high", []string{"On thread 1 (python) the host blocks on the GPU in aten::item (1 blocking call per step)", "20.0 ms of idle in all, 28.6% of the window"}, []string{".item()"}},
		// Input per step 20 ms against a 10 ms kernel per step (the
		// window starts where the warm-up step's kernel ends):
		// ceil(20/10) + 1 = 3.
		{1, "slow-input", "high", []string{"The single-process DataLoader (" + tracetest.SingleProcessLoader + ")", "20.0 ms per step on thread 1 (python)", "against 10.0 ms of GPU work per step", "47.6% of the window"},
			[]string{"num_workers=3", "ceil(20.0 ms / 10.0 ms) + 1 = 3: 2 workers loading side by side keep up", "estimate"}},
		{3, "", "", nil, nil},
		{4, "dispatch-overhead", "high", []string{"75.0% of the window, mostly while thread 1 (python) is in aten::linear"}, []string{"CUDA graphs"}},
		// Untraced idle alone decided host-bound: its finding is the
		// verdict's, naming the thread and how to capture it.
		{10, "untraced-thread", "high", []string{"43.5%", "thread 1 (python)"}, []string{"with_stack=True"}},
		// l: loading 6 ms inline against 8 ms of compute, exposed.
		{11, "inline-input", "high", []string{"The single-process DataLoader", "6.00 ms per step on thread 1 (python)", "against 8.00 ms of GPU work per step"}, []string{"num_workers=2"}},
		// n: one pageable copy per step, counted over the steps' host
		// spans (each starts before the device ends the step before).
		{13, "forced-sync", "high", []string{"in cudaMemcpyAsync (1 blocking call per step)", "10.0 ms of idle in all"}, []string{"pin_memory=True"}},
	} {
		sc := scenarios[tc.scenario]
		t.Run(sc.name, func(t *testing.T) {
			res := analyzeSpec(t, sc.loop.Spec())
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

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 blocking calls", 1: "1 blocking call", 2: "2 blocking calls"} {
		if got := plural(n, "blocking call"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
