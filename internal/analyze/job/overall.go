package job

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracegap/tracegap/internal/analyze"
)

// overall fills Result.Overall: the job as one run on the job's
// timeline, with idle averaged over the ranks that have device work and
// the verdict decided on those figures.
func (j *analysis) overall() {
	o := &j.res.Overall
	o.Source = j.sourceOf()
	o.Options = j.opt
	act := j.active()
	if len(act) == 0 {
		o.Verdict, o.Confidence = analyze.NoDevice, analyze.High
		return
	}
	n := int64(len(act))
	for i, r := range act {
		rk := &j.res.Ranks[r.idx]
		w := r.res.Window
		if i == 0 || w.Start+r.off < o.Window.Start {
			o.Window.Start = w.Start + r.off
		}
		o.Window.End = max(o.Window.End, w.End+r.off)
		o.Window.TraceEnd = max(o.Window.TraceEnd, w.TraceEnd+r.off)
		o.Window.WarmupDropped = o.Window.WarmupDropped || w.WarmupDropped
		o.Idle.AddAll(&rk.Idle)
		o.StalledInSync += r.res.StalledInSync
		for _, d := range r.res.Dependencies {
			d.Stream = fmt.Sprintf("rank %d %s", r.num, d.Stream)
			o.Dependencies = append(o.Dependencies, d)
		}
		j.res.Rest.Compute += rk.Wait.Compute
		j.res.Rest.Late += rk.Wait.Late
		j.res.Rest.Outside -= w.Dur()
		j.overallDevices(r)
	}
	j.res.Rest.Outside += n * o.Window.Dur()
	j.res.Rest = j.res.Rest.div(n)
	o.Window.Steps = len(j.res.Steps)
	o.Window.StepSource = act[0].res.Window.StepSource
	o.Idle = o.Idle.Divide(n)
	o.StalledInSync /= n
	for i := range o.Dependencies {
		o.Dependencies[i].Idle /= n
	}
	slices.SortStableFunc(o.Dependencies, func(x, y analyze.Dependency) int { return cmp.Compare(y.Idle, x.Idle) })
	j.overallSteps(act)
	slices.SortStableFunc(o.Gaps, func(x, y analyze.Gap) int { return cmp.Compare(x.Start, y.Start) })
	o.TopGaps = analyze.TopGaps(o.Gaps, j.opt.TopGaps)
	load, compute := j.slowestLoader()
	o.Verdict, o.Secondary, j.res.Facts.Decision = act[0].rule.Decide(&o.Idle, o.Window.Dur(), load, compute)
	o.Confidence = j.confidence()
}

// overallDevices adds rank r's devices and gaps to Overall, on the job's
// timeline and named after the rank.
func (j *analysis) overallDevices(r *rankState) {
	o := &j.res.Overall
	res := r.res
	w := analyze.Interval{Start: res.Window.Start, End: res.Window.End}
	prefix := fmt.Sprintf("rank %d ", r.num)
	for di, d := range res.Devices {
		p := r.parts[di]
		d.ID = prefix + d.ID
		d.Start += r.off
		d.End += r.off
		d.Intervals = shift(d.Intervals, r.off)
		d.WindowBusy = p.covered(w, p.d.WindowBusy)
		v, _ := p.windowWaits(w)
		for c := analyze.InSync; c < analyze.NumCauses; c++ {
			d.WindowIdle.Add(c, v[c])
		}
		o.Devices = append(o.Devices, d)
	}
	for _, g := range res.Gaps {
		g.Device = prefix + g.Device
		g.Start += r.off
		g.Thread = fmt.Sprintf("rank %d %s", r.num, g.Thread)
		g.Step = j.windowIndex(res, g.Step)
		o.AppendGap(res, g) // its segments follow its start

	}
}

// windowIndex maps an index into res.Steps to the index of the same step
// number among the job's steps, -1 when it is not one of them.
func (j *analysis) windowIndex(res *analyze.Result, i int) int {
	if i < 0 || i >= len(res.Steps) {
		return -1
	}
	for k, js := range j.res.Steps {
		if js.Num == res.Steps[i].Num {
			return k
		}
	}
	return -1
}

func shift(ivs []analyze.Interval, d int64) []analyze.Interval {
	out := make([]analyze.Interval, len(ivs))
	for i, iv := range ivs {
		out[i] = analyze.Interval{Start: iv.Start + d, End: iv.End + d}
	}
	return out
}

// overallSteps fills Overall.Steps: each job step's figures averaged over
// the ranks, collective waits counted as idle.
func (j *analysis) overallSteps(act []*rankState) {
	o := &j.res.Overall
	n := int64(len(act))
	load, compute := j.slowestLoader()
	for i := range j.res.Steps {
		js := &j.res.Steps[i]
		s := analyze.Step{Name: js.Name, Num: js.Num, Start: js.Start, Dur: js.End - js.Start}
		for _, r := range act {
			js.Rest = addRest(js.Rest, j.addRankStep(&s, r))
		}
		js.Rest = js.Rest.div(n)
		s.DeviceBusy /= n
		s.Input /= n
		s.Sync /= n
		s.Idle = s.Idle.Divide(n)
		s.Verdict, _, _ = act[0].rule.Decide(&s.Idle, s.Dur, load, compute)
		o.Steps = append(o.Steps, s)
	}
}

// addRankStep adds rank r's figures for step s to s: its busy time with
// waits taken out, input, sync and idle with the step's waits. It returns
// the rank's rest of the step.
func (j *analysis) addRankStep(s *analyze.Step, r *rankState) Rest {
	res := r.res
	var rs *analyze.Step
	sw := windowOf(res)
	si, ok := r.lastStep()[s.Num]
	if ok {
		rs, sw = &res.Steps[si], stepSpan(res, si)
	}
	nd := int64(len(r.parts))
	var busy int64
	var v waitVec
	for _, p := range r.parts {
		other := p.d.WindowBusy
		if ok {
			other = p.d.StepBusy[si]
		}
		busy += p.covered(sw, other)
		v.add(p.stepSplits()[s.Num])
	}
	s.DeviceBusy += busy / nd
	idle := res.Idle
	if rs != nil {
		s.Input += rs.Input
		s.Sync += rs.Sync
		idle = rs.Idle
	} else { // sw is the window
		s.Input += r.sum.Input
		s.Sync += r.sum.Sync
	}
	v = v.div(nd)
	for c := analyze.InSync; c < analyze.NumCauses; c++ {
		s.Idle.Add(c, idle.Of(c)+v[c])
	}
	s.Idle.BelowMinGap += idle.BelowMinGap
	return Rest{Compute: v[waitCompute], Late: v[waitLate], Outside: s.Dur - (sw.End - sw.Start)}
}

func addRest(a, b Rest) Rest {
	return Rest{Compute: a.Compute + b.Compute, Late: a.Late + b.Late, Outside: a.Outside + b.Outside}
}

func (r Rest) div(n int64) Rest {
	return Rest{Compute: r.Compute / n, Late: r.Late / n, Outside: r.Outside / n}
}

// lastStep maps each step number of the rank's result to the index of
// its last step of that number.
func (r *rankState) lastStep() map[int64]int {
	if r.stepIdx == nil {
		r.stepIdx = map[int64]int{}
		for i, st := range r.res.Steps {
			r.stepIdx[st.Num] = i
		}
	}
	return r.stepIdx
}

// stepSplits sums the participant's collective waits by step number, by
// what held the straggler back; it is asked once the waits are attributed.
func (p *participant) stepSplits() map[int64]waitVec {
	if p.bySteps == nil {
		p.bySteps = map[int64]waitVec{}
		for _, c := range p.colls {
			v := p.bySteps[c.step]
			v.add(c.idle)
			p.bySteps[c.step] = v
		}
	}
	return p.bySteps
}

// confidence grades the job's verdict by its reasons (package
// advice/jobadvice writes them): the ranks' own, counted once where
// several ranks give the same, the job's notes, and its own doubts.
func (j *analysis) confidence() analyze.Confidence {
	o := &j.res.Overall
	low := false
	seen := map[string]bool{}
	n := len(j.res.Facts.Notes)
	for _, r := range j.ranks {
		low = low || r.res.Confidence == analyze.Low
		for _, s := range RankReasons(r.res) {
			if !seen[s] {
				seen[s] = true
				n++
			}
		}
	}
	for _, doubt := range []bool{j.res.Wait.MostlyLate(), o.Idle.MostlyUntraced(o.Window.Dur())} {
		if doubt {
			low = true
			n++
		}
	}
	return analyze.Grade(low, n)
}

// RankReasons returns the reasons of a rank's result that the job's
// reasons carry: all but the first, the rank's deciding sentence, when it
// has device work.
func RankReasons(res *analyze.Result) []string {
	if res.Verdict != analyze.NoDevice && len(res.Reasons) > 0 {
		return res.Reasons[1:]
	}
	return res.Reasons
}
