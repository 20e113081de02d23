package compare

import (
	"slices"
	"strconv"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// workerRuns analyses the worker loader scenario (compute 43 ms per step,
// 150 ms per batch per worker; see analyze's TestWorkerLoaderScenarios)
// for each k, labelled by k.
func workerRuns(t *testing.T, ks ...int) []SweepRun {
	t.Helper()
	var runs []SweepRun
	for _, k := range ks {
		l := tracetest.Loop{Steps: 12, Compute: 43_000_000, Loader: &tracetest.WorkerLoader{Workers: k, PerBatch: 150_000_000, Metadata: true}}
		r, err := advice.Analyze(tracetest.Build(l.Spec()), analyze.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, SweepRun{Label: strconv.Itoa(k), Summary: Summarize(r)})
	}
	return runs
}

// TestSweepKnee: step times 150, 72.1, 43 and 43 ms for k = 8, 4, 2, 1 given
// out of order; the best is 43 ms (k = 4 first), and the knee, the fewest
// workers within 5% of it, is k = 4. Each run's estimate from its own
// trace is 4 or more (k = 8 keeps its 8).
func TestSweepKnee(t *testing.T) {
	s, err := NewSweep("k", workerRuns(t, 8, 4, 2, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	var labels, stab []string
	for _, r := range s.Runs {
		labels, stab = append(labels, r.Label), append(stab, r.Summary.Stability)
	}
	wantStab := []string{"stable", "erratic", "stable", "stable"}
	if s.Knee != 2 || s.Best != 2 || s.Runs[s.Knee].Label != "4" || !slices.Equal(labels, []string{"1", "2", "4", "8"}) || !slices.Equal(stab, wantStab) {
		t.Errorf("knee %d, best %d, labels %v, stability %v; want knee 2 (k = 4), best 2, labels 1 2 4 8, stability %v", s.Knee, s.Best, labels, stab, wantStab)
	}
	const want = "k = 4: the fewest within 5% of the best step time (43.0 ms at k = 4); 43.0 ms per step there. Below it, k = 2 takes 72.1 ms per step (erratic). More than 4 gains less than 5%."
	if s.Recommendation != want {
		t.Errorf("recommendation:\n got %q\nwant %q", s.Recommendation, want)
	}
}

// TestSweepNotNumbers: labels that are not numbers keep their order and
// give no knee.
func TestSweepNotNumbers(t *testing.T) {
	runs := workerRuns(t, 1, 4)
	runs[0].Label, runs[1].Label = "slow", "fast"
	s, err := NewSweep("", runs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Knee != -1 || s.Best != 1 || s.Runs[0].Label != "slow" {
		t.Errorf("knee %d, best %d, first %q; want -1, 1, slow", s.Knee, s.Best, s.Runs[0].Label)
	}
	if _, err := NewSweep("k", nil, 0); err == nil {
		t.Error("a sweep of no runs: no error")
	}
}
