package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// attributeDevice finds d's idle time inside the window, splits the gaps of
// at least MinGap by what the waited-for thread was doing, and sums shorter
// idle into BelowMinGap.
func (a *analyzer) attributeDevice(d *device) {
	w := Interval{a.res.Window.Start, a.res.Window.End}
	d.winBusy = d.busyIn(w)
	i := d.firstEndingAfter(w.Start)
	prevEnd := int64(math.MinInt64) // end of the busy interval before idle
	if i > 0 {
		prevEnd = d.busy[i-1].End
	}
	for ; ; i++ {
		next := int64(math.MaxInt64)
		if i < len(d.busy) {
			next = d.busy[i].Start
		}
		full := Interval{prevEnd, next}
		if idle := (Interval{max(full.Start, w.Start), min(full.End, w.End)}); idle.End > idle.Start {
			a.idle(d, idle, full)
		}
		if i >= len(d.busy) || next >= w.End {
			break
		}
		prevEnd = d.busy[i].End
	}
}

// idle accounts for one idle stretch of d inside the window; full is the
// whole idle interval it is part of (unbounded at the device's ends).
func (a *analyzer) idle(d *device, idle, full Interval) {
	dur := idle.End - idle.Start
	if dur < a.opt.MinGap {
		d.split.BelowMinGap += dur
		a.stepIdle(idle, NumCauses)
		return
	}
	track, linked := a.waitedFor(d, full)
	g := Gap{Device: d.id, Start: idle.Start, Dur: dur, Track: track, Step: a.stepIndex(idle.Start)}
	a.sites.gap = g.Start
	a.sites.prog = a.programBefore(d, full.Start)
	a.wholeStep = a.stepHolding(g.Step, idle)
	a.segs.start(&g)
	if g.Track >= 0 {
		g.Thread = a.t.Tracks[g.Track].Name
		a.segments(d, &g, full, linked)
	} else {
		a.addSegment(nil, nil, g.Start, g.Dur, Untraced, 0, nil)
		g.Split.Add(Untraced, g.Dur)
		a.tally.add(Untraced, 0, -1, g.Dur)
	}
	a.segs.finish(&g)
	a.addStalled(&g)
	if i := a.wholeStep; i >= 0 {
		a.res.Steps[i].Idle.AddAll(&g.Split)
		a.wholeStep = -1
	}
	g.Cause = largestCause(&g.Split)
	g.Step = a.stepMostOf(g.Step, idle)
	for c := InSync; c < NumCauses; c++ {
		d.split.Add(c, g.Split.Of(c))
	}
	d.gaps = append(d.gaps, g)
}

// stepIdle adds the idle stretch iv of cause c (NumCauses: idle below
// MinGap) to the steps it overlaps. Each step owns the time from its start
// to the next step's start, the last step the time up to the window's end,
// as for the other per-step figures (see Step).
func (a *analyzer) stepIdle(iv Interval, c Cause) {
	st := a.res.Steps
	for i := max(a.stepIndex(iv.Start), 0); i < len(st) && st[i].Start < iv.End; i++ {
		d := overlap(iv, a.stepSpan(i))
		if c == NumCauses {
			st[i].Idle.BelowMinGap += d
		} else {
			st[i].Idle.Add(c, d)
		}
	}
}

// stepHolding returns i, the index of the step starting at or before
// iv.Start, when the time step i owns holds all of iv, else -1. A gap in
// one step, the common case, adds its split to the step at once rather
// than each of its segments (see segmentDone).
func (a *analyzer) stepHolding(i int, iv Interval) int {
	if i >= 0 && iv.End <= a.stepSpan(i).End {
		return i
	}
	return -1
}

// stepMostOf returns the index of the step that holds the most of iv,
// which starts in step i (-1: before the first): a gap that begins just
// before a step's start and lasts into it is that step's, for the reader.
// The earlier step wins a tie.
func (a *analyzer) stepMostOf(i int, iv Interval) int {
	best, most := i, int64(-1)
	if i >= 0 {
		most = overlap(a.stepSpan(i), iv)
	}
	for k := i + 1; k < len(a.res.Steps) && a.res.Steps[k].Start < iv.End; k++ {
		if o := overlap(a.stepSpan(k), iv); o > most {
			best, most = k, o
		}
	}
	return best
}

// stepSpan returns the time step i owns in the per-step figures: from its
// start to the next step's start, for the last step to the window's end.
func (a *analyzer) stepSpan(i int) Interval {
	st := a.res.Steps
	if i+1 < len(st) {
		return Interval{st[i].Start, st[i+1].Start}
	}
	return Interval{st[i].Start, a.res.Window.End}
}

// stepIndex returns the index in Result.Steps of the last step starting at
// or before t, or -1.
func (a *analyzer) stepIndex(t int64) int {
	st := a.res.Steps
	if len(st) == 0 {
		return -1 // asked per segment: a run without steps skips the search
	}
	if i := a.stepHint; i >= 0 && i < len(st) && st[i].Start <= t && (i+1 == len(st) || t < st[i+1].Start) {
		return i
	}
	i, _ := slices.BinarySearchFunc(a.res.Steps, t, func(s Step, t int64) int {
		if s.Start <= t {
			return -1
		}
		return 1
	})
	a.stepHint = i - 1
	return i - 1
}

func largestCause(b *Breakdown) Cause {
	best := InSync
	for c := InSync + 1; c < NumCauses; c++ {
		if b.Of(c) > b.Of(best) {
			best = c
		}
	}
	return best
}

// waitedFor returns the host track the device waited for in the idle
// interval full: in a JAX program the loop thread (see jax.go); else the
// thread that launched the work ending it, or else the thread with the
// most launches, or else the host thread with the most events; -1 when the
// trace has no host thread. linked says whether the thread was found
// through a launch link.
//
// It also sets a.stall: when the launch of the work ending the interval
// returned more than the slack before the work started, the work was
// queued from that return on and the device waited on a dependency (see
// stall.go), not on the launching thread, whose stack the stalled
// segments still show.
func (a *analyzer) waitedFor(d *device, full Interval) (track int32, linked bool) {
	a.stall.from = noStall
	if a.loop >= 0 {
		return a.loop, true
	}
	if full.End != math.MaxInt64 {
		if w := a.workStartingAt(d, full.End); w >= 0 {
			if h := a.links.host(a.t.Events[w].Corr); h >= 0 {
				from := a.queuedWork(full, h)
				a.setStall(from, w, h)
				if a.t.Events[h].End() > full.Start || from != noStall {
					return a.trackOf(h), true
				}
			}
		}
	}
	return a.fallbackThread(), false
}

func (a *analyzer) fallbackThread() int32 {
	if !a.fallbackKnown {
		a.fallback, a.fallbackKnown = a.findFallback(), true
	}
	return a.fallback
}

// findFallback returns the host thread with the most launches, else the
// one with the most events. Ties go to the thread whose first event comes
// first: track order differs between formats, event times do not.
func (a *analyzer) findFallback() int32 {
	best, n := int32(-1), 0
	better := func(tr int32, c int) bool {
		if c != n {
			return c > n
		}
		if best < 0 {
			return true
		}
		x, y := a.t.Events[a.t.Tracks[tr].Lo].Start, a.t.Events[a.t.Tracks[best].Lo].Start
		return x < y || x == y && tr < best
	}
	for tr, c := range a.links.launches {
		if c > 0 && better(int32(tr), c) {
			best, n = int32(tr), c
		}
	}
	if best >= 0 {
		return best
	}
	for i := range a.t.Tracks {
		tr := &a.t.Tracks[i]
		if c := tr.Hi - tr.Lo; tr.Kind == trace.TrackHost && c > 0 && better(int32(i), c) {
			best, n = int32(i), c
		}
	}
	return best
}

// segments splits gap g by the stack of host events on the waited-for
// thread, one segment per change of stack, and classifies each.
func (a *analyzer) segments(d *device, g *Gap, full Interval, linked bool) {
	th := a.thread(g.Track)
	end := g.Start + g.Dur
	stack := &a.stack
	next := a.stackFrom(th, g.Start)
	for cur := g.Start; cur < end; {
		nb := min(end, stack.top().end)
		if cur < a.stall.from {
			nb = min(nb, a.stall.from)
		}
		if next < len(th.evs) && th.evs[next].Start < nb {
			nb = th.evs[next].Start
		}
		if len(stack.evs) == 0 && linked {
			// The thread shows nothing: the rest of the host may enter or
			// leave a blocking call meanwhile (see cause).
			_, _, next := a.syncsAt.around(a.hostSyncs(), cur)
			nb = min(nb, next)
		}
		// A JAX loop thread inside a dispatch waits on the runtime
		// threads: their runtime work starting or ending changes the
		// cause.
		nb = min(nb, a.nextRuntimeChange(th, stack, cur))
		if nb > cur {
			a.emit(d, th, g, full, Interval{cur, nb}, stack, linked)
		}
		cur = nb
		next = a.advance(th, next, cur)
	}
	a.walk = stackWalk{th: th, at: end, next: next}
}

// stackWalk is where the last gap's walk of a thread's stack ended: at
// time at, with a.stack the stack there and next the thread's first event
// not yet entered.
type stackWalk struct {
	th   *thread
	at   int64
	next int
}

// stackFrom sets a.stack to th's stack at x and returns the index of th's
// first event starting after x. A device's gaps come in time order and
// mostly wait on one thread: the stack is walked on from where the last
// gap left it, each event entered and left once, rather than built anew
// at every gap (a trace nested 100,000 deep with 1,000 gaps took 100
// million pushes that way).
func (a *analyzer) stackFrom(th *thread, x int64) int {
	if w := a.walk; w.th == th && w.at <= x {
		return a.advance(th, w.next, x)
	}
	evs, next := th.stackAt(x, a.stackBuf)
	a.stackBuf = evs
	a.stack.reset(a, th, evs)
	return next
}

// advance moves a.stack, th's stack up to the event before next, on to
// time x: the events that end by x leave it, those that start by x and
// are still running enter it. It returns the first event starting after x.
func (a *analyzer) advance(th *thread, next int, x int64) int {
	a.stack.leave(a, th, x)
	for ; next < len(th.evs) && th.evs[next].Start <= x; next++ {
		if th.inside(next, x) {
			a.stack.push(a, th, int32(next))
		}
	}
	return next
}

// emit classifies the stretch iv with the thread inside stack and adds it
// to g's segments.
func (a *analyzer) emit(d *device, th *thread, g *Gap, full, iv Interval, stack *hostStack, linked bool) {
	if iv.Start >= a.stall.from {
		a.emitStalled(th, g, iv, stack)
		return
	}
	c, via := a.cause(d, th, full, iv.Start, stack, linked)
	if c == AfterSync && a.afterUntil < iv.End {
		// The rest of the stretch is past what the sync explains.
		a.emit(d, th, g, full, Interval{iv.Start, a.afterUntil}, stack, linked)
		a.emit(d, th, g, full, Interval{a.afterUntil, iv.End}, stack, linked)
		return
	}
	g.Split.Add(c, iv.End-iv.Start)
	// The call of a sync segment: the blocking call the thread is inside,
	// the one whose return the gap continues, or another thread's; of a
	// runtime segment, another thread's runtime work the dispatch waits
	// for.
	var sync trace.StrID
	switch {
	case via != nil:
		sync = via.name
		a.tally.add(c, via.name, via.track, iv.End-iv.Start)
	case c == AfterSync:
		sync = th.syncNameAt(a, th.lastSyncIndex(iv.Start))
		a.tally.add(c, sync, th.track, iv.End-iv.Start)
	default:
		name := a.culprit(c, th, stack)
		if c == InSync {
			sync = name
		}
		a.tally.add(c, name, th.track, iv.End-iv.Start)
	}
	a.addSegment(th, stack, iv.Start, iv.End-iv.Start, c, sync, via)
}

// emitStalled adds the stalled stretch iv to g's segments, with the
// launching thread's stack and, when that thread is inside a blocking call,
// the call (or, when it shows nothing, another thread's): a sync that
// waited on a stalled device.
func (a *analyzer) emitStalled(th *thread, g *Gap, iv Interval, stack *hostStack) {
	dur := iv.End - iv.Start
	g.Split.Add(Stall, dur)
	a.tally.add(Stall, a.stall.dep.call, th.track, dur)
	var sync trace.StrID
	if f := stack.top(); f.sync >= 0 {
		sync = th.evs[stack.evs[f.sync]].Name
	} else if in, _, _ := a.syncsAt.around(a.hostSyncs(), iv.Start); in != nil && len(stack.evs) == 0 {
		// The launching thread shows nothing; another thread blocks
		// (segments splits the stretch where it enters or leaves).
		sync = in.name
	}
	if sync != 0 {
		a.stall.inSync += dur
	}
	a.addSegment(th, stack, iv.Start, dur, Stall, sync, nil)
}

// addSegment adds a stretch to the gap's segments (see segEncoder.add) and,
// when it opens a segment, finds what that segment is blamed on. The
// stack is nil when the gap waited for no thread; via is the other
// thread's call that decided the cause, or nil.
func (a *analyzer) addSegment(th *thread, stack *hostStack, start, dur int64, c Cause, sync trace.StrID, via *hostStretch) {
	var names stackNode
	if stack != nil {
		names = stack.top().names
	}
	if s, opened := a.segs.add(start, dur, c, sync, a.t.Str, names); opened && a.segs.done != nil {
		a.openBlame(th, stack, s, via)
	}
}

// cause applies the rules in order: in-sync, waiting on a background
// loader's queue (input), after-sync, input, runtime, host, untraced.
// When the thread shows no event, what the rest of the host does
// decides: a launching thread that idles while another thread
// blocks on the device has nothing to launch because of that block. The
// host sync that decided is returned then. This holds only when a launch
// link or JAX's host model named the thread (linked): when the thread is a
// guess, so is the rest. A JAX loop thread inside a dispatch while another
// thread does runtime work waits for that work: runtime, and the stretch
// of runtime work is returned. A JAX loop thread profiled without the
// Python tracer, inside nothing but its step annotation, runs Python the
// profile does not show: untraced.
func (a *analyzer) cause(d *device, th *thread, full Interval, x int64, stack *hostStack, linked bool) (Cause, *hostStretch) {
	f := stack.top()
	if f.sync >= 0 {
		return InSync, nil
	}
	if f.queue {
		// Waiting on background workers' queue: the workers load at their
		// own pace whatever the loop returned from before, so the wait is
		// the loader's even right after a sync.
		return Input, nil
	}
	if last, ok := th.lastSync(x); ok && a.afterSync(d, last, full, x) {
		return AfterSync, nil
	}
	switch {
	case f.input >= 0:
		return Input, nil
	case f.runtime >= 0:
		return Runtime, nil
	}
	if via := a.runtimeBehind(th, stack, x); via != nil {
		return Runtime, via
	}
	switch {
	case len(stack.evs) > 0 && !a.onlyStepMarkers(th, stack):
		return Host, nil
	case !linked:
		return Untraced, nil
	}
	in, last, _ := a.syncsAt.around(a.hostSyncs(), x)
	switch {
	case in != nil:
		return InSync, in
	case last != nil && a.afterSync(d, last.Interval, full, x):
		return AfterSync, last
	}
	return Untraced, nil
}

// afterSync reports whether instant x of the idle interval full is
// after-sync, following the blocking call sync: the call waited for d, the
// device has waited on the host since, up to full (see serialized), and x
// comes less than d's busy time during the call after the call's return. Had
// the host not blocked, it could have done that much of its work after the
// call while the device ran the work the call waited for; host work
// beyond it no queued device work could have overlapped, and it is the
// host's own (a benchmark clearing a cache on the CPU after each sync). It
// sets a.afterUntil to the end of that time. A gap's segments ask of the
// same call and interval in a row: the last answer is kept.
func (a *analyzer) afterSync(d *device, sync, full Interval, x int64) bool {
	k := serialKey{d, sync, full}
	c := &a.serial
	if !c.set || c.key != k {
		busy := d.busyIn(sync)
		ok := busy > 0 && a.serialized(d, sync.End, full)
		*c = serialAnswer{key: k, ok: ok, until: sync.End + busy, set: true}
	}
	a.afterUntil = c.until
	return c.ok && x < c.until
}

// serialKey and serialAnswer keep waitedSerialized's last answer.
type serialKey struct {
	d          *device
	sync, full Interval
}

type serialAnswer struct {
	key     serialKey
	ok, set bool
	// until is the end of the after-sync time the call can explain: a
	// sync on an empty queue (no busy time while it blocked) returns at
	// once and explains nothing after it.
	until int64
}

// serialized reports whether, since a blocking call returned at r, the
// device has waited on the host launch by launch up to the idle interval
// full: the call did not return while queued work kept the device busy for
// longer than the slack, every piece of work since started within the slack
// of its launch, and no other gap of at least MinGap came between. That
// last condition keeps one sync from explaining every later gap of a run
// whose host never gets ahead of the device anyway (a host-bound run).
func (a *analyzer) serialized(d *device, r int64, full Interval) bool {
	if r >= full.Start {
		return true
	}
	if a.queuedPast(d, r) {
		return false
	}
	if i := prevIdle(d.bigIdle, full.Start); i >= 0 && d.bigIdle[i].End > r {
		return false
	}
	return !a.queuedIn(d, Interval{r, full.Start})
}

// queuedIn reports whether some queued work on d starts inside w.
func (a *analyzer) queuedIn(d *device, w Interval) bool {
	k, _ := slices.BinarySearchFunc(d.queued, w.Start, func(run Interval, t int64) int {
		if run.End < t {
			return -1
		}
		return 1
	})
	if k == len(d.queued) {
		return false
	}
	first := d.queued[k].Start
	if first < w.Start {
		// The run holds work starting before w and at or after its start,
		// all of it queued but the run's ends only known: the first
		// work starting at or after w's start is in the run.
		first = a.workStartFrom(d, w.Start)
	}
	return first < w.End
}

// workStartFrom returns the start of d's first work starting at or after
// t, math.MaxInt64 when there is none.
func (a *analyzer) workStartFrom(d *device, t int64) int64 {
	if len(d.tracks) > fewTracks {
		r := a.reachOf(d)
		if k, _ := slices.BinarySearch(r.start, t); k < len(r.start) {
			return r.start[k]
		}
		return math.MaxInt64
	}
	first := int64(math.MaxInt64)
	for _, tr := range d.tracks {
		evs := a.t.TrackEvents(int(tr))
		for i := startIndex(evs, t); i < len(evs) && evs[i].Start < first; i++ {
			if e := &evs[i]; e.Kind == trace.KindWork && e.Dur() > 0 {
				first = e.Start
				break
			}
		}
	}
	return first
}

// prevIdle returns the index of the last idle interval starting before t,
// or -1.
func prevIdle(ivs []Interval, t int64) int {
	i, _ := slices.BinarySearchFunc(ivs, t, func(iv Interval, t int64) int {
		if iv.Start < t {
			return -1
		}
		return 1
	})
	return i - 1
}

// queuedPast reports whether work that started before t on d was still
// running more than the slack after t. A stream runs its work in order, so
// on each stream only the last work started before t can be running. A
// device of many streams is looked up in its reach instead, at a binary
// search per call rather than one per stream.
func (a *analyzer) queuedPast(d *device, t int64) bool {
	if len(d.tracks) > fewTracks {
		r := a.reachOf(d)
		i, _ := slices.BinarySearch(r.start, t) // the work starting before t
		return i > 0 && r.end[i-1] > t+a.opt.SyncSlack
	}
	for _, tr := range d.tracks {
		evs := a.t.TrackEvents(int(tr))
		i := startIndex(evs, t)
		for i--; i >= 0; i-- {
			if e := &evs[i]; e.Kind == trace.KindWork && e.Dur() > 0 {
				if e.End() > t+a.opt.SyncSlack {
					return true
				}
				break
			}
		}
	}
	return false
}

// startIndex returns the index of the first of evs starting at or after t.
func startIndex(evs []trace.Event, t int64) int {
	i, _ := slices.BinarySearchFunc(evs, t, func(e trace.Event, t int64) int {
		if e.Start < t {
			return -1
		}
		return 1
	})
	return i
}

// reachOf returns d's reach, making it on first use: its work in start
// order (of equal starts, in track order), each with the latest end of the
// work started up to it.
func (a *analyzer) reachOf(d *device) *reach {
	r := &d.reach
	if r.start != nil {
		return r
	}
	for _, tr := range d.tracks {
		lo := a.t.Tracks[tr].Lo
		evs := a.t.TrackEvents(int(tr))
		for i := range evs {
			if e := &evs[i]; e.Kind == trace.KindWork && e.Dur() > 0 {
				r.idx = append(r.idx, lo+i)
			}
		}
	}
	evs := a.t.Events
	slices.SortStableFunc(r.idx, func(i, j int) int { return cmp.Compare(evs[i].Start, evs[j].Start) })
	r.start, r.end = make([]int64, len(r.idx)), make([]int64, len(r.idx))
	latest := int64(math.MinInt64)
	for k, i := range r.idx {
		latest = max(latest, evs[i].End())
		r.start[k], r.end[k] = evs[i].Start, latest
	}
	return r
}
