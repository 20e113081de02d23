package analyze

import (
	"math"
	"regexp"

	"github.com/tracegap/tracegap/trace"
)

// hostScan is what the analysis asks of every host event before it looks
// at the devices: the step candidates, the launches' correlation ids, the
// JAX loop thread and the trace's end; the host threads' intervals of
// blocking calls, input and runtime work are classified in the same pass
// (a.scanned). The questions are independent, and on a long trace reading
// millions of events costs more than answering them, so one pass answers
// them all (see scanHost).
type hostScan struct {
	// flagged are the events flagged as steps and named the events whose
	// name matches the step pattern, in track order: findSteps picks.
	flagged, named []rawStep
	launches       launchIDs
	// loop picks the JAX loop thread (see findLoop).
	loop loopFinder
	// end is the end of the last host event.
	end int64
	// flowOut are the host events that produce a flow, in index order
	// (see producers).
	flowOut []int32
	// deepest is the deepest nesting of host events, on thread deepTrack.
	deepest   int
	deepTrack int32
}

// scanHost makes the hostScan of a's trace; step matches the names of
// step events.
func (a *analyzer) scanHost(step *regexp.Regexp) *hostScan {
	s := &hostScan{launches: launchIDs{lo: math.MaxUint32}, loop: loopFinder{best: -1}}
	named := newNameMatcher(step, a.t)
	jax := a.res.Framework == JAX
	a.scanned = map[int32]*thread{}
	for i := range a.t.Tracks {
		tr := &a.t.Tracks[i]
		if tr.Kind != trace.TrackHost {
			continue
		}
		th := a.newThread(int32(i))
		a.scanned[int32(i)] = th
		// The enclosing events are built here rather than on first use
		// (see parents): the gaps need them of the thread they wait for,
		// and a second pass over a long thread's events cost more than
		// building them for every thread in this one.
		th.parent = newParentIndex(len(th.evs))
		var nest nesting
		dispatches, first := 0, int64(0)
		for j := range th.evs {
			e := &th.evs[j]
			dur := e.Dur()
			end := e.Start + dur
			k := a.cls.of(e.Name)
			th.add(a, j, k)
			th.parent.set(j, nest.next(j, e.Start, end, dur > 0))
			if d := len(nest.open); d > s.deepest {
				s.deepest, s.deepTrack = d, int32(i)
			}
			s.end = max(s.end, end)
			if e.Flags&trace.FlagFlowOut != 0 {
				s.flowOut = append(s.flowOut, int32(th.lo+j))
			}
			if dur > 0 && e.Has(trace.FlagStep) {
				s.flagged = append(s.flagged, a.rawStep(e))
			}
			if dur > 0 && named.matches(e.Name) {
				s.named = append(s.named, a.rawStep(e))
			}
			if e.Corr != 0 && e.Flags&trace.FlagFlow == 0 {
				s.launches.add(e.Corr)
			}
			if jax && k == classDispatch {
				if dispatches == 0 {
					first = e.Start
				}
				dispatches++
			}
		}
		s.loop.add(int32(i), dispatches, first)
	}
	return s
}

// nameMatcher asks of event names whether they match, each name once:
// names repeat across millions of events.
type nameMatcher struct {
	is    func(name string) bool
	names []string // the trace's strings
	match []int8   // per StrID: 0 unknown, 1 yes, -1 no
}

// newNameMatcher matches the names of t against re.
func newNameMatcher(re *regexp.Regexp, t *trace.Trace) *nameMatcher {
	m := newMatcher(re)
	return newNameTest(m.match, t)
}

// newNameTest matches the names of t for which is holds.
func newNameTest(is func(name string) bool, t *trace.Trace) *nameMatcher {
	return &nameMatcher{is: is, names: t.Strings, match: make([]int8, len(t.Strings))}
}

// matches reports whether the name id matches; an id outside the
// trace's strings never matches. It is asked of every event: the answer
// known is kept short enough to be inlined.
func (m *nameMatcher) matches(id trace.StrID) bool {
	if int(id) < len(m.match) && m.match[id] != 0 {
		return m.match[id] > 0
	}
	return m.first(id)
}

// any reports whether any of the trace's names matches. Every name is
// matched, not only up to the first that matches: the answers are kept,
// and a caller asks next of every event.
func (m *nameMatcher) any() bool {
	found := false
	for id := range m.names {
		found = m.matches(trace.StrID(id)) || found
	}
	return found
}

// first is matches for a name not seen before.
func (m *nameMatcher) first(id trace.StrID) bool {
	if int(id) >= len(m.match) {
		return false
	}
	m.match[id] = -1
	if m.is(m.names[id]) {
		m.match[id] = 1
	}
	return m.match[id] > 0
}

// loopFinder picks the host thread with the most dispatches, ties to the
// one dispatching first; best is -1 while no thread has dispatched.
type loopFinder struct {
	best  int32
	n     int
	first int64
}

// add offers track tr, with n dispatches the first of which starts at
// first.
func (f *loopFinder) add(tr int32, n int, first int64) {
	if n > f.n || n == f.n && n > 0 && first < f.first {
		f.best, f.n, f.first = tr, n, first
	}
}
