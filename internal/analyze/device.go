package analyze

import (
	"slices"

	"github.com/tracegap/tracegap/internal/trace/trackname"
	"github.com/tracegap/tracegap/trace"
)

// device is one device's timeline: the union of its work over all its
// streams or lines.
type device struct {
	id     string
	tracks []int32
	// busy are the merged work intervals in time order.
	busy []Interval
	// bigIdle are the idle intervals between busy ones of at least MinGap.
	bigIdle []Interval
	// queued holds, in time order, the runs of queued work: work that
	// did not start within SyncSlack of the end of its launch call (or
	// has no launch), where the host was ahead of the device. A run is
	// work next to each other in start order, all queued, from the first
	// one's start to the last one's (see queuedIn). Runs rather than
	// every start: a host ahead of its devices queues millions of pieces
	// of work in a few runs.
	queued []Interval
	// reach answers queuedPast and workStartingAt on a device of many
	// streams; made on first use.
	reach reach

	// Filled by attributeDevice.
	winBusy int64
	split   Breakdown
	gaps    []Gap
}

// reach is the work of a device of many streams in start order: its
// indexes in Trace.Events, starts, and the latest end of the work started
// up to each (see reachOf).
type reach struct {
	idx        []int
	start, end []int64
}

// findDevices returns the devices with work, sorted by id. Derived tracks
// are views and never hold work.
func (a *analyzer) findDevices() []*device {
	byID := map[string]*device{}
	var ids []string
	for i := range a.t.Tracks {
		tr := &a.t.Tracks[i]
		if tr.Kind != trace.TrackDevice || tr.Derived || !hasWork(a.t.Events[tr.Lo:tr.Hi]) {
			continue
		}
		d := byID[tr.Device]
		if d == nil {
			d = &device{id: tr.Device}
			byID[tr.Device] = d
			ids = append(ids, tr.Device)
		}
		d.tracks = append(d.tracks, int32(i))
	}
	slices.SortFunc(ids, trackname.CompareDevice)
	devs := make([]*device, len(ids))
	for i, id := range ids {
		devs[i] = byID[id]
	}
	return devs
}

func hasWork(evs []trace.Event) bool {
	for i := range evs {
		if evs[i].Kind == trace.KindWork && evs[i].Dur() > 0 {
			return true
		}
	}
	return false
}

// workMerger walks the work events of several tracks in start order, of
// equal starts in track order.
type workMerger struct {
	t   *trace.Trace
	pos []int // next event per track
	end []int
	// heap holds the tracks with work left, by their next work's start,
	// when there are more than fewTracks of them.
	heap []int
}

// fewTracks is how many tracks a linear scan serves: a device has a few
// streams, for which the scan beats a heap; a hostile trace can give one
// device a hundred thousand, for which only the heap is not quadratic.
const fewTracks = 16

func newWorkMerger(t *trace.Trace, tracks []int32) *workMerger {
	m := &workMerger{t: t}
	for _, tr := range tracks {
		m.pos = append(m.pos, t.Tracks[tr].Lo)
		m.end = append(m.end, t.Tracks[tr].Hi)
	}
	if len(tracks) > fewTracks {
		for k := range m.pos {
			if m.skip(k) {
				m.heap = append(m.heap, k)
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	}
	return m
}

// skip moves track k to its next work event and reports whether it has
// one.
func (m *workMerger) skip(k int) bool {
	for m.pos[k] < m.end[k] {
		if e := &m.t.Events[m.pos[k]]; e.Kind == trace.KindWork && e.Dur() > 0 {
			return true
		}
		m.pos[k]++
	}
	return false
}

// before orders tracks j and k by their next work's start, then by track.
func (m *workMerger) before(j, k int) bool {
	sj, sk := m.t.Events[m.pos[j]].Start, m.t.Events[m.pos[k]].Start
	return sj < sk || sj == sk && j < k
}

// next returns the index in Trace.Events of the next work event by start,
// or -1 when none is left.
func (m *workMerger) next() int {
	if len(m.pos) > fewTracks {
		return m.nextHeap()
	}
	best := -1
	for k := range m.pos {
		if m.skip(k) && (best < 0 || m.t.Events[m.pos[k]].Start < m.t.Events[m.pos[best]].Start) {
			best = k
		}
	}
	if best < 0 {
		return -1
	}
	i := m.pos[best]
	m.pos[best]++
	return i
}

func (m *workMerger) nextHeap() int {
	if len(m.heap) == 0 {
		return -1
	}
	k := m.heap[0]
	i := m.pos[k]
	m.pos[k]++
	if !m.skip(k) {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
	return i
}

// down restores the heap order below position i.
func (m *workMerger) down(i int) {
	h := m.heap
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && m.before(h[c+1], h[c]) {
			c++
		}
		if !m.before(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// scanDevice merges d's work into busy intervals and follows each piece of
// work to its launch: to see whether the device waited on the launch, to
// count launches per thread, to find blocking copies and to stretch steps
// to the end of the work they launched.
func (a *analyzer) scanDevice(d *device) {
	t, l := a.t, a.links
	m := newWorkMerger(t, d.tracks)
	var runs []programRun
	hint := 0 // runDispatch's last answer
	if a.loop >= 0 && len(a.steps) > 0 {
		runs = a.linkPrograms(d)
	}
	// Room for an interval per event: a host-bound run has nearly that
	// many, and growing the slice step by step cost more than the merge.
	n := 0
	for _, tr := range d.tracks {
		n += t.Tracks[tr].Hi - t.Tracks[tr].Lo
	}
	d.busy = make([]Interval, 0, n)
	cur := Interval{Start: -1, End: -1}
	// inRun is whether the last work was queued: the next queued work
	// extends its run.
	inRun := false
	queue := func(start int64) {
		if inRun {
			d.queued[len(d.queued)-1].End = start
		} else {
			d.queued = append(d.queued, Interval{start, start})
		}
		inRun = true
	}
	for i := m.next(); i >= 0; i = m.next() {
		e := &t.Events[i]
		if e.Start > cur.End || cur.End < 0 {
			if cur.End >= 0 {
				d.busy = append(d.busy, cur)
			}
			cur = Interval{e.Start, e.End()}
		} else if e.End() > cur.End {
			cur.End = e.End()
		}
		l.work++
		h := l.host(e.Corr)
		if a.loop >= 0 {
			a.jaxWork(runs, &hint, h, e)
		}
		if h < 0 {
			queue(e.Start)
			continue
		}
		l.linked++
		he := &t.Events[h]
		l.launches[a.trackOf(h)]++
		if e.Start-he.End() > a.opt.SyncSlack {
			queue(e.Start)
		} else {
			inRun = false
		}
		if e.Has(trace.FlagMemcpy) && (e.Has(trace.FlagPageable) || e.Has(trace.FlagDtoH)) {
			l.blocking = append(l.blocking, h)
		}
		if a.loop < 0 {
			a.stepLaunched(he.Start, e.Start, e.End())
		}
	}
	d.busy = append(d.busy, cur)
	if len(d.busy) < cap(d.busy)/4 {
		d.busy = slices.Clone(d.busy) // the result keeps them
	}
	for k := 1; k < len(d.busy); k++ {
		if idle := (Interval{d.busy[k-1].End, d.busy[k].Start}); idle.End-idle.Start >= a.opt.MinGap {
			d.bigIdle = append(d.bigIdle, idle)
		}
	}
	slices.Sort(l.blocking)
	l.blocking = slices.Compact(l.blocking)
}

// span returns the device's first work start and last work end.
func (d *device) span() Interval {
	return Interval{d.busy[0].Start, d.busy[len(d.busy)-1].End}
}

// busyIn returns the busy time of d inside w.
func (d *device) busyIn(w Interval) int64 {
	var sum int64
	i := d.firstEndingAfter(w.Start)
	for ; i < len(d.busy) && d.busy[i].Start < w.End; i++ {
		sum += overlap(d.busy[i], w)
	}
	return sum
}

// firstEndingAfter returns the index of the first busy interval that ends
// after t.
func (d *device) firstEndingAfter(t int64) int {
	i, _ := slices.BinarySearchFunc(d.busy, t, func(b Interval, t int64) int {
		if b.End <= t {
			return -1
		}
		return 1
	})
	return i
}

func overlap(a, b Interval) int64 {
	s, e := max(a.Start, b.Start), min(a.End, b.End)
	if e > s {
		return e - s
	}
	return 0
}

// workStartingAt returns a work event of d starting exactly at ts, one
// with a launch link when there is one, or -1.
func (a *analyzer) workStartingAt(d *device, ts int64) int {
	found := -1
	// pick takes the work event i, and reports whether the search is over.
	pick := func(i int) bool {
		if a.links.host(a.t.Events[i].Corr) >= 0 {
			found = i
			return true
		}
		if found < 0 {
			found = i
		}
		return false
	}
	if len(d.tracks) > fewTracks {
		r := a.reachOf(d)
		k, _ := slices.BinarySearch(r.start, ts)
		for ; k < len(r.idx) && r.start[k] == ts; k++ {
			if pick(r.idx[k]) {
				break
			}
		}
		return found
	}
	for _, tr := range d.tracks {
		evs := a.t.TrackEvents(int(tr))
		lo := a.t.Tracks[tr].Lo
		for i := startIndex(evs, ts); i < len(evs) && evs[i].Start == ts; i++ {
			if evs[i].Kind == trace.KindWork && evs[i].Dur() > 0 && pick(lo+i) {
				return found
			}
		}
	}
	return found
}
