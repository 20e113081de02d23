package job

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"slices"

	"github.com/tracegap/tracegap/internal/analyze"
)

// collectivePattern names the device work that is a collective: NCCL and
// RCCL kernels (ncclKernel_*, ncclDevKernel_*, rccl*) and XLA's collective
// ops (all-reduce.3, all-gather-start.1, reduce-scatter, all-to-all,
// collective-permute-done.2, ...).
var collectivePattern = regexp.MustCompile(`(?i)^(nccl|rccl)|^%?(all-reduce|all-gather|reduce-scatter|all-to-all|ragged-all-to-all|collective-permute|collective-broadcast)(-start|-done)?([.-]\d+)*$`)

// isCollective reports whether device work named name is a collective
// (an NCCL or RCCL kernel, an XLA collective op).
func isCollective(name string) bool { return collectivePattern.MatchString(name) }

// pseudoStep numbers the one stretch collectives are matched in when the
// ranks have no step in common to match them by.
const pseudoStep = -1

// rankState is one rank of a job analysis.
type rankState struct {
	num  int
	idx  int // index in Result.Ranks
	sum  *Summary
	res  *analyze.Result
	rule analyze.Rule
	// off puts the rank's times on the job's timeline.
	off int64
	// steps are the rank's step markers, warm-up included.
	steps []analyze.StepMarker
	parts []*participant
	// stepIdx caches lastStep.
	stepIdx map[int64]int
}

// participant is one device of one rank: each device takes part in every
// collective.
type participant struct {
	r     *rankState
	dev   int // index in Result.Devices of the rank's analysis
	d     *DeviceSummary
	colls []coll // in start order
	// busy is the device's work inside its collectives' spans, with
	// collective waits taken out (see covered).
	busy []analyze.Interval
	// bySteps caches stepSplits.
	bySteps map[int64]waitVec
}

// coll is one collective on one device. Times are the rank's own.
type coll struct {
	*Coll
	step int64 // step number; noStep when in no step
	// wait runs from the collective's start to the straggler's, at most
	// its length; split is it by what held the straggler back.
	wait  int64
	split waitVec
	// idle is the part of the wait the job counts: inside the rank's
	// window, where no other work of the device ran and no earlier wait
	// was counted, by part as split. Every wait figure (ranks, steps,
	// collectives, findings) sums it, so they agree.
	idle waitVec
}

// member is a participant's part in a group: its i-th collective.
type member struct {
	p *participant
	r *rankState
	i int
}

func (m member) coll() *coll { return &m.p.colls[m.i] }

// group is the k-th collective of step num on every participant.
type group struct {
	num     int64
	k       int
	members []member
	// latest is the latest start on the job's timeline; strag indexes
	// the member that started then.
	latest int64
	strag  int
}

func (g *group) straggler() member { return g.members[g.strag] }

func (g *group) earliest() int64 {
	e := int64(math.MaxInt64)
	for _, m := range g.members {
		e = min(e, m.coll().Start+m.r.off)
	}
	return e
}

// collect takes the rank's step markers and every device's collectives
// from its summary.
func (r *rankState) collect() {
	r.steps = r.sum.Steps
	for dev := range r.sum.Devices {
		d := &r.sum.Devices[dev]
		p := &participant{r: r, dev: dev, d: d}
		for i := range d.Colls {
			c := coll{Coll: &d.Colls[i], step: noStep}
			if c.StepIdx >= 0 {
				c.step = r.steps[c.StepIdx].Num
			}
			p.colls = append(p.colls, c)
		}
		r.parts = append(r.parts, p)
	}
}

// match groups the collectives: the k-th collective of step N on each
// participant is the same collective. Steps count when every rank with
// device work has them; without any such step, the k-th collective of
// each whole trace is matched.
func (j *analysis) match() {
	act := j.active()
	if len(act) < 2 {
		j.note(NoteFewActive, 0, 0)
		return
	}
	common := stepNums(act[0].steps, markerNum)
	window := stepNums(act[0].res.Steps, stepNum)
	noSteps := len(act[0].steps) == 0
	for _, r := range act[1:] {
		common = intersect(common, stepNums(r.steps, markerNum))
		window = intersect(window, stepNums(r.res.Steps, stepNum))
		noSteps = noSteps || len(r.steps) == 0
	}
	switch {
	case noSteps:
		j.note(NoteNoStepMarkers, 0, 0)
		for _, r := range act {
			for _, p := range r.parts {
				for i := range p.colls {
					p.colls[i].step = pseudoStep
				}
			}
		}
		common, window = []int64{pseudoStep}, []int64{pseudoStep}
	case len(common) == 0:
		j.note(NoteNoCommonStep, 0, 0)
		return
	}
	j.window = window
	mismatch := 0
	for _, num := range common {
		if !j.matchStep(act, num) {
			mismatch++
		}
	}
	if mismatch > 0 {
		j.note(NoteMismatch, mismatch, 0)
	}
}

// matchStep groups step num's collectives and reports whether every
// participant ran as many.
func (j *analysis) matchStep(act []*rankState, num int64) bool {
	var idx [][]int // per participant, its collectives in the step
	var ms []member
	n := math.MaxInt
	same := true
	for _, r := range act {
		for _, p := range r.parts {
			var is []int
			for i := range p.colls {
				if p.colls[i].step == num {
					is = append(is, i)
				}
			}
			if len(idx) > 0 && len(is) != len(idx[0]) {
				same = false
			}
			idx = append(idx, is)
			ms = append(ms, member{p: p, r: r})
			n = min(n, len(is))
		}
	}
	for k := 0; k < n; k++ {
		g := &group{num: num, k: k}
		for pi, m := range ms {
			m.i = idx[pi][k]
			g.members = append(g.members, m)
		}
		j.groups = append(j.groups, g)
	}
	return same
}

// stepNums returns the distinct numbers of steps, sorted; num reads one.
func stepNums[S any](steps []S, num func(S) int64) []int64 {
	var ns []int64
	for _, s := range steps {
		ns = append(ns, num(s))
	}
	slices.Sort(ns)
	return slices.Compact(ns)
}

func markerNum(s analyze.StepMarker) int64 { return s.Num }

func stepNum(s analyze.Step) int64 { return s.Num }

// intersect returns the values in both sorted slices.
func intersect(a, b []int64) []int64 {
	var out []int64
	for i, k := 0, 0; i < len(a) && k < len(b); {
		switch {
		case a[i] < b[k]:
			i++
		case a[i] > b[k]:
			k++
		default:
			out = append(out, a[i])
			i, k = i+1, k+1
		}
	}
	return out
}

// clockJitter is how far apart collective ends on ranks with one clock
// still fall: corrections below it are not worth a finding.
const clockJitter = 10_000

// align puts every rank on the job's timeline. The ranks' collectives end
// together (the last rank to arrive releases them all), so each rank's
// clock is shifted by the median difference between the ends of its first
// device's collectives and those of the first rank; the timeline starts
// at the earliest rank's trace start.
func (j *analysis) align() {
	act := j.active()
	raw := make([]int64, len(j.ranks))
	var worst, worstRank int64
	var unmatched []string
	for i, r := range j.ranks {
		raw[i] = r.sum.StartNs
		if len(act) < 2 || len(r.parts) == 0 || r == act[0] {
			continue
		}
		d, ok := j.clockDiff(act[0].parts[0], r.parts[0])
		if !ok {
			unmatched = append(unmatched, fmt.Sprint(r.num))
			continue
		}
		raw[i] += d
		if abs(d) > abs(worst) {
			worst, worstRank = d, int64(r.num)
		}
	}
	j.clockFixed = abs(worst) >= clockJitter || len(unmatched) > 0
	zero := slices.Min(raw)
	for i, r := range j.ranks {
		r.off = raw[i] - zero
	}
	c := &j.res.Facts.Clock
	c.Matched, c.Worst, c.WorstRank, c.Unmatched = len(j.groups), worst, worstRank, unmatched
	if len(unmatched) > 0 {
		c.Ref = act[0].num
	}
}

// clockDiff returns the median, over the groups both take part in, of
// (ref's collective end - p's collective end) in absolute source time.
func (j *analysis) clockDiff(ref, p *participant) (int64, bool) {
	var ds []int64
	for _, g := range j.groups {
		a, b := -1, -1
		for mi, m := range g.members {
			switch m.p {
			case ref:
				a = mi
			case p:
				b = mi
			}
		}
		if a < 0 || b < 0 {
			continue
		}
		ds = append(ds, (ref.r.sum.StartNs+g.members[a].coll().End)-(p.r.sum.StartNs+g.members[b].coll().End))
	}
	if len(ds) == 0 {
		return 0, false
	}
	slices.Sort(ds)
	return ds[(len(ds)-1)/2], true
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// waits finds the group's straggler, the member that started last on the
// job's timeline, and each member's wait: from its start to the
// straggler's, at most its whole duration.
func (g *group) waits() {
	for i, m := range g.members {
		if s := m.coll().Start + m.r.off; i == 0 || s > g.latest {
			g.latest, g.strag = s, i
		}
	}
	for _, m := range g.members {
		c := m.coll()
		c.wait = min(g.latest-(c.Start+m.r.off), c.End-c.Start)
	}
}

// trimBusy works out the device's busy time inside its collectives' spans
// once the waits are known: its other work there, and each collective
// from the end of its wait.
func (p *participant) trimBusy() {
	ivs := slices.Clone(p.d.Overlap)
	for _, c := range p.colls {
		if s := c.Start + c.wait; s < c.End {
			ivs = append(ivs, analyze.Interval{Start: s, End: c.End})
		}
	}
	p.busy = mergeIntervals(ivs)
}

// covered returns the device's busy time in iv with collective waits
// taken out, given other, its other work's busy time in iv: outside the
// collectives' spans busy time is other work alone; inside, it is busy.
func (p *participant) covered(iv analyze.Interval, other int64) int64 {
	return other - analyze.Covered(p.d.Overlap, iv) + analyze.Covered(p.busy, iv)
}

// attribute splits each member's wait by what held the straggler back. Over
// the stretch since each one's previous collective ended (or its step
// began), the wait is the straggler's late arrival at that stretch, plus
// the straggler's extra device work (load imbalance), plus its extra idle,
// which is split by the causes of the straggler's idle there in excess of
// the waiting rank's.
func (g *group) attribute() {
	s := g.straggler()
	segS := s.coll().Seg
	expS, busyS := s.p.explain(s.coll())
	for mi, m := range g.members {
		c := m.coll()
		if mi == g.strag || c.wait <= 0 {
			continue
		}
		w := c.wait
		late := clamp((segS.Start+s.r.off)-(c.Seg.Start+m.r.off), 0, w)
		expM, busyM := m.p.explain(c)
		comp := clamp(busyS-busyM, 0, w-late)
		rest := w - late - comp
		var ex []int64
		for i := range expS {
			ex = append(ex, max(0, expS[i]-expM[i]))
		}
		if sum(ex) == 0 {
			ex = expS[:]
		}
		if sum(ex) == 0 {
			comp, rest = comp+rest, 0
		}
		parts := apportion(rest, ex)
		copy(c.split[:], parts)
		c.split[waitCompute] += comp
		c.split[waitLate] += late
	}
}

// explain splits the device's idle time in the stretch before collective
// c (with collective waits counted as idle) by cause: its own idle by
// what the waited-for host thread did, its waits in collectives as late.
// It also returns the busy time in the stretch.
func (p *participant) explain(c *coll) (waitVec, int64) {
	var v waitVec
	iv := c.Seg
	if iv.End <= iv.Start {
		return v, 0
	}
	busy := p.covered(iv, c.SegBusy)
	idle := c.SegIdleTotal
	for k := analyze.InSync; k < analyze.NumCauses; k++ {
		v[k] = c.SegIdle.Of(k)
	}
	v[waitLate] = max(0, iv.End-iv.Start-busy-idle)
	return v, busy
}

// countWaits fills each collective's idle: its wait inside w, where no
// other work of the device ran and no earlier wait was counted, split in
// proportion to its split.
func (p *participant) countWaits(w analyze.Interval) {
	counted := int64(math.MinInt64)
	for i := range p.colls {
		c := &p.colls[i]
		c.idle = waitVec{}
		if c.wait <= 0 {
			continue
		}
		wi := analyze.Interval{Start: max(c.Start, w.Start, counted), End: min(c.Start+c.wait, w.End)}
		counted = max(counted, c.Start+c.wait)
		if wi.End <= wi.Start {
			continue
		}
		n := wi.End - wi.Start - analyze.Covered(p.busy, wi) // wi is inside c's span
		c.idle = apportionVec(n, c.split)
	}
}

// windowWaits returns the participant's counted collective waits (see
// countWaits), by what held the straggler back, and its collectives'
// transfer time inside w, which must be the window countWaits counted
// the waits in (the participant's): the waits are counted once, there.
func (p *participant) windowWaits(w analyze.Interval) (waitVec, int64) {
	var v waitVec
	var transfer int64
	for i := range p.colls {
		c := &p.colls[i]
		transfer += analyze.Covered([]analyze.Interval{{Start: c.Start + c.wait, End: c.End}}, w)
		v.add(c.idle)
	}
	return v, transfer
}

// waitVec holds a wait by part: the idle causes in Cause order, then
// compute, then late.
type waitVec [numWaitParts]int64

const (
	waitCompute = int(analyze.NumCauses) + iota
	waitLate
	numWaitParts
)

func (v *waitVec) add(o waitVec) {
	for i := range v {
		v[i] += o[i]
	}
}

func (v waitVec) total() int64 { return sum(v[:]) }

func (v waitVec) div(n int64) waitVec {
	for i := range v {
		v[i] /= n
	}
	return v
}

func (v waitVec) split() WaitSplit {
	var w WaitSplit
	for c := analyze.InSync; c < analyze.NumCauses; c++ {
		w.Idle.Add(c, v[c])
	}
	w.Compute, w.Late = v[waitCompute], v[waitLate]
	return w
}

func clamp(x, lo, hi int64) int64 { return max(lo, min(x, hi)) }

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// apportion splits total in proportion to the non-negative weights,
// exactly: each part is rounded down (in 128-bit arithmetic, so that
// nothing overflows) and the remainder goes one by one to the largest
// weights. With total equal to the weights' sum, the parts are the weights.
func apportion(total int64, weights []int64) []int64 {
	parts := make([]int64, len(weights))
	s := sum(weights)
	if total <= 0 || s <= 0 {
		return parts
	}
	left := total
	for i, w := range weights {
		hi, lo := bits.Mul64(uint64(total), uint64(w))
		q, _ := bits.Div64(hi, lo, uint64(s))
		parts[i] = int64(q)
		left -= parts[i]
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(weights[y], weights[x]) })
	for k := 0; left > 0; k = (k + 1) % len(order) {
		if weights[order[k]] > 0 {
			parts[order[k]]++
			left--
		}
	}
	return parts
}

// apportionVec scales a wait's split to n of its nanoseconds.
func apportionVec(n int64, v waitVec) waitVec {
	var out waitVec
	copy(out[:], apportion(n, v[:]))
	return out
}
