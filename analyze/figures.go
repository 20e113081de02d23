package analyze

// The run's figures that more than one consumer reads (reports, the
// comparison of runs, jobs) are defined here, once.

// StepTime returns the pace the run trains at (see stepTime); ok is false
// without steps.
func (r *Result) StepTime() (ns int64, ok bool) {
	if len(r.Steps) == 0 {
		return 0, false
	}
	return stepTime(r.Steps), true
}

// stepTime is the pace the run trains at: the mean time from one step to
// the next, measured both between the steps' starts and between their ends
// (the end of the device work each step launched), whichever is longer.
// Neither a step's length (in a pipelined run a step overlaps the next)
// nor its starts alone (a host that runs ahead of the device starts steps
// faster than they finish) give it. A lone step's length is all there is.
func stepTime(steps []Step) int64 {
	n := len(steps)
	if n == 1 {
		return steps[0].Dur
	}
	first, last := &steps[0], &steps[n-1]
	starts := last.Start - first.Start
	ends := last.Start + last.Dur - first.Start - first.Dur
	return max(starts, ends) / int64(n-1)
}

// Utilization returns the share of the window the devices were busy,
// averaged over devices; 0 without devices or window.
func (r *Result) Utilization() float64 {
	win := r.Window.Dur()
	if len(r.Devices) == 0 || win <= 0 {
		return 0
	}
	var busy int64
	for i := range r.Devices {
		busy += r.Devices[i].WindowBusy
	}
	return float64(busy) / float64(win*int64(len(r.Devices)))
}

// SyncPerStep returns the time a typical step spends in blocking calls on
// the launching thread(s), over the steps PerStep averages; ok is false
// without steps.
func (r *Result) SyncPerStep() (sync int64, ok bool) {
	st := r.typicalSteps()
	if len(st) == 0 {
		return 0, false
	}
	for _, s := range st {
		sync += s.Sync
	}
	return sync / int64(len(st)), true
}

// typicalSteps are the steps PerStep and SyncPerStep average: all but the
// last, or the lone step.
func (r *Result) typicalSteps() []Step {
	if len(r.Steps) <= 1 {
		return r.Steps
	}
	return r.Steps[:len(r.Steps)-1]
}
