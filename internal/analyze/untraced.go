package analyze

import (
	"cmp"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// untracedLookBack bounds how many events before a stretch untracedStretch
// looks at for the one that returned last.
const untracedLookBack = 256

// untracedStretch returns the longest untraced stretch of idle, for the
// untraced-thread finding, with the calls on the waited-for thread it
// falls between (the last to return before it, the first to start after
// it). Host code runs there that the profile does not show: Python
// between calls without the Python tracer, a C++ loop without host
// tracing. Nil when no gap has untraced idle.
func (a *analyzer) untracedStretch() *Stretch {
	var best *Gap
	var seg Segment // best's longest untraced segment
	for i := range a.res.Gaps {
		g := &a.res.Gaps[i]
		if g.Track < 0 || g.Split.Of(Untraced) <= seg.Dur {
			continue
		}
		for sg := range a.res.Segments(g) {
			if sg.Cause == Untraced && sg.Dur > seg.Dur {
				best, seg = g, sg
			}
		}
	}
	if best == nil {
		return nil
	}
	evs := a.t.TrackEvents(int(best.Track))
	end := seg.Start + seg.Dur
	i, _ := slices.BinarySearchFunc(evs, seg.Start, func(e trace.Event, t int64) int { return cmp.Compare(e.Start, t) })
	before := -1
	for j := i - 1; j >= 0 && j >= i-untracedLookBack; j-- {
		if e := evs[j].End(); e <= seg.Start && (before < 0 || e > evs[before].End()) {
			before = j
		}
	}
	k, _ := slices.BinarySearchFunc(evs, end, func(e trace.Event, t int64) int { return cmp.Compare(e.Start, t) })
	st := &Stretch{Dur: seg.Dur, GapDur: best.Dur, Device: best.Device}
	if before >= 0 {
		st.Before, st.HasBefore = a.t.Str(evs[before].Name), true
	}
	if k < len(evs) {
		st.After, st.HasAfter = a.t.Str(evs[k].Name), true
	}
	return st
}
