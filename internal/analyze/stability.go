package analyze

import (
	"math"
	"slices"
)

// StabilityLabel grades how steady a run's step times are.
type StabilityLabel string

// The stability labels, from steady to erratic; see Result.Stability.
const (
	Stable         StabilityLabel = "stable"
	WeaklyUnstable StabilityLabel = "weakly unstable"
	Unstable       StabilityLabel = "unstable"
	Erratic        StabilityLabel = "erratic"
	// TooFewSteps is the label of fewer than MinSteadySteps steps: too
	// few for a distribution to say anything.
	TooFewSteps StabilityLabel = "too few steps"
)

// MinSteadySteps is the fewest steps from which the step times can show
// a steady state: below it, stability is not graded and the verdict's
// confidence says so.
const MinSteadySteps = 3

// The thresholds of the stability figures, defined once here and quoted
// by the docs (docs/sweep.md).
const (
	// SlowFactor: a step longer than SlowFactor times the median is slow.
	SlowFactor = 1.5
	// spreadLimit: a spread above it makes a run weakly unstable even
	// without a slow step.
	spreadLimit = 0.20
	// nearZero: a step under this share of the typical long step is
	// near zero, a batch taken from a buffer that still had one.
	nearZero = 0.25
	// waitShare and fedShare split steps by their input wait against the
	// median step: waiting at or over waitShare, fed under fedShare.
	waitShare = 0.25
	fedShare  = 0.05
)

// Stability is the distribution of a run's step times (Step.Dur) and what
// its shape says. Times are ns.
type Stability struct {
	Label StabilityLabel
	// Steps is how many steps the distribution is over: Result.Steps less
	// the Artefacts.
	Steps int
	// Median, P90 and Max are over those steps (P90 by nearest rank).
	Median, P90, Max int64
	// Spread is (P90 - Median) / Median: how far the slow tenth of the
	// steps sits above the typical one.
	Spread float64
	// Slow are the indexes in Result.Steps of the steps longer than
	// SlowFactor times the median, artefacts left out.
	Slow []int
	// Artefacts are the steps left out of the distribution, flagged
	// rather than averaged in.
	Artefacts []Artefact
	// Loader is set when the step times show a loader that cannot keep
	// up, with a buffer hiding it part of the time (Label is Erratic).
	Loader *ErraticLoader
}

// Artefact is a step left out of the distribution and why.
type Artefact struct {
	// Step is the index in Result.Steps; -1 for the warm-up step the
	// window already left out.
	Step int
	Why  string
}

// ErraticLoader is the erratic-loader signature: long input waits every
// Period steps, the steps between them fed from a buffer.
type ErraticLoader struct {
	// Period is the steps from one long wait to the next (rounded).
	Period int
	// Waiting counts the steps with a long wait; Wait is their median
	// input wait, 0 when the trace shows no input (the signature is then
	// in the step times alone: near-zero steps among long ones).
	Waiting int
	Wait    int64
	// Batch is the time the loader takes per batch as the window shows
	// it (its length over its steps), against Compute, the device busy
	// time per step: a loader that keeps up has Batch <= Compute.
	Batch, Compute int64
}

// Stability returns the distribution of r's step times; the zero
// Stability without steps.
func (r *Result) Stability() Stability {
	n := len(r.Steps)
	if n == 0 {
		return Stability{}
	}
	var st Stability
	if r.Window.WarmupDropped {
		st.Artefacts = append(st.Artefacts, Artefact{Step: -1, Why: "the warm-up step, before the window"})
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	st.Loader = erraticLoader(r, all)
	keep := all
	if st.Loader == nil {
		keep = st.dropEnds(r.Steps, all)
	}
	st.distribution(r.Steps, keep)
	st.Label = st.label()
	return st
}

// dropEnds flags the first and last steps as artefacts when they fall
// outside [1/SlowFactor, SlowFactor] times the median: a first step still
// warming up, a last step cut at the profiler's stop. It returns the steps
// kept.
func (st *Stability) dropEnds(steps []Step, idx []int) []int {
	if len(idx) < 4 {
		return idx
	}
	med := float64(median(durations(steps, idx)))
	off := func(d int64) bool { return float64(d) > SlowFactor*med || float64(d) < med/SlowFactor }
	lo, hi := 0, len(idx)
	if off(steps[idx[0]].Dur) {
		st.Artefacts = append(st.Artefacts, Artefact{Step: idx[0], Why: "the first step, still warming up"})
		lo++
	}
	if off(steps[idx[hi-1]].Dur) {
		st.Artefacts = append(st.Artefacts, Artefact{Step: idx[hi-1], Why: "the last step, cut at the last device work"})
		hi--
	}
	return idx[lo:hi]
}

// distribution fills the figures over the steps idx.
func (st *Stability) distribution(steps []Step, idx []int) {
	ds := durations(steps, idx)
	st.Steps = len(ds)
	if len(ds) == 0 {
		return
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	st.Median = median(ds)
	st.P90 = sorted[int(math.Ceil(0.9*float64(len(sorted))))-1]
	st.Max = sorted[len(sorted)-1]
	if st.Median > 0 {
		st.Spread = float64(st.P90-st.Median) / float64(st.Median)
	}
	for _, i := range idx {
		if float64(steps[i].Dur) > SlowFactor*float64(st.Median) {
			st.Slow = append(st.Slow, i)
		}
	}
}

// label grades the figures: too few steps below MinSteadySteps; erratic
// with the loader signature; unstable
// with two or more slow steps; weakly unstable with one, or a spread over
// spreadLimit; stable otherwise.
func (st *Stability) label() StabilityLabel {
	switch {
	case st.Steps < MinSteadySteps:
		return TooFewSteps
	case st.Loader != nil:
		return Erratic
	case len(st.Slow) >= 2:
		return Unstable
	case len(st.Slow) == 1 || st.Spread > spreadLimit:
		return WeaklyUnstable
	}
	return Stable
}

// erraticLoader looks for the signature of a loader that cannot keep up
// with a buffer hiding it part of the time: steps with a long input wait
// among steps fed at once, the waiting ones the long ones; or, where the
// trace shows no input, near-zero steps among long ones.
func erraticLoader(r *Result, idx []int) *ErraticLoader {
	steps := r.Steps
	ds := durations(steps, idx)
	med := median(ds)
	if len(idx) < 4 || med <= 0 {
		return nil
	}
	var waiting, fed, waits []int64
	var at []int // the positions in idx of the waiting steps
	for j, i := range idx {
		s := steps[i]
		switch in := float64(s.Input); {
		case in >= waitShare*float64(med):
			waiting, waits = append(waiting, s.Dur), append(waits, s.Input)
			at = append(at, j)
		case in < fedShare*float64(med):
			fed = append(fed, s.Dur)
		}
	}
	l := &ErraticLoader{}
	switch {
	case len(waiting) >= 2 && len(fed) >= 2 && 5*(len(waiting)+len(fed)) >= 4*len(idx) &&
		float64(median(waiting)) >= SlowFactor*float64(median(fed)):
		l.Waiting, l.Wait = len(waiting), median(waits)
	case nearZeroAmongLong(ds, med):
		at = positionsOver(ds, SlowFactor*float64(med))
		l.Waiting = len(at)
	default:
		return nil
	}
	l.Period = period(at, len(idx))
	return l.measure(r)
}

// period returns the steps from one long step to the next: the median
// distance between the positions at of the long steps among n, or n over
// their count when there is one. A window that holds 2.75 bursts of 4
// steps has 11 steps and 2 long ones, 4 steps apart, not 5.5.
func period(at []int, n int) int {
	if len(at) < 2 {
		return int(math.Round(float64(n) / float64(max(len(at), 1))))
	}
	d := make([]int64, len(at)-1)
	for k := range d {
		d[k] = int64(at[k+1] - at[k])
	}
	return int(math.Round(float64(median(d))))
}

// measure fills the loader's batch time and compute per step from r.
func (l *ErraticLoader) measure(r *Result) *ErraticLoader {
	_, busy, _ := r.PerStep()
	if step, ok := r.StepTime(); ok {
		l.Batch, l.Compute = step, busy
	}
	return l
}

// nearZeroAmongLong reports whether at least two steps are near zero
// against the typical long step (the median of the longer half) while at
// least two are slow.
func nearZeroAmongLong(ds []int64, med int64) bool {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	long := median(sorted[len(sorted)/2:])
	near := 0
	for _, d := range ds {
		if float64(d) < nearZero*float64(long) {
			near++
		}
	}
	return near >= 2 && countOver(ds, SlowFactor*float64(med)) >= 2
}

func countOver(ds []int64, limit float64) int {
	return len(positionsOver(ds, limit))
}

// positionsOver returns the positions in ds of the durations over limit.
func positionsOver(ds []int64, limit float64) []int {
	var at []int
	for j, d := range ds {
		if float64(d) > limit {
			at = append(at, j)
		}
	}
	return at
}

func durations(steps []Step, idx []int) []int64 {
	ds := make([]int64, len(idx))
	for j, i := range idx {
		ds[j] = steps[i].Dur
	}
	return ds
}

// median returns the middle of ds, the mean of the two middle values for
// an even count; 0 for none.
func median(ds []int64) int64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
