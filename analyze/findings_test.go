package analyze

import (
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace/tracetest"
)

func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		scenario int
		id       string // "" for no finding at all
		severity string
		message  []string // substrings of the message
		fix      []string // substrings of the fix
	}{
		{0, "forced-sync", "high", []string{"aten::item", "20.0 ms of device idle", "28.6% of the window", "1.0 blocking calls per step"}, []string{".item()"}},
		// Input per step 20 ms against 12 ms busy per step (the window
		// holds the warm-up step's kernel too): ceil(20/12) + 1 = 3.
		{1, "slow-input", "high", []string{tracetest.SingleProcessLoader, "20.0 ms per step against 12.0 ms"}, []string{"num_workers=3", "estimate"}},
		{3, "", "", nil, nil},
		{4, "dispatch-overhead", "high", []string{"aten::linear", "74.6%"}, []string{"CUDA graphs"}},
		{10, "untraced-thread", "medium", []string{"43.5%", "thread 1 (python)"}, nil},
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

func TestFormatDuration(t *testing.T) {
	for ns, want := range map[int64]string{
		0: "0 ns", 850: "850 ns", 12_400: "12.4 us", 48_200_000: "48.2 ms", 1_234_567: "1.23 ms",
		999_999: "1.00 ms", 999_400: "999 us", 3_200_000_000: "3.20 s", 150 * msec: "150 ms",
	} {
		if got := formatDuration(ns); got != want {
			t.Errorf("formatDuration(%d) = %q, want %q", ns, got, want)
		}
	}
}
