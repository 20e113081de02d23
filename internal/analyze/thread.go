package analyze

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// thread holds what the attribution needs about one host thread, built on
// first use: only the threads that launched work or were waited for are
// ever looked at.
type thread struct {
	track int32
	lo    int // index in Trace.Events of evs[0]
	evs   []trace.Event
	// parent holds each event's enclosing event; built by the host scan
	// or on first use.
	parent *parentIndex
	// syncs and inputs are the merged intervals during which the thread
	// was inside a blocking call or inside the input pipeline.
	syncs, inputs []Interval
	// loading is inputs less syncs: the time the thread spent loading
	// data. A blocking call nested in an input event (TorchRec's
	// device-to-host copy inside "## sparse_data_dist ##") is a sync, not
	// loading, in the verdict's comparison of loading with compute.
	loading []Interval
	// runtime are the merged intervals during which the thread was in
	// runtime work (compilation, allocation, defragmentation).
	runtime []Interval
	// background is set when an input event shows the loader running in
	// worker processes or threads, the loop only taking ready batches.
	background bool
	// copies are the async copies with a duration, by index in evs,
	// until finish finds those that block: that is known only once every
	// device's work has been followed to its launch.
	copies []int32
	// dispatches are the thread's dispatches of compiled functions, in
	// start order, those without a duration included (see
	// dispatchBefore).
	dispatches []Interval
	// syncHint is the last answer of lastSyncIndex, plus one; syncCalls
	// the calls starting syncs found so far, plus two (see syncCallAt).
	syncHint  int
	syncCalls []int32
}

func (a *analyzer) thread(track int32) *thread {
	if th := a.threads[track]; th != nil {
		return th
	}
	th := a.unfinished(track)
	th.finish(a)
	a.threads[track] = th
	return th
}

// trackOf returns the track that holds event ev. Most lookups are of the
// launches of work in time order, which come from one or a few threads,
// so the last answer's range is kept and the trace searched only for an
// event outside it.
func (a *analyzer) trackOf(ev int32) int32 {
	r := &a.lastTrack
	if int(ev) < r.lo || int(ev) >= r.hi {
		tr := a.t.TrackOf(int(ev))
		r.lo, r.hi, r.track = a.t.Tracks[tr].Lo, a.t.Tracks[tr].Hi, int32(tr)
	}
	return r.track
}

// trackRange is a track and the range of its events.
type trackRange struct {
	lo, hi int
	track  int32
}

// unfinished returns the thread of track with its events classified but
// its async copies not yet sorted into blocking or not, which needs every
// device's work linked to its launch: what the device scan may ask of
// the loop thread (its dispatches) before the links are complete.
func (a *analyzer) unfinished(track int32) *thread {
	if th := a.threads[track]; th != nil {
		return th
	}
	if th := a.scanned[track]; th != nil {
		return th
	}
	th := a.newThread(track)
	for i := range th.evs {
		th.add(a, i, a.cls.of(th.evs[i].Name))
	}
	if a.scanned == nil {
		a.scanned = map[int32]*thread{}
	}
	a.scanned[track] = th
	return th
}

// newThread returns the thread of track with nothing classified yet.
func (a *analyzer) newThread(track int32) *thread {
	tr := &a.t.Tracks[track]
	return &thread{track: track, lo: tr.Lo, evs: a.t.Events[tr.Lo:tr.Hi]}
}

// add classifies event i of class k (its name's) into the thread's
// intervals. The events are added in order, in the pass over every host
// event (scanHost) or, for another thread, when it is first used. Most
// events are of no class: add is kept short enough to be inlined, and
// only the others make the call.
func (th *thread) add(a *analyzer, i int, k class) {
	if k != classNone {
		th.addClassed(a, i, k)
	}
}

// addClassed is add of an event of a class.
func (th *thread) addClassed(a *analyzer, i int, k class) {
	e := &th.evs[i]
	if k == classDispatch {
		th.dispatches = append(roomForOne(th.dispatches), Interval{e.Start, e.End()})
	}
	if e.Dur() <= 0 {
		return
	}
	switch k {
	case classSync:
		th.syncs = addInterval(th.syncs, e)
	case classAsyncCopy:
		th.copies = append(th.copies, int32(i))
	case classInput:
		th.inputs = addInterval(th.inputs, e)
		th.background = th.background || a.cls.inBackground(e.Name)
	case classRuntime:
		th.runtime = addInterval(th.runtime, e)
	}
}

// finish adds the async copies that block to the thread's blocking calls,
// once the devices' work has been followed to its launches, and finds
// the time spent loading.
func (th *thread) finish(a *analyzer) {
	var blocking []Interval
	for _, i := range th.copies {
		if a.links.isBlocking(int32(th.lo) + i) {
			blocking = addInterval(blocking, &th.evs[i])
		}
	}
	th.syncs = union(th.syncs, blocking)
	th.copies = nil
	th.loading = subtract(th.inputs, th.syncs)
}

// addInterval adds e to merged intervals built in start order.
func addInterval(ivs []Interval, e *trace.Event) []Interval {
	if n := len(ivs); n > 0 && e.Start <= ivs[n-1].End {
		ivs[n-1].End = max(ivs[n-1].End, e.End())
		return ivs
	}
	return append(roomForOne(ivs), Interval{e.Start, e.End()})
}

// roomForOne returns s with room to append one more element, doubling its
// capacity when it is full. append grows a large slice by a quarter at a
// time: on a long trace, copying into (and first touching the memory of)
// each larger array of a thread's intervals cost more than the room a
// doubling leaves unused.
func roomForOne[S ~[]E, E any](s S) S {
	if len(s) < cap(s) {
		return s
	}
	return slices.Grow(s, max(len(s), 8))
}

// inside reports whether event i covers instant x.
func (th *thread) inside(i int, x int64) bool {
	e := &th.evs[i]
	return e.Dur() > 0 && e.Start <= x && x < e.End()
}

// parents returns the enclosing-event index, built with one pass if the
// host scan did not build it (see scanHost).
func (th *thread) parents() *parentIndex {
	if th.parent != nil {
		return th.parent
	}
	th.parent = newParentIndex(len(th.evs))
	var n nesting
	for i := range th.evs {
		e := &th.evs[i]
		dur := e.Dur()
		th.parent.set(i, n.next(i, e.Start, e.Start+dur, dur > 0))
	}
	return th.parent
}

// nesting finds the enclosing event of each of a thread's events, given
// in order, with a stack of the events still open.
type nesting struct {
	open []int32 // indexes of the events open, innermost last
	ends []int64 // their ends
}

// next returns the index of the event enclosing event i, which runs from
// start to end, or -1; i is then open if it has a duration.
func (n *nesting) next(i int, start, end int64, hasDur bool) int32 {
	k := len(n.ends)
	for k > 0 && n.ends[k-1] <= start {
		k--
	}
	n.open, n.ends = n.open[:k], n.ends[:k]
	p := int32(-1)
	if k > 0 {
		p = n.open[k-1]
	}
	if hasDur {
		n.open = append(n.open, int32(i))
		n.ends = append(n.ends, end)
	}
	return p
}

// stackAt returns the events covering x, outermost first, and the index of
// the first event starting after x.
func (th *thread) stackAt(x int64, buf []int32) ([]int32, int) {
	next, _ := slices.BinarySearchFunc(th.evs, x, func(e trace.Event, x int64) int {
		if e.Start <= x {
			return -1
		}
		return 1
	})
	return th.chainAt(next, x, buf), next
}

// chainAt returns the events covering x, outermost first, given next, the
// index of the first event starting after x.
func (th *thread) chainAt(next int, x int64, buf []int32) []int32 {
	par := th.parents()
	stack := buf[:0]
	// Every event covering x encloses the last event starting at or before
	// x (events nest), so x's stack is on that event's parent chain.
	for i := int32(next - 1); i >= 0; i = par.of(i) {
		if th.inside(int(i), x) {
			stack = append(stack, i)
		}
	}
	slices.Reverse(stack)
	return stack
}

// lastSync returns the thread's last blocking call that ended at or before
// x, and whether there is one.
func (th *thread) lastSync(x int64) (Interval, bool) {
	if i := th.lastSyncIndex(x); i >= 0 {
		return th.syncs[i], true
	}
	return Interval{}, false
}

// lastSyncIndex returns the index in th.syncs of the last blocking call
// that ended at or before x, or -1. The attribution asks at times that
// mostly grow, so the last answer is tried first.
func (th *thread) lastSyncIndex(x int64) int {
	ends := func(i int) bool { return th.syncs[i].End <= x } // true up to the answer
	n := len(th.syncs)
	for _, i := range [2]int{th.syncHint, th.syncHint + 1} {
		if i <= n && (i == 0 || ends(i-1)) && (i == n || !ends(i)) {
			th.syncHint = i
			return i - 1
		}
	}
	i, _ := slices.BinarySearchFunc(th.syncs, x, func(iv Interval, x int64) int {
		if iv.End <= x {
			return -1
		}
		return 1
	})
	th.syncHint = i
	return i - 1
}

// syncNameAt is syncName of th.syncs[i].
func (th *thread) syncNameAt(a *analyzer, i int) trace.StrID {
	if j := th.syncCallAt(a, i); j >= 0 {
		return th.evs[j].Name
	}
	return 0
}

// syncCallAt returns the index in th.evs of the outermost blocking call
// starting th.syncs[i], -1 if none, found once per merged call.
func (th *thread) syncCallAt(a *analyzer, i int) int {
	if th.syncCalls == nil {
		th.syncCalls = make([]int32, len(th.syncs))
	}
	if th.syncCalls[i] == 0 {
		th.syncCalls[i] = int32(th.indexStarting(a, th.syncs[i], classSync, classAsyncCopy)) + 2
	}
	return int(th.syncCalls[i]) - 2
}

// union returns the merged intervals of the merged intervals a and b,
// those that overlap or touch merged as addInterval merges them.
func union(a, b []Interval) []Interval {
	if len(b) == 0 {
		return a
	}
	out := make([]Interval, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var iv Interval
		if len(b) == 0 || len(a) > 0 && a[0].Start <= b[0].Start {
			iv, a = a[0], a[1:]
		} else {
			iv, b = b[0], b[1:]
		}
		if n := len(out); n > 0 && iv.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, iv.End)
		} else {
			out = append(out, iv)
		}
	}
	return out
}

// subtract returns the merged intervals a less the merged intervals b.
func subtract(a, b []Interval) []Interval {
	var out []Interval
	j := 0
	for _, iv := range a {
		cur := iv.Start
		for j < len(b) && b[j].End <= cur {
			j++
		}
		for k := j; k < len(b) && b[k].Start < iv.End; k++ {
			if b[k].Start > cur {
				out = append(out, Interval{cur, b[k].Start})
			}
			cur = max(cur, b[k].End)
		}
		if cur < iv.End {
			out = append(out, Interval{cur, iv.End})
		}
	}
	return out
}

// timeIn returns the time in ivs that falls inside w.
func timeIn(ivs []Interval, w Interval) int64 {
	i, _ := slices.BinarySearchFunc(ivs, w.Start, func(iv Interval, t int64) int {
		if iv.End <= t {
			return -1
		}
		return 1
	})
	var sum int64
	for ; i < len(ivs) && ivs[i].Start < w.End; i++ {
		sum += overlap(ivs[i], w)
	}
	return sum
}

// hostStretch is a stretch of time during which some host thread was
// inside a call of one kind (a blocking call, runtime work); name is the
// call's, track the thread's, ev the call's index in Trace.Events (-1 when
// no call of the kind starts the stretch).
type hostStretch struct {
	Interval
	name  trace.StrID
	track int32
	ev    int32
}

// hostSyncs returns, merged and in time order, the stretches during which
// any host thread was inside a blocking call, built on first use.
func (a *analyzer) hostSyncs() []hostStretch {
	if a.allSyncs == nil {
		a.allSyncs = mergeStretches(a.hostStretches(func(th *thread) []Interval { return th.syncs }, classSync, classAsyncCopy))
	}
	return a.allSyncs
}

// hostRuntime returns, in time order and without overlap, the stretches
// during which any host thread was in runtime work, built on first use.
// Where several threads are, the stretch names the work that began last:
// one thread's defragmentation after the others' program loads is told as
// such, not merged into the loads.
func (a *analyzer) hostRuntime() []hostStretch {
	if a.allRuntime == nil {
		a.allRuntime = latestFirst(a.hostStretches(func(th *thread) []Interval { return th.runtime }, classRuntime))
	}
	return a.allRuntime
}

// latestFirst cuts overlapping stretches, sorted by start, into pieces that
// do not overlap, each named after the covering stretch that began last.
func latestFirst(all []hostStretch) []hostStretch {
	// A piece per stretch, about: room for that many saves growing a long
	// trace's pieces step by step.
	out := make([]hostStretch, 0, len(all))
	var active []hostStretch
	cur := int64(math.MinInt64)
	emit := func(to int64) {
		if n := len(active); n > 0 && to > cur {
			p := active[n-1]
			p.Interval = Interval{cur, to}
			if m := len(out); m > 0 && out[m-1].End == cur && out[m-1].ev == p.ev && out[m-1].track == p.track {
				out[m-1].End = to
			} else {
				out = append(out, p)
			}
		}
		cur = max(cur, to)
	}
	for i := 0; i < len(all) || len(active) > 0; {
		// The next boundary: the earliest end among the active stretches
		// or the next start.
		next, ending := int64(math.MaxInt64), -1
		for k, s := range active {
			if s.End < next {
				next, ending = s.End, k
			}
		}
		if i < len(all) && all[i].Start < next {
			emit(all[i].Start)
			active = append(active, all[i])
			i++
			continue
		}
		emit(next)
		active = slices.Delete(active, ending, ending+1)
	}
	return out
}

// hostStretches returns the intervals ivs picks of every host thread (each
// thread's already merged) in start order, each named by the outermost
// call of one of the classes starting it.
func (a *analyzer) hostStretches(ivs func(*thread) []Interval, classes ...class) []hostStretch {
	var threads []*thread
	n := 0
	for i := range a.t.Tracks {
		if a.t.Tracks[i].Kind == trace.TrackHost {
			th := a.thread(int32(i))
			threads = append(threads, th)
			n += len(ivs(th))
		}
	}
	all := make([]hostStretch, 0, n)
	runs := make([]int, 0, len(threads)) // where each thread's stretches end in all
	for _, th := range threads {
		at := 0 // the first event starting at or after the last interval
		for _, iv := range ivs(th) {
			at = gallopStart(th.evs, at, iv.Start)
			s := hostStretch{Interval: iv, track: th.track, ev: -1}
			if k := th.classAt(a, at, iv.Start, classes); k >= 0 {
				s.name, s.ev = th.evs[k].Name, int32(th.lo+k)
			}
			all = append(all, s)
		}
		runs = append(runs, len(all))
	}
	if merged, ok := mergeRuns(all, runs); ok {
		return merged
	}
	slices.SortFunc(all, func(x, y hostStretch) int { return cmp.Compare(x.Start, y.Start) })
	return all
}

// mergeRuns merges the runs of all, each in strict start order and ending
// at the next of ends, into one slice in start order. It is hostStretches'
// sort in linear time per run: a long trace has hundreds of thousands of
// stretches on a few threads. Stretches of two threads starting together
// would come out in an order of its own, not the sort's, and a stretch's
// name depends on that order (see mergeStretches, latestFirst): ok is
// false then, and the caller sorts.
func mergeRuns(all []hostStretch, ends []int) (merged []hostStretch, ok bool) {
	// h is a heap of the runs not used up, on the start of their next
	// stretch.
	var h []stretchRun
	lo := 0
	for _, end := range ends {
		if lo < end {
			h = append(h, stretchRun{lo, end})
		}
		lo = end
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftRun(all, h, i)
	}
	merged = make([]hostStretch, 0, len(all))
	for len(h) > 0 {
		r := &h[0]
		s := &all[r.next]
		if n := len(merged); n > 0 && merged[n-1].Start == s.Start {
			return nil, false
		}
		merged = append(merged, *s)
		if r.next++; r.next == r.end {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		siftRun(all, h, 0)
	}
	return merged, true
}

// stretchRun is the stretches of all[next:end] not yet merged.
type stretchRun struct{ next, end int }

// siftRun restores mergeRuns' heap h below position i.
func siftRun(all []hostStretch, h []stretchRun, i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && all[h[c+1].next].Start < all[h[c].next].Start {
			c++
		}
		if all[h[c].next].Start >= all[h[i].next].Start {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// mergeStretches merges stretches in start order that overlap or touch,
// each keeping the name of its first.
func mergeStretches(all []hostStretch) []hostStretch {
	merged := all[:0]
	for _, s := range all {
		if n := len(merged); n > 0 && s.Start <= merged[n-1].End {
			merged[n-1].End = max(merged[n-1].End, s.End)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// indexStarting returns the index in th.evs of the outermost event of one
// of classes starting the merged interval iv, -1 if none.
func (th *thread) indexStarting(a *analyzer, iv Interval, classes ...class) int {
	i, _ := slices.BinarySearchFunc(th.evs, iv.Start, func(e trace.Event, t int64) int { return cmp.Compare(e.Start, t) })
	return th.classAt(a, i, iv.Start, classes)
}

// classAt returns the index in th.evs of the first event of one of classes
// starting at t, looking from i, the first event starting at or after t;
// -1 if none.
func (th *thread) classAt(a *analyzer, i int, t int64, classes []class) int {
	for ; i < len(th.evs) && th.evs[i].Start == t; i++ {
		if slices.Contains(classes, a.cls.of(th.evs[i].Name)) {
			return i
		}
	}
	return -1
}

// gallopStart returns the index of the first of evs starting at or after
// t, which is at or after from: it steps out from from in growing strides
// and searches the last stride, so a walk over times in order costs the
// log of each step rather than of the whole thread.
func gallopStart(evs []trace.Event, from int, t int64) int {
	lo, step := from, 1
	for lo+step < len(evs) && evs[lo+step].Start < t {
		lo += step
		step *= 2
	}
	hi := min(lo+step+1, len(evs))
	return lo + startIndex(evs[lo:hi], t)
}

// syncAround returns the host-wide stretch covering x (of blocking calls,
// of runtime work), else the last one before x, and the time the state
// next changes (the covering stretch's end or the next stretch's start;
// MaxInt64 when never).
//
// hint holds the index the last call found, tried first: the attribution
// asks at times that mostly grow.
func syncAround(ss []hostStretch, x int64, hint *int) (in, last *hostStretch, next int64) {
	i := searchStarts(ss, x, hint)
	next = math.MaxInt64
	if i < len(ss) {
		next = ss[i].Start
	}
	if i == 0 {
		return nil, nil, next
	}
	if p := &ss[i-1]; x < p.End {
		return p, nil, p.End
	}
	return nil, &ss[i-1], next
}

// stretchCursor looks up one list of host-wide stretches (see
// syncAround), keeping its last answer over the span where it holds, from
// the instant asked to the next change: a gap asks at every change of the
// waited-for thread's stack, in time order, and the stretches change far
// less often. The stretches must not overlap.
type stretchCursor struct {
	hint     int
	in, last *hostStretch
	span     Interval
}

// around is syncAround(ss, x), ss being the cursor's list.
func (c *stretchCursor) around(ss []hostStretch, x int64) (in, last *hostStretch, next int64) {
	if c.span.Start <= x && x < c.span.End {
		return c.in, c.last, c.span.End
	}
	in, last, next = syncAround(ss, x, &c.hint)
	c.in, c.last, c.span = in, last, Interval{x, next}
	return in, last, next
}

// searchStarts returns the index of the first of ss starting after x,
// trying *hint and the index after it before a binary search, and keeps
// the answer in *hint.
func searchStarts(ss []hostStretch, x int64, hint *int) int {
	n := len(ss)
	for _, i := range [2]int{*hint, *hint + 1} {
		if i <= n && (i == 0 || ss[i-1].Start <= x) && (i == n || ss[i].Start > x) {
			*hint = i
			return i
		}
	}
	i, _ := slices.BinarySearchFunc(ss, x, func(s hostStretch, x int64) int {
		if s.Start <= x {
			return -1
		}
		return 1
	})
	*hint = i
	return i
}
