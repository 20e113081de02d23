package analyze

import (
	"math"
	"slices"
)

// parentIndex holds the enclosing event of each of a thread's events. It
// is built for every host thread, an entry per event, and on a long trace
// writing it was a large share of the fresh memory a run touches, which
// costs more than the pass that fills it: so an entry is one byte, the
// distance back to the parent. Most parents are a few events back; the
// children of a long event (a step and the hundreds of calls in it) are
// the exception, and far children in a row mostly share their parent, so
// those are kept as runs.
type parentIndex struct {
	// back[i] is i less the index of i's parent, 0 for none (a parent
	// comes before its children), farBack for a parent found in far.
	back []uint8
	// far are the runs of events with a far parent, by first event: an
	// event with a far parent has that of the last run starting at or
	// before it.
	far []farRun
}

// farRun starts, at event first, a run of events whose far parent is
// parent.
type farRun struct {
	first, parent int32
}

// farBack marks a parent too far back for a byte.
const farBack = math.MaxUint8

func newParentIndex(n int) *parentIndex {
	return &parentIndex{back: make([]uint8, n)}
}

// set records that event i's parent is parent (-1 for none); events are
// set in index order.
func (p *parentIndex) set(i int, parent int32) {
	switch d := i - int(parent); {
	case parent < 0:
		p.back[i] = 0
	case d < farBack:
		p.back[i] = uint8(d)
	default:
		p.back[i] = farBack
		if n := len(p.far); n == 0 || p.far[n-1].parent != parent {
			p.far = append(p.far, farRun{int32(i), parent})
		}
	}
}

// of returns the index of event i's parent, or -1.
func (p *parentIndex) of(i int32) int32 {
	switch d := p.back[i]; d {
	case 0:
		return -1
	case farBack:
		return p.farOf(i)
	default:
		return i - int32(d)
	}
}

// farOf returns the parent of event i, which has a far parent.
func (p *parentIndex) farOf(i int32) int32 {
	k, found := slices.BinarySearchFunc(p.far, i, func(r farRun, i int32) int { return int(r.first - i) })
	if !found {
		k-- // the last run starting before i
	}
	return p.far[k].parent
}
