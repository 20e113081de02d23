package analyze

import (
	"cmp"
	"fmt"
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
	r.Idle = divide(r.Idle, n)
	slices.SortStableFunc(r.Gaps, func(x, y Gap) int { return cmp.Compare(x.Start, y.Start) })
	r.TopGaps = topGaps(r.Gaps, a.opt.TopGaps)

	launchers := a.launchingThreads()
	var busy int64
	for _, d := range a.devs {
		busy += d.winBusy
	}
	busy /= n
	w := Interval{r.Window.Start, r.Window.End}
	input, _ := a.hostTime(launchers, w)
	for i := range r.Steps {
		s := &r.Steps[i]
		// Steps overlap where a step's work runs past the next step's
		// start; the figures split the window at step starts instead, so
		// that they add up to the window's.
		sw := a.stepSpan(i)
		for _, d := range a.devs {
			s.DeviceBusy += d.busyIn(sw)
		}
		s.DeviceBusy /= n
		s.Idle = divide(s.Idle, n)
		s.Input, s.Sync = a.hostTime(launchers, sw)
		s.Verdict, _, _ = a.decide(&s.Idle, sw.End-sw.Start, s.Input, s.DeviceBusy)
	}
	var deciding string
	r.Verdict, r.Secondary, deciding = a.decide(&r.Idle, w.End-w.Start, input, busy)
	r.Confidence, r.Reasons = a.confidence()
	r.Reasons = append([]string{deciding}, r.Reasons...)
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

func divide(b Breakdown, n int64) Breakdown {
	return Breakdown{
		InSync: b.InSync / n, AfterSync: b.AfterSync / n, Input: b.Input / n,
		Host: b.Host / n, Untraced: b.Untraced / n, BelowMinGap: b.BelowMinGap / n,
	}
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
// track order.
func (a *analyzer) launchingThreads() []int32 {
	var ts []int32
	for tr, c := range a.links.launches {
		if c > 0 {
			ts = append(ts, int32(tr))
		}
	}
	return ts
}

// hostTime returns the time the threads spent in the input pipeline and in
// blocking calls inside w.
func (a *analyzer) hostTime(threads []int32, w Interval) (input, sync int64) {
	for _, tr := range threads {
		th := a.thread(tr)
		input += timeIn(th.inputs, w)
		sync += timeIn(th.syncs, w)
	}
	return input, sync
}

// share is a cause's part of a window, with its threshold and the verdict
// it gives.
type share struct {
	name      string
	v, thresh float64
	verdict   Verdict
}

// decide applies the verdict rule to idle split b over a window of length
// dur, in which the launching threads spent input in the input pipeline
// and the devices were busy for busy (averaged). It returns the verdict,
// the secondary verdicts and a sentence with the deciding figures.
func (a *analyzer) decide(b *Breakdown, dur, input, busy int64) (Verdict, []Verdict, string) {
	if dur <= 0 {
		return Parallel, nil, "the window is empty"
	}
	f := float64(dur)
	syncV := Sequential
	if input > busy {
		syncV = DataBound
	}
	shares := []share{
		{"sync", float64(b.Sync()) / f, a.opt.SyncThreshold, syncV},
		{"input", float64(b.Input) / f, a.opt.InputThreshold, DataBound},
		{"host", float64(b.Host) / f, a.opt.HostThreshold, HostBound},
	}
	var over []share
	for _, s := range shares {
		if s.v > s.thresh {
			over = append(over, s)
		}
	}
	if len(over) == 0 {
		return Parallel, nil, fmt.Sprintf("no cause of device idle passes its threshold: sync %s (threshold %s), input %s (%s), other host work %s (%s)",
			pct(shares[0].v), pct(shares[0].thresh), pct(shares[1].v), pct(shares[1].thresh), pct(shares[2].v), pct(shares[2].thresh))
	}
	slices.SortStableFunc(over, func(x, y share) int { return cmp.Compare(y.v, x.v) })
	top := over[0]
	var sec []Verdict
	for _, s := range over[1:] {
		if s.verdict != top.verdict && !slices.Contains(sec, s.verdict) {
			sec = append(sec, s.verdict)
		}
	}
	what := top.name + "-caused device idle"
	if top.name == "host" {
		what = "device idle caused by other host work (dispatch, launches, Python)"
	}
	why := fmt.Sprintf("%s is %s of the window (threshold %s)", what, pct(top.v), pct(top.thresh))
	if top.name == "sync" && top.verdict == DataBound {
		why += fmt.Sprintf(", and the input it exposes (%s) takes longer than the device's compute (%s), so removing the sync would not hide it",
			formatDuration(input), formatDuration(busy))
	}
	return top.verdict, sec, why
}

// confidence grades the verdict and says why it is not high.
func (a *analyzer) confidence() (Confidence, []string) {
	r := a.res
	var reasons []string
	low := false
	switch {
	case r.Window.Steps == 0:
		reasons = append(reasons, "no step markers found: the window is the devices' whole span, warm-up and tail included")
	case r.Window.Steps < 3:
		reasons = append(reasons, fmt.Sprintf("only %s in the window: too few to tell a steady state", plural(r.Window.Steps, "step")))
	}
	if u := r.Idle.Untraced; u > 0 && u >= r.Idle.Sync() && u >= r.Idle.Input && u >= r.Idle.Host {
		low = true
		reasons = append(reasons, fmt.Sprintf("the largest share of device idle (%s) falls where the waited-for host thread shows no event: it was not traced", formatDuration(u)))
	}
	if a.t.Truncated {
		reasons = append(reasons, "the trace was cut short and only its first part was read")
	}
	if l := a.links; l.work > 0 && float64(l.linked) < 0.5*float64(l.work) {
		reasons = append(reasons, fmt.Sprintf("only %d of %d pieces of device work link back to a host launch: the waited-for thread is a best guess", l.linked, l.work))
	}
	switch {
	case low || len(reasons) >= 2:
		return Low, reasons
	case len(reasons) == 1:
		return Medium, reasons
	}
	return High, reasons
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
