package analyze

import (
	"cmp"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// links maps correlation ids to the host calls that launched device work.
// It is a sorted slice, not a map: a gigabyte trace has millions of launches
// and a slice costs 16 bytes each.
type links struct {
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
	corr uint64
	ev   int32 // index in Trace.Events
}

func buildLinks(t *trace.Trace) *links {
	l := &links{launches: make([]int, len(t.Tracks))}
	n := 0
	for i := range t.Tracks {
		if t.Tracks[i].Kind != trace.TrackHost {
			continue
		}
		for _, e := range t.TrackEvents(i) {
			if e.Corr != 0 {
				n++
			}
		}
	}
	l.byCorr = make([]corrEntry, 0, n)
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		if tr.Kind != trace.TrackHost {
			continue
		}
		for j := tr.Lo; j < tr.Hi; j++ {
			if t.Events[j].Corr != 0 {
				l.byCorr = append(l.byCorr, corrEntry{t.Events[j].Corr, int32(j)})
			}
		}
	}
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

// host returns the index in Trace.Events of the host call with correlation
// id corr, or -1.
func (l *links) host(corr uint64) int32 {
	if corr == 0 {
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
	i, ok := slices.BinarySearchFunc(l.byCorr, corr, func(e corrEntry, c uint64) int { return cmp.Compare(e.corr, c) })
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
