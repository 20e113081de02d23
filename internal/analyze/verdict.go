package analyze

import (
	"cmp"
	"slices"
)

// summarize turns the per-device attribution into the result's figures,
// per-step rows and the verdict.
func (a *analyzer) summarize() {
	r := a.res
	n := int64(len(a.devs))
	for _, d := range a.devs {
		r.Devices = append(r.Devices, a.deviceFigures(d))
		for c := InSync; c < NumCauses; c++ {
			r.Idle.Add(c, d.split.Of(c))
		}
		r.Idle.BelowMinGap += d.split.BelowMinGap
		r.Gaps = append(r.Gaps, d.gaps...)
	}
	r.Idle = r.Idle.Divide(n)
	slices.SortStableFunc(r.Gaps, func(x, y Gap) int { return cmp.Compare(x.Start, y.Start) })
	r.TopGaps = topGaps(r.Gaps, a.opt.TopGaps)

	launchers := a.launchingThreads()
	w := Interval{r.Window.Start, r.Window.End}
	var busy int64
	for _, d := range a.devs {
		busy += d.winBusy
	}
	busy /= n
	loading, syncs := a.hostIntervals(launchers)
	if len(r.Steps) == 0 {
		r.Loading, r.Blocking = timeIn(loading, w), timeIn(syncs, w)
	} // else the sums of the steps' figures, over their host spans
	for i := range r.Steps {
		s := &r.Steps[i]
		sw := a.stepSpan(i)
		for _, d := range a.devs {
			s.DeviceBusy += d.busyIn(sw)
		}
		s.DeviceBusy = averageRow(s.DeviceBusy, &s.Idle, n, sw.End-sw.Start)
		s.Input, s.Sync = timeIn(loading, a.hostSpans[i]), timeIn(syncs, a.hostSpans[i])
		r.Loading += s.Input
		r.Blocking += s.Sync
		s.Verdict, _, _ = a.decide(&s.Idle, sw.End-sw.Start, s.Input, s.DeviceBusy)
	}
	if len(r.Steps) > 0 {
		// The steps tile the window: its idle is theirs, so that the rows
		// add up to it after the averaging over devices.
		r.Idle = Breakdown{}
		for i := range r.Steps {
			r.Idle.AddAll(&r.Steps[i].Idle)
		}
	}
	r.Verdict, r.Secondary, r.Facts.Decision = a.decide(&r.Idle, w.End-w.Start, r.Loading, busy)
	r.StalledInSync = a.stall.inSync / n
	r.Dependencies = a.dependencies(n)
	r.Secondary = stalledSync(&a.opt, r.Verdict, r.Secondary, r.StalledInSync, w.End-w.Start)
	// The reasons are advice's (advice.Add writes them from
	// Facts.Decision and Facts.Grounds).
	r.Confidence, r.Facts.Grounds = a.confidence()
}

func (a *analyzer) deviceFigures(d *device) Device {
	sp := d.span()
	var busy int64
	for _, b := range d.busy {
		busy += b.End - b.Start
	}
	return Device{
		ID: d.id, Start: sp.Start, End: sp.End, Busy: busy, Idle: sp.End - sp.Start - busy,
		Utilization: float64(busy) / float64(max(sp.End-sp.Start, 1)),
		Gaps:        len(d.bigIdle), WindowBusy: d.winBusy, WindowIdle: d.split, Intervals: d.busy,
	}
}

// averageRow turns a step's busy time and idle, summed over n devices,
// into their averages and returns the busy time. Each device's busy and
// idle add up to the step's length dur, and the averages are rounded so
// that they still do: each figure is rounded down and the nanoseconds
// missing go to the figures with the largest remainders (the first on a
// tie), where a plain division would lose up to one per figure.
func averageRow(busy int64, idle *Breakdown, n, dur int64) int64 {
	figs := make([]*int64, 0, NumCauses+2)
	figs = append(figs, &busy)
	for c := range idle.ByCause {
		figs = append(figs, &idle.ByCause[c])
	}
	figs = append(figs, &idle.BelowMinGap)
	rem := make([]int64, len(figs))
	missing := dur
	for i, f := range figs {
		rem[i] = *f % n
		*f /= n
		missing -= *f
	}
	for ; missing > 0; missing-- {
		best := slices.Index(rem, slices.Max(rem))
		if rem[best] == 0 {
			break
		}
		*figs[best]++
		rem[best] = 0
	}
	return busy
}

// topGaps returns the indexes of the k longest gaps, longest first.
func topGaps(gaps []Gap, k int) []int {
	idx := make([]int, len(gaps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(gaps[y].Dur, gaps[x].Dur) })
	return idx[:min(k, len(idx))]
}

// launchingThreads returns the host tracks that launched device work, in
// track order; in a JAX program, the loop thread that dispatched it.
func (a *analyzer) launchingThreads() []int32 {
	if a.loop >= 0 {
		return []int32{a.loop}
	}
	if a.links == nil { // no device: nothing was launched
		return nil
	}
	var ts []int32
	for tr, c := range a.links.launches {
		if c > 0 {
			ts = append(ts, int32(tr))
		}
	}
	return ts
}

// hostIntervals returns when the threads were loading data (in the input
// pipeline but not in a blocking call nested in it) and when they were in
// blocking calls, each merged over the threads: the time over a span is
// then the wall time some thread spent so, which cannot exceed the span
// however many threads block or load at once.
func (a *analyzer) hostIntervals(threads []int32) (loading, syncs []Interval) {
	for _, tr := range threads {
		th := a.thread(tr)
		loading = union(loading, th.loading)
		syncs = union(syncs, th.syncs)
	}
	return loading, syncs
}

// loaderInBackground reports whether a launching thread's input events show
// the loader running in worker processes or threads.
func (a *analyzer) loaderInBackground() bool {
	for _, tr := range a.launchingThreads() {
		if a.thread(tr).background {
			return true
		}
	}
	return false
}

// share is a cause's part of a window, with its threshold and the verdict
// it gives.
type share struct {
	CauseShare
	verdict Verdict
}

// CauseShare is a cause's share of a window with its threshold: Name is
// "sync", "input", "host" or "stalled".
type CauseShare struct {
	Name             string
	Share, Threshold float64
}

// Decision is what decided a verdict, as plain data; package advice
// writes it as the verdict's sentence (advice.DecisionSentence).
type Decision struct {
	// How says which part of the rule decided.
	How Decided
	// Shares are the shares of sync, input, other host work and stalled
	// idle with their thresholds, in that order; Top is the one that
	// decided (DecidedByShare).
	Shares [4]CauseShare
	Top    CauseShare
	// Untraced is the untraced share that decided host-bound against
	// HostThreshold (DecidedByUntraced).
	Untraced, HostThreshold float64
	// Slow is set when loading (Input per step or window) took longer
	// than compute (Busy); Background when the loader runs in background
	// workers: they tell sequential from data-bound.
	Slow, Background bool
	Input, Busy      int64
}

// Decided says which part of the verdict rule decided.
type Decided int

const (
	// DecidedEmpty: the window is empty.
	DecidedEmpty Decided = iota
	// DecidedByShare: a cause's share passed its threshold, the largest
	// over its threshold deciding.
	DecidedByShare
	// DecidedByUntraced: no cause passed its threshold, untraced idle
	// the host threshold.
	DecidedByUntraced
	// DecidedNone: nothing passed its threshold: parallel.
	DecidedNone
)

// decide applies the verdict rule (DESIGN.md, "How the verdict is
// reached") to idle split b over a window of length dur, in which the
// launching threads spent input loading data (L) and the devices were busy
// for busy (C, averaged). It returns the verdict, the secondary verdicts and
// what decided, with the deciding figures.
//
// The rule is MaxText's: loading must be faster than compute. A sync or an
// inline loader that is faster than compute but not overlapped with it is
// sequential; a loader slower than compute, or background workers the loop
// still waits on, is data-bound.
func (a *analyzer) decide(b *Breakdown, dur, input, busy int64) (Verdict, []Verdict, Decision) {
	return decide(&a.opt, a.loaderInBackground(), b, dur, input, busy)
}

// decide is the verdict rule with opt's thresholds, for a loader that runs
// in background workers or not.
func decide(opt *Options, background bool, b *Breakdown, dur, input, busy int64) (Verdict, []Verdict, Decision) {
	if dur <= 0 {
		return Parallel, nil, Decision{How: DecidedEmpty}
	}
	f := float64(dur)
	slow := input > busy
	syncV, inputV := Sequential, Sequential
	if slow {
		syncV = DataBound
	}
	if slow || background {
		inputV = DataBound
	}
	shares := []share{
		{CauseShare{"sync", float64(b.Sync()) / f, opt.SyncThreshold}, syncV},
		{CauseShare{"input", float64(b.Of(Input)) / f, opt.InputThreshold}, inputV},
		{CauseShare{"host", float64(b.HostWork()) / f, opt.HostThreshold}, HostBound},
		{CauseShare{"stalled", float64(b.Of(Stall)) / f, opt.StallThreshold}, Stalled},
	}
	d := Decision{Slow: slow, Background: background, Input: input, Busy: busy, HostThreshold: opt.HostThreshold}
	for i, s := range shares {
		d.Shares[i] = s.CauseShare
	}
	var over []share
	for _, s := range shares {
		if s.Share > s.Threshold {
			over = append(over, s)
		}
	}
	if len(over) == 0 {
		if u := float64(b.Of(Untraced)) / f; u > opt.HostThreshold {
			d.How, d.Untraced = DecidedByUntraced, u
			return HostBound, nil, d
		}
		d.How = DecidedNone
		return Parallel, nil, d
	}
	slices.SortStableFunc(over, func(x, y share) int { return cmp.Compare(y.Share, x.Share) })
	top := over[0]
	var sec []Verdict
	for _, s := range over[1:] {
		if s.verdict != top.verdict && !slices.Contains(sec, s.verdict) {
			sec = append(sec, s.verdict)
		}
	}
	d.How, d.Top = DecidedByShare, top.CauseShare
	return top.verdict, sec, d
}

// stalledSync adds sequential to the secondary verdicts sec of a stalled
// run when the host blocked on the stalled device for more than the sync
// threshold of the window: the sync is there, but removing it would not
// close the gaps, so it is not the cause.
func stalledSync(opt *Options, v Verdict, sec []Verdict, inSync, dur int64) []Verdict {
	if v != Stalled || dur <= 0 || float64(inSync)/float64(dur) <= opt.SyncThreshold || slices.Contains(sec, Sequential) {
		return sec
	}
	return append(sec, Sequential)
}

// confidence grades the verdict and gives the grounds of why it is not
// high (advice writes them as reasons).
func (a *analyzer) confidence() (Confidence, Grounds) {
	r := a.res
	var g Grounds
	g.NoSteps = r.Window.Steps == 0
	if !g.NoSteps && r.Window.Steps < MinSteadySteps {
		g.FewSteps = r.Window.Steps
	}
	if r.Idle.MostlyUntraced(r.Window.Dur()) {
		g.MostlyUntraced, g.Untraced = true, r.Idle.Of(Untraced)
	}
	g.Truncated, g.Invalid = a.t.Truncated, a.t.Invalid
	if a.loop >= 0 && r.Window.Steps > 0 && a.guessed > 0 && float64(a.guessed) >= 0.5*float64(a.links.work) {
		g.Unlinked, g.Work = a.guessed, a.links.work
	}
	if w := float64(r.Window.Dur()); w > 0 && float64(r.Idle.Of(Runtime))/w > a.opt.InputThreshold && a.runtimeIsWarmup() {
		g.Warmup, g.WarmupIdle, g.WarmupNames = true, r.Idle.Of(Runtime), a.top(a.tally.names[Runtime], 3)
	}
	if l := a.links; a.loop < 0 && l.work > 0 && float64(l.linked) < 0.5*float64(l.work) {
		g.FewLinks, g.Linked, g.LinkWork = true, l.linked, l.work
	}
	return Grade(g.MostlyUntraced, g.count()), g
}

// Grounds are what a result's reasons are written from (advice writes
// them): why the confidence is not high, and what a trace without device
// work still shows.
type Grounds struct {
	// NoSteps: no step markers; FewSteps: the window's steps when there
	// are fewer than MinSteadySteps (0 otherwise).
	NoSteps  bool
	FewSteps int
	// MostlyUntraced: the largest share of idle is untraced, Untraced.
	MostlyUntraced bool
	Untraced       int64
	// Truncated: the trace was cut short. Invalid: it held invalid data
	// part-way; only the part before it was read.
	Truncated, Invalid bool
	// Unlinked of Work pieces of a JAX program's device work link to no
	// dispatch (0: not a reason).
	Unlinked, Work int
	// Warmup: the window holds warm-up, WarmupIdle of runtime idle in
	// WarmupNames.
	Warmup      bool
	WarmupIdle  int64
	WarmupNames []string
	// FewLinks: only Linked of LinkWork pieces of device work link back to
	// a host launch.
	FewLinks         bool
	Linked, LinkWork int
	// Without device work: the host events, and the steps the host
	// marked (nil when none).
	HostEvents int
	HostSteps  *HostSteps
}

// count returns how many reasons lower the confidence of a run with
// device work.
func (g *Grounds) count() int {
	n := 0
	for _, b := range []bool{g.NoSteps || g.FewSteps > 0, g.MostlyUntraced, g.Truncated || g.Invalid, g.Unlinked > 0, g.Warmup, g.FewLinks} {
		if b {
			n++
		}
	}
	return n
}

// Grade is the confidence of a verdict with n reasons to doubt it, low
// outright when one of them makes it a guess: no reason, high; one,
// medium; two or more, low.
func Grade(low bool, n int) Confidence {
	switch {
	case low || n >= 2:
		return Low
	case n == 1:
		return Medium
	}
	return High
}
