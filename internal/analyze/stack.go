package analyze

import (
	"fmt"
	"math"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// hostStack is the stack of events a thread is inside at an instant,
// outermost first, with what the attribution asks of it. A gap's stretches
// change the stack by an event or two at a time, while each stretch asks
// about the whole stack (its cause, culprit, names, next change): the facts
// of each prefix of the stack are found once, when its top event enters.
type hostStack struct {
	evs   []int32      // indexes in thread.evs
	facts []stackFacts // facts[i] holds for evs[:i+1]
}

// stackFacts is what the attribution asks of a stack.
type stackFacts struct {
	// names is the stack's event names, interned (see segEncoder.node).
	names stackNode
	// end is the earliest end of the stack's events: when it next loses
	// one.
	end int64
	// sync, input, op and runtime are the levels of the first blocking
	// call, the first input event, the first framework op ("::" in its
	// name) that is not a step marker and the first runtime work; -1
	// when there is none.
	sync, input, op, runtime int32
	// dispatch is set when an event is a dispatch of a compiled function.
	dispatch bool
	// queue is set when an event is an input event of a loader running in
	// background workers (backgroundLoaderPatterns): the thread waits on
	// their queue.
	queue bool
	// markers is set when every event is a step marker (so for none).
	markers bool
}

// maxWalk is how many levels of a host stack the call sites, ops and the
// user's line look through: the innermost ones, where calls are. Real
// stacks are a few dozen deep; a hostile trace nests 100,000 events, and
// looking through all of them at every gap made the analysis quadratic.
// A report on a deeper stack says so (see deepStacks).
const maxWalk = 256

// innermost returns the innermost maxWalk events of the stack, outermost
// first.
func (s *hostStack) innermost() []int32 { return s.evs[max(len(s.evs)-maxWalk, 0):] }

// emptyFacts are the facts of the empty stack.
var emptyFacts = stackFacts{end: math.MaxInt64, sync: -1, input: -1, op: -1, runtime: -1, markers: true}

// top returns the facts of the whole stack.
func (s *hostStack) top() *stackFacts {
	if n := len(s.facts); n > 0 {
		return &s.facts[n-1]
	}
	return &emptyFacts
}

// reset empties the stack and pushes the events evs, outermost first.
func (s *hostStack) reset(a *analyzer, th *thread, evs []int32) {
	s.evs, s.facts = s.evs[:0], s.facts[:0]
	for _, i := range evs {
		s.push(a, th, i)
	}
}

// push adds event i of th on top of the stack.
func (s *hostStack) push(a *analyzer, th *thread, i int32) {
	f := *s.top()
	level := int32(len(s.evs))
	e := &th.evs[i]
	k := a.cls.of(e.Name)
	blocking := k == classSync || k == classAsyncCopy && a.links.isBlocking(int32(th.lo)+i)
	if f.sync < 0 && blocking {
		f.sync = level
	}
	if f.input < 0 && k == classInput {
		f.input = level
	}
	if f.op < 0 && a.factsOf(e.Name)&factScoped != 0 && !e.Has(trace.FlagStep) {
		f.op = level
	}
	if f.runtime < 0 && (k == classRuntime || a.slowLaunch(e)) {
		f.runtime = level
	}
	f.dispatch = f.dispatch || k == classDispatch
	f.queue = f.queue || k == classInput && a.cls.inBackground(e.Name)
	f.markers = f.markers && e.Has(trace.FlagStep)
	f.end = min(f.end, e.End())
	f.names = a.segs.node(f.names, e.Name)
	s.evs = append(s.evs, i)
	s.facts = append(s.facts, f)
}

// leave drops the events of th that end at or before x. Events nest, so
// they are mostly the top few; the events above the first one dropped that
// are kept are pushed again, in their order.
func (s *hostStack) leave(a *analyzer, th *thread, x int64) {
	if s.top().end > x {
		return // none ends by x
	}
	// The first level that ends by x: facts hold the earliest end of
	// each prefix, which only falls going up. Mostly it is the top few
	// levels: look there first, and halve the rest of a deep stack (a
	// hostile one is 100,000 deep).
	k := len(s.facts) - 1
	for n := 0; k > 0 && s.facts[k-1].end <= x && n < 8; n++ {
		k--
	}
	if k > 0 && s.facts[k-1].end <= x {
		k, _ = slices.BinarySearchFunc(s.facts[:k], x, func(f stackFacts, x int64) int {
			if f.end > x {
				return -1
			}
			return 1
		})
	}
	above := s.evs[k+1:]
	s.evs, s.facts = s.evs[:k], s.facts[:k]
	// Pushing writes only at levels below the events of above yet to be
	// read: they can share the array.
	for _, i := range above {
		if th.evs[i].End() > x {
			s.push(a, th, i)
		}
	}
}

// deepStacks warns, in the result's source, when host events nest deeper
// than maxWalk: what lies further out is not looked through.
func (a *analyzer) deepStacks(scan *hostScan) {
	if scan.deepest <= maxWalk {
		return
	}
	a.res.Source.Warnings = append(slices.Clip(a.res.Source.Warnings), fmt.Sprintf(
		"host events nest up to %d deep (on %s): call sites, host ops and the user's line are looked for in the innermost %d levels of a stack only",
		scan.deepest, a.threadName(scan.deepTrack), maxWalk))
}
