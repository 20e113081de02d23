package analyze

import (
	"cmp"
	"fmt"
	"github.com/tracegap/tracegap/internal/human"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// untracedLookBack bounds how many events before a stretch untracedBetween
// looks at for the one that returned last.
const untracedLookBack = 256

// untracedBetween says what the longest untraced stretch of idle is, as a
// sentence for the untraced-thread finding: the calls on the waited-for
// thread it falls between (the last to return before it, the first to
// start after it). Host code runs there that the profile does not show:
// Python between calls without the Python tracer, a C++ loop without host
// tracing. Empty when no gap has untraced idle.
func (a *analyzer) untracedBetween() string {
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
		return ""
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
	what := fmt.Sprintf(" The longest stretch, %s of a %s gap on %s,", human.Duration(seg.Dur), human.Duration(best.Dur), best.Device)
	switch {
	case before >= 0 && k < len(evs):
		what += fmt.Sprintf(" falls after %s returned and before %s began:", a.t.Str(evs[before].Name), a.t.Str(evs[k].Name))
	case before >= 0:
		what += fmt.Sprintf(" falls after %s returned, with no event after it:", a.t.Str(evs[before].Name))
	case k < len(evs):
		what += fmt.Sprintf(" falls before %s began, with no event before it:", a.t.Str(evs[k].Name))
	default:
		what += " falls where the thread shows no event at all:"
	}
	return what + " host code runs there between those calls that the profile does not show."
}
