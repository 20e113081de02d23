package analyze

import (
	"cmp"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// tally sums gap time by cause: per event name (the blocking call, the
// input event, the host op the waited-for thread was in) and per thread.
// Its maps are keyed by distinct names and threads, never by event.
type tally struct {
	names   [NumCauses]map[trace.StrID]int64
	threads [NumCauses]map[int32]int64
	// pending sums adds of one cause, name and thread in a row (a gap's
	// segments mostly repeat the last one) before they reach the maps;
	// flush empties it.
	pending tallyKey
	sum     int64
}

type tallyKey struct {
	c     Cause
	name  trace.StrID
	track int32
	set   bool
}

func (t *tally) add(c Cause, name trace.StrID, track int32, d int64) {
	k := tallyKey{c, name, track, true}
	if k == t.pending {
		t.sum += d
		return
	}
	t.flush()
	t.pending, t.sum = k, d
}

// flush adds the pending sum to the maps; the maps are read only after.
func (t *tally) flush() {
	if t.pending.set {
		t.addNow(t.pending.c, t.pending.name, t.pending.track, t.sum)
	}
	t.pending, t.sum = tallyKey{}, 0
}

func (t *tally) addNow(c Cause, name trace.StrID, track int32, d int64) {
	if t.names[c] == nil {
		t.names[c] = map[trace.StrID]int64{}
		t.threads[c] = map[int32]int64{}
	}
	if name != 0 {
		t.names[c][name] += d
	}
	t.threads[c][track] += d
}

// culprit returns the name in stack that explains cause c (see culpritAt;
// for runtime, the outermost runtime work), 0 when none does.
func (a *analyzer) culprit(c Cause, th *thread, stack *hostStack) trace.StrID {
	if c == Runtime {
		if x := a.runtimeIn(stack); x >= 0 {
			return th.evs[x].Name
		}
		return 0
	}
	if i := culpritAt(c, th, stack); i >= 0 {
		return th.evs[stack.evs[i]].Name
	}
	return 0
}

// culpritAt returns the level in stack of the event that explains cause
// c: the blocking call for in-sync, the outermost input event for input,
// and for host work the outermost framework op (aten::linear rather than
// the Python frames around it or the launch calls inside it), else the
// innermost event; -1 when none does.
func culpritAt(c Cause, th *thread, stack *hostStack) int {
	f := stack.top()
	switch {
	case c == InSync:
		return int(f.sync)
	case c == Input:
		return int(f.input)
	case c == Host && f.op >= 0:
		return int(f.op)
	}
	// Else the innermost event, unless it is the step marker: a thread
	// inside nothing else runs Python the trace does not break down,
	// which the dispatch finding reports on its own.
	if n := len(stack.evs); c == Host && n > 0 && !th.evs[stack.evs[n-1]].Has(trace.FlagStep) {
		return n - 1
	}
	return -1
}

// top returns the names of m with the most time, most first, at most k.
func (a *analyzer) top(m map[trace.StrID]int64, k int) []string {
	ids := a.topIDs(m, k)
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		names = append(names, a.t.Str(id))
	}
	return names
}

// topIDs is top with the names' ids.
func (a *analyzer) topIDs(m map[trace.StrID]int64, k int) []trace.StrID {
	ids := make([]trace.StrID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y trace.StrID) int {
		if c := cmp.Compare(m[y], m[x]); c != 0 {
			return c
		}
		return cmp.Compare(a.t.Str(x), a.t.Str(y))
	})
	return ids[:min(k, len(ids))]
}

func topThread(m map[int32]int64) int32 {
	best, bt := int32(-1), int64(-1)
	for tr, v := range m {
		if v > bt || (v == bt && tr < best) {
			best, bt = tr, v
		}
	}
	return best
}

func (a *analyzer) threadName(tr int32) string {
	if tr < 0 || int(tr) >= len(a.t.Tracks) {
		return "an unknown thread"
	}
	return a.t.Tracks[tr].Name
}

// syncCallsInWindow returns the thread that blocked most on the devices
// and how many blocking calls it started in the window. Calls are host
// figures: counted over the window on the host's clock (a step's sync can
// start before the device ends the step before).
func (a *analyzer) syncCallsInWindow() (int32, int) {
	thr := topThread(merge(a.tally.threads[InSync], a.tally.threads[AfterSync]))
	if thr < 0 {
		return thr, 0
	}
	return thr, countIn(a.thread(thr).syncs, a.hostWindow())
}

// merge returns the sums of x and y by key.
func merge[K comparable](x, y map[K]int64) map[K]int64 {
	m := map[K]int64{}
	for k, v := range x {
		m[k] += v
	}
	for k, v := range y {
		m[k] += v
	}
	return m
}

// countIn returns how many of ivs start inside w.
func countIn(ivs []Interval, w Interval) int {
	n := 0
	for _, iv := range ivs {
		if iv.Start >= w.Start && iv.Start < w.End {
			n++
		}
	}
	return n
}
