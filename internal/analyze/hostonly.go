package analyze

// HostSteps are the steps a trace without device work still shows: how
// many, how they were found, their time and the part of it the host spent
// in the input pipeline (the time any host thread was inside an input
// event and not in a blocking call, merged over the threads), summed.
type HostSteps struct {
	N          int
	Source     string
	Dur, Input int64
}

// hostOnlySteps returns the steps of a trace without device work, nil
// when it has none.
func (a *analyzer) hostOnlySteps() *HostSteps {
	pattern, err := a.stepPattern()
	if err != nil {
		return nil // Validate has compiled it already
	}
	scan := a.scanHost(pattern)
	steps, src := a.findSteps(scan)
	if len(steps) == 0 {
		return nil
	}
	var loading []Interval
	for _, th := range a.scanned {
		loading = union(loading, subtract(th.inputs, th.syncs))
	}
	var dur, input int64
	for _, s := range steps {
		dur += s.end - s.start
		input += timeIn(loading, Interval{s.start, s.end})
	}
	return &HostSteps{N: len(steps), Source: src, Dur: dur, Input: input}
}
