package analyze

import (
	"math"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestStabilityMaxText grades the step times of the README's MaxText table
// (Llama3-8B on a v6e-32, steps 3-10 in s; steps 1 and 2 are warm-up, left
// out as the window leaves out its first step).
func TestStabilityMaxText(t *testing.T) {
	const ms = 1_000_000
	tests := []struct {
		workers   int
		steps     []float64
		want      StabilityLabel
		median    int64
		artefacts []int
	}{
		// No step over 1.5x the median, but the spread (p90 36.5 s
		// over a median of 29.7 s) is 22.9%.
		{1, []float64{28.7, 30.5, 29.4, 33.6, 36.5, 30.0, 28.2, 26.3}, WeaklyUnstable, 29_700 * ms, []int{-1}},
		// Near-zero steps among long ones: the loader's bursts.
		{2, []float64{11.5, 0.007, 29.9, 0.007, 26.5, 1.6, 25.2, 1.9}, Erratic, 6_700 * ms, []int{-1}},
		// One slow step (9.8 s), the last one cut short.
		{4, []float64{4.1, 4.3, 4.3, 4.3, 4.3, 4.3, 9.8, 0.006}, WeaklyUnstable, 4_300 * ms, []int{-1, 7}},
		// The first step is the tail of the warm-up; then flat.
		{8, []float64{7.7, 4.3, 4.3, 4.3, 4.3, 4.3, 4.3, 4.3}, Stable, 4_300 * ms, []int{-1, 0}},
	}
	for _, tt := range tests {
		r := &Result{Window: Window{WarmupDropped: true}}
		for _, s := range tt.steps {
			r.Steps = append(r.Steps, Step{Dur: int64(math.Round(s * 1000 * ms))})
		}
		st := r.Stability()
		var arts []int
		for _, a := range st.Artefacts {
			arts = append(arts, a.Step)
		}
		if st.Label != tt.want || st.Median != tt.median || !slices.Equal(arts, tt.artefacts) {
			t.Errorf("%d workers: %+v (median %d, artefacts %v), want %s (median %d, artefacts %v)",
				tt.workers, st, st.Median, arts, tt.want, tt.median, tt.artefacts)
		}
	}
}

// Worker loader scenarios: compute C = 43 ms per step, each worker P = 150
// ms per batch, 12 steps (the first dropped as warm-up). The workers,
// starting together, deliver k batches every 150 ms:
//
//   - k = 1: a batch every 150 ms, every step waits 107 ms: steady and slow
//     (150 ms), data-bound.
//   - k = 2: two batches every 150 ms: one step waits (107 ms), the next
//     finds its batch ready (43 ms): erratic, 72.1 ms on average.
//   - k = 3: three every 150 ms: 43, 43, 64 ms: weakly unstable (64 ms is
//     under 1.5x the median of 43 ms, but the spread is 49%).
//   - k = 4, 8: the loader keeps up (37.5 and 18.75 ms per batch): 43 ms,
//     stable.
//
// The estimate from one trace, with k read from num_workers in its
// metadata, is ceil(k * T / C) + 1 while the loop waits (a worker takes
// about k * T per batch; 4 keep up, plus one spare): 5 from k = 1 (150 / 43
// = 3.5), from k = 2 (2 * 72.1 / 43 = 3.4) and from k = 3 (3 * 48.7 / 43 =
// 3.4); from k = 4 and 8, k itself (never more).
func TestWorkerLoaderScenarios(t *testing.T) {
	tests := []struct {
		k        int
		label    StabilityLabel
		verdict  Verdict
		step     int64
		estimate int
		finding  string
	}{
		{1, Stable, DataBound, 150_000_000, 5, "slow-input"},
		{2, Erratic, DataBound, 72_090_909, 5, "erratic-loader"},
		{3, WeaklyUnstable, DataBound, 48_727_272, 5, "slow-input"},
		{4, Stable, Parallel, 43_000_000, 4, ""},
		{8, Stable, Parallel, 43_000_000, 8, ""},
	}
	for _, tt := range tests {
		r := analyzeSpec(t, WorkerScenario(tt.k, true).Spec())
		st := r.Stability()
		step, _ := r.StepTime()
		p := r.WorkerPlan()
		if st.Label != tt.label || r.Verdict != tt.verdict || step != tt.step || !p.OK || p.N != tt.estimate {
			t.Errorf("k=%d: %+v, %s, step %d, estimate %+v, want %s, %s, step %d, estimate %d",
				tt.k, st, r.Verdict, step, p, tt.label, tt.verdict, tt.step, tt.estimate)
		}
		if r.Loader.Workers != tt.k || !r.Loader.Known {
			t.Errorf("k=%d: loader %+v, want %d workers read from the metadata", tt.k, r.Loader, tt.k)
		}
		if tt.finding != "" && !slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.ID == tt.finding }) {
			t.Errorf("k=%d: no %s finding in %+v", tt.k, tt.finding, r.Findings)
		}
	}
}

// TestWorkerThreads reads the worker count and a worker's time per batch
// from the workers' own threads: 2 workers at P = 150 ms against C = 43
// ms give ceil(150 / 43) + 1 = 5 (4 keep up, plus one spare).
func TestWorkerThreads(t *testing.T) {
	l := WorkerScenario(2, false)
	l.Loader.ShowWorkers = true
	r := analyzeSpec(t, l.Spec())
	n := r.WorkerPlan().N
	if r.Loader.Workers != 2 || r.Loader.PerBatch != 150_000_000 || n != 5 {
		t.Errorf("loader %+v, estimate %d; want 2 workers, 150 ms per batch, estimate 5", r.Loader, n)
	}
}

// TestSingleProcessLoaderCount reads 0 workers from the single-process
// DataLoader iterator.
func TestSingleProcessLoaderCount(t *testing.T) {
	r := analyzeSpec(t, tracetest.Loop{Steps: 6, Input: 40_000_000, Compute: 100_000_000}.Spec())
	if !r.Loader.Known || r.Loader.Workers != 0 {
		t.Errorf("loader %+v, want 0 workers known from the iterator", r.Loader)
	}
}

// WorkerScenario is the worker loader scenario of the tests above.
func WorkerScenario(k int, metadata bool) tracetest.Loop {
	return tracetest.Loop{Steps: 12, Compute: 43_000_000, Loader: &tracetest.WorkerLoader{Workers: k, PerBatch: 150_000_000, Metadata: metadata}}
}

// TestStabilityTooFewSteps: below MinSteadySteps steps the step times are
// not graded (one step is not "stable"); from it on they are (advice's
// TestStabilitySentence says them).
func TestStabilityTooFewSteps(t *testing.T) {
	tests := []struct {
		durs  []int64
		label StabilityLabel
	}{
		{[]int64{3_070_000}, TooFewSteps},
		{[]int64{10_000_000, 30_000_000}, TooFewSteps},
		{[]int64{10_000_000, 10_000_000, 10_000_000}, Stable},
	}
	for _, tt := range tests {
		r := &Result{}
		for _, d := range tt.durs {
			r.Steps = append(r.Steps, Step{Dur: d})
		}
		if st := r.Stability(); st.Label != tt.label {
			t.Errorf("%v: %q, want %q", tt.durs, st.Label, tt.label)
		}
	}
}

// TestWorkerLoaderIdle: a DataLoader of k worker processes as PyTorch
// records it (its num_workers in the trace's metadata, each worker's
// batches on a "DataLoader worker N" thread), 150 ms a batch, against
// 43 ms of compute a step. Two workers (a batch every 75 ms) cannot keep
// up: the GPU waits on their queue, which is input, never host work, and
// the run is data-bound; four (37.5 ms) keep up and the run is parallel.
func TestWorkerLoaderIdle(t *testing.T) {
	for _, tt := range []struct {
		workers int
		verdict Verdict
	}{{2, DataBound}, {4, Parallel}} {
		l := tracetest.Loop{Steps: 12, Compute: 43_000_000, Loader: &tracetest.WorkerLoader{Workers: tt.workers, PerBatch: 150_000_000, Metadata: true, ShowWorkers: true}}
		r := analyzeSpec(t, l.Spec())
		win := float64(r.Window.Dur())
		host := float64(r.Idle.HostWork()+r.Idle.Sync()) / win
		if r.Verdict != tt.verdict || host > 0.03 {
			t.Errorf("%d workers: %s, host and sync idle %.1f%% of the window; want %s and under 3%%: %+v", tt.workers, r.Verdict, 100*host, tt.verdict, r.Idle)
		}
		if !r.Loader.Known || r.Loader.Workers != tt.workers {
			t.Errorf("%d workers: loader %+v, want the count read from the trace", tt.workers, r.Loader)
		}
	}
}
