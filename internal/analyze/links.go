package analyze

import (
	"cmp"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// links maps correlation ids (Event.Corr) to the host calls that launched
// device work.
// Profilers number launches densely (CUPTI and XProf count up from a small
// number), so mostly a table indexed by id serves: 4 bytes a slot and one
// load a lookup. Ids too spread out for a table fall back to a sorted
// slice, 16 bytes a launch, searched.
type links struct {
	// dense[c-base] is the first host event with correlation id c, or -1;
	// nil when the ids are too spread out.
	dense []int32
	base  uint32
	// byCorr is the sorted fallback when dense is nil.
	byCorr []corrEntry
	hint   int // index of the last entry found
	// blocking holds, sorted, the host events whose device copy blocks the
	// host (pageable memory or device to host); filled by scanDevice.
	blocking []int32
	// launches counts, per track index, the device work it launched: a
	// slice, as it is counted once per piece of work.
	launches []int
	// work and linked count device work events and those with a launch.
	work, linked int
}

type corrEntry struct {
	corr uint32
	ev   int32 // index in Trace.Events
}

// denseSlack bounds the table: it has at most this many slots per launch
// (plus denseMin), so that it never costs more than the sorted slice would.
const (
	denseSlack = 4
	denseMin   = 1 << 16
)

// launchIDs counts the host events with a correlation id and bounds their
// ids: what sizes the links.
type launchIDs struct {
	n      int
	lo, hi uint32
}

func (c *launchIDs) add(corr uint32) {
	c.n++
	c.lo, c.hi = min(c.lo, corr), max(c.hi, corr)
}

// newLinks links the launches of t, which ids counts.
func newLinks(t *trace.Trace, ids launchIDs) *links {
	l := &links{launches: make([]int, len(t.Tracks))}
	n, lo, hi := ids.n, ids.lo, ids.hi
	if n == 0 {
		return l
	}
	if uint64(hi-lo) < uint64(denseSlack*n+denseMin) {
		l.base = lo
		l.dense = make([]int32, hi-lo+1)
		for i := range l.dense {
			l.dense[i] = -1
		}
		// Events come in index order: the first one seen with an id is
		// the one the sorted slice would find (see below).
		forEachLaunch(t, func(corr uint32, ev int32) {
			if p := &l.dense[corr-lo]; *p < 0 {
				*p = ev
			}
		})
		return l
	}
	l.byCorr = make([]corrEntry, 0, n)
	forEachLaunch(t, func(corr uint32, ev int32) {
		l.byCorr = append(l.byCorr, corrEntry{corr, ev})
	})
	// Ties in event order, so that for a correlation id shared by a
	// runtime call and the driver call inside it the outer (earlier,
	// longer) one is found. Cheaper than a stable sort, and launches
	// mostly come in correlation order already, which pdqsort spots.
	slices.SortFunc(l.byCorr, func(a, b corrEntry) int {
		if c := cmp.Compare(a.corr, b.corr); c != 0 {
			return c
		}
		return cmp.Compare(a.ev, b.ev)
	})
	return l
}

// forEachLaunch calls f for every host event with a correlation id, in
// index order; the ends of flows are not launches (see linkPrograms).
func forEachLaunch(t *trace.Trace, f func(corr uint32, ev int32)) {
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		if tr.Kind != trace.TrackHost {
			continue
		}
		for j := tr.Lo; j < tr.Hi; j++ {
			if c := t.Events[j].Corr; c != 0 && t.Events[j].Flags&trace.FlagFlow == 0 {
				f(c, int32(j))
			}
		}
	}
}

// host returns the index in Trace.Events of the host call with correlation
// id corr, or -1.
func (l *links) host(corr uint32) int32 {
	if corr == 0 {
		return -1
	}
	if l.dense != nil {
		if corr-l.base < uint32(len(l.dense)) { // wraps for corr < base
			return l.dense[corr-l.base]
		}
		return -1
	}
	// Work in time order mostly has increasing correlation ids: try the
	// entries after the last hit before searching.
	for i := l.hint; i < min(l.hint+2, len(l.byCorr)); i++ {
		if l.byCorr[i].corr == corr && (i == 0 || l.byCorr[i-1].corr != corr) {
			l.hint = i
			return l.byCorr[i].ev
		}
	}
	i, ok := slices.BinarySearchFunc(l.byCorr, corr, func(e corrEntry, c uint32) int { return cmp.Compare(e.corr, c) })
	if !ok {
		return -1
	}
	l.hint = i
	return l.byCorr[i].ev
}

// isBlocking reports whether host event ev issued a copy that blocks.
func (l *links) isBlocking(ev int32) bool {
	_, ok := slices.BinarySearch(l.blocking, ev)
	return ok
}
