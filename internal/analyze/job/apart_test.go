package job

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// noCollectives returns the ranks' traces of j without their all-reduces:
// ranks that nothing ties together but their clocks.
func noCollectives(t *testing.T, j tracetest.Job) []*trace.Trace {
	t.Helper()
	var ts []*trace.Trace
	for _, s := range j.Specs() {
		s.Events = slices.DeleteFunc(s.Events, func(e tracetest.Event) bool {
			return e.Name == tracetest.AllReduceOp || e.Name == tracetest.AllReduceKernel
		})
		ts = append(ts, tracetest.Build(s))
	}
	return ts
}

// TestAnalyzeApart: ranks whose device work does not overlap in time, with
// no collective to align their clocks (separate runs), are not one job:
// refused (ErrNotOneJob) with both named and how far apart they are.
// Collectives align clocks however far apart; ranks that overlap in time
// are a job without collectives.
func TestAnalyzeApart(t *testing.T) {
	// Each rank's device work spans 2 steps of 0.55 ms less the first
	// compute's launch: well under 1 s.
	job := tracetest.Job{Steps: 2, Input: []int64{100_000, 100_000}, Dispatch: 20_000,
		CollectiveDispatch: 20_000, Compute: 500_000, Transfer: 50_000}
	apart := job
	apart.ClockOffset = []int64{0, 10_000_000_000} // 10 s
	named := func(ts []*trace.Trace) []*trace.Trace {
		for i, tr := range ts {
			tr.Path = []string{"a.json", "b.json"}[i]
		}
		return ts
	}
	tests := []struct {
		name   string
		traces []*trace.Trace
		errSub string
	}{
		{"apart, no collective", named(noCollectives(t, apart)), "a.json and b.json: not one job's ranks: their device work does not overlap in time (the second's starts 10.0 s after the first's ends)"},
		{"apart, aligned by collectives", named(jobTraces(t, apart, "build")), ""},
		{"together, no collective", named(noCollectives(t, job)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := analyzeAdvised(tt.traces, analyze.DefaultOptions())
			if tt.errSub != "" {
				if !errors.Is(err, ErrNotOneJob) || !strings.HasPrefix(err.Error(), tt.errSub) {
					t.Fatalf("error %v, want ErrNotOneJob starting %q", err, tt.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
