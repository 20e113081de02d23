package analyze

import "github.com/tracegap/tracegap/trace"

// otherWork is an event of another host thread than the one a gap waited
// for, and how much of the gap it covered: a runtime thread's work the
// waiting call may have waited on (a pool thread's
// BufferSequencingEvent::Execute while the loop blocks in
// block_until_ready).
type otherWork struct {
	gap     Gap
	track   int32
	name    trace.StrID
	overlap int64
}

// workElsewhere returns the event of another host thread that covered
// the most of the window's longest gap of cause c, when it covered at
// least half of it. Of the events within a tenth of the most, the
// shortest is named, so that a thread's long-running wrapper does not
// hide the work inside it. Only the one gap is looked at, each host
// thread's events at most twice.
func (a *analyzer) workElsewhere(c Cause) (otherWork, bool) {
	var g *Gap
	for i := range a.res.Gaps {
		if x := &a.res.Gaps[i]; x.Cause == c && (g == nil || x.Dur > g.Dur) {
			g = x
		}
	}
	if g == nil {
		return otherWork{}, false
	}
	iv := Interval{g.Start, g.Start + g.Dur}
	var most int64
	a.othersDuring(g, func(_ int32, e *trace.Event) { most = max(most, overlap(iv, Interval{e.Start, e.End()})) })
	if 2*most < g.Dur {
		return otherWork{}, false
	}
	best, dur := otherWork{gap: *g, track: -1}, int64(0)
	a.othersDuring(g, func(tr int32, e *trace.Event) {
		if o := overlap(iv, Interval{e.Start, e.End()}); o*10 >= most*9 && (best.track < 0 || e.Dur() < dur) {
			best.track, best.name, best.overlap, dur = tr, e.Name, o, e.Dur()
		}
	})
	return best, true
}

// othersDuring calls f with each event of a host thread other than g's
// that starts before g ends.
func (a *analyzer) othersDuring(g *Gap, f func(track int32, e *trace.Event)) {
	end := g.Start + g.Dur
	for ti := range a.t.Tracks {
		if a.t.Tracks[ti].Kind != trace.TrackHost || int32(ti) == g.Track {
			continue
		}
		evs := a.t.TrackEvents(ti)
		for i := range evs {
			if evs[i].Start >= end {
				break // sorted by start
			}
			f(int32(ti), &evs[i])
		}
	}
}
