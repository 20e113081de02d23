package analyze

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/trace/trackname"
	"github.com/tracegap/tracegap/trace"
)

// This file attributes idle time to lines of the user's code and to host
// ops: for every gap segment it finds the event the segment is blamed on
// (the blocking call, the loader call, the op, the copy) and the innermost
// frame of user code around it, where the trace records Python stacks.

// Frame is a line of code as a Python stack frame names it.
type Frame struct {
	File     string
	Line     int
	Function string
}

// IsZero reports whether f names no frame (the trace has no stacks).
func (f Frame) IsZero() bool { return f.File == "" }

// String writes the frame as "train.py:45 <module>"; empty when zero.
func (f Frame) String() string {
	if f.IsZero() {
		return ""
	}
	return f.File + ":" + strconv.Itoa(f.Line) + " " + f.Function
}

// CallSite is a blocking call, a loader call, a host op or runtime work
// with the innermost frame of user code it was called from, and the idle
// it caused.
type CallSite struct {
	// Frame is the user-code frame; zero when the trace has no stacks
	// around the call, or no frame of them is the user's.
	Frame Frame
	// Via is the library frame the user's line called through: the
	// outermost library frame inside Frame (JAX's api.py:3154
	// block_until_ready, ufunc_api.py:182 __call__), or, when no frame
	// is the user's, the outermost library frame recorded. Zero when it
	// would repeat Call or the trace has no stacks.
	Via Frame
	// Call names the event: the blocking call (aten::item), the input
	// event, the op, the runtime call.
	Call string
	// Cause is the idle's cause; in-sync stands for sync, after-sync
	// idle included.
	Cause Cause
	// Count is the number of calls that caused idle.
	Count int
	// Idle is the idle time they caused, averaged over devices.
	Idle int64
	// Program is, for a sync site with no user-code frame, the program
	// the device waited on (the one whose work ended as the first gap
	// began) and the line of the user's code most of its ops come from:
	// where the waited-on program's code is, not the blocking call. Zero
	// when the trace ties no device work to a program with source lines
	// (only XPlane's HLO protos do).
	Program ProgramLine
}

// ProgramLine is a compiled program and a line of the user's code that
// its ops come from.
type ProgramLine struct {
	// Name is the program's: "jit_forward_3d_conv".
	Name string
	File string
	Line int
	// Op names the first op from the line, as the compiler recorded it:
	// "jit(forward_3d_conv)/conv_general_dilated".
	Op string
}

// IsZero reports whether p names no program.
func (p ProgramLine) IsZero() bool { return p.File == "" }

// Where writes the site's line with the library frame it called through:
// "train.py:45 step via ufunc_api.py:182 __call__", "via api.py:3154
// block_until_ready" without a user frame; "" without either.
func (s CallSite) Where() string {
	switch {
	case s.Via.IsZero():
		return s.Frame.String()
	case s.Frame.IsZero():
		return "via " + s.Via.String()
	}
	return s.Frame.String() + " via " + s.Via.String()
}

// OpCost is a host op whose dispatch holds the devices idle: the idle it
// caused and what one call costs on the host.
type OpCost struct {
	Name string
	// Calls, Host and Launches are over the window on the threads the
	// devices waited for: the op's outermost calls, their time and the
	// device work launched inside them.
	Calls    int
	Host     int64
	Launches int
	// Idle is the idle time caused, averaged over devices.
	Idle int64
	// Frame is the user-code frame the op is most called from.
	Frame Frame
	// Known is the known cost the op is (KnownCosts: "zero_grad",
	// "optimizer.step", "collate"), "" when it is none.
	Known string `json:"-"`
	// Fix is the op's own fix when it is a known cost; Setting the
	// setting that fix changes. Package advice writes them (advice.Add).
	Fix     string
	Setting *Setting
}

// Setting is a recommended setting: a flag, an argument, a worker count.
type Setting struct {
	Name  string
	Value string
}

// knownCosts are host ops with a fix of their own (package advice holds
// the fixes), matched by substring of the op's name, lower-cased.
var knownCosts = []string{"zero_grad", "optimizer.step", "collate"}

// KnownCosts returns the known costs, OpCost.Known's values.
func KnownCosts() []string { return slices.Clone(knownCosts) }

// knownCost returns the index in knownCosts of the op named name, or -1.
func knownCost(name string) int {
	l := strings.ToLower(name)
	for i, k := range knownCosts {
		if strings.Contains(l, k) {
			return i
		}
	}
	return -1
}

// knownCostOf is knownCost of the name id, looked up once per name: a
// long trace blames millions of segments on a few hundred names.
func (a *analyzer) knownCostOf(id trace.StrID) int {
	if a.costs == nil {
		a.costs = make([]int8, len(a.t.Strings))
	}
	if int(id) >= len(a.costs) {
		return knownCost(a.t.Str(id))
	}
	if a.costs[id] == 0 {
		a.costs[id] = int8(knownCost(a.t.Str(id)) + 2)
	}
	return int(a.costs[id]) - 2
}

// nameFacts is what the attribution asks of an event's name per segment,
// found once per name.
type nameFacts uint8

const (
	factsKnown    nameFacts = 1 << iota // the other bits are filled
	factScoped                          // the name has "::", as framework ops do
	factFrame                           // the name is a Python frame
	factUserFrame                       // the name is a frame of the user's code
)

// factsOf returns the facts of the name id.
func (a *analyzer) factsOf(id trace.StrID) nameFacts {
	if a.facts == nil {
		a.facts = make([]nameFacts, len(a.t.Strings))
	}
	if int(id) < len(a.facts) && a.facts[id] != 0 {
		return a.facts[id]
	}
	name := a.t.Str(id)
	f := factsKnown
	if strings.Contains(name, "::") {
		f |= factScoped
	}
	if fr := parseFrame(name); !fr.IsZero() {
		f |= factFrame
		if !trackname.LibraryFile(fr.File, a.cls != nil && a.cls.grain) {
			f |= factUserFrame
		}
	}
	if int(id) < len(a.facts) {
		a.facts[id] = f
	}
	return f
}

// siteKey identifies a call site: the kind of idle, the call and the frame
// event's name (0: no frame).
type siteKey struct {
	cause       Cause
	call, frame trace.StrID
}

// siteTally sums idle by call site, by op and by copy call: while the gaps
// are attributed, by event and cause (sums); then, once, from those sums
// (see tallySums).
type siteTally struct {
	sums  []blameSum
	sumAt map[uint64]int32 // index in sums, by sumKey
	// recent are the indexes in sums of the last few runs' sums, the
	// latest first (see findSum).
	recent [4]int32
	runs   int // runs of segments summed so far
	// The tallies made from the sums.
	sites   map[siteKey]int32 // index in list
	list    []CallSite
	ops     map[trace.StrID]int64
	opFrame map[trace.StrID]map[trace.StrID]int64
	copies  map[int32]int64 // idle blamed on each copy call
	stacks  bool            // a frame was found around a call
	user    bool            // a user-code frame was found
	// open is the blame of the segment the encoder holds back (see
	// segmentDone); gap is the start of the gap being attributed.
	open blame
	gap  int64
	run  pendingBlame
	// prog is the index in Trace.Programs of the program the device of
	// the gap being attributed waited on, -1 when none.
	prog int32
}

// blameSum is the idle blamed on one event for one cause. A long trace
// blames hundreds of thousands of runs of segments on tens of thousands of
// events: the call-site, op and copy tallies are made once per sum rather
// than once per run.
type blameSum struct {
	blame
	cause Cause
	idle  int64
	// first is the start of the first gap, in Result.Gaps order, with a
	// segment blamed on the event for the cause, and run the number of the
	// run of segments tallied then: a call counts once, at the site of its
	// first gap, however many segments are blamed on it. Result.Gaps sorts
	// gaps by start, of equal starts in device order, and the devices are
	// attributed in that order, each in time order: the first gap is the
	// first seen of the earliest start.
	first int64
	run   int
	// prog is the program the device of the first gap waited on (see
	// siteTally.prog).
	prog int32
}

// sumKey is the key of the sum of event ev (an index in Trace.Events)
// for cause c.
func sumKey(ev int32, c Cause) uint64 { return uint64(ev)<<8 | uint64(c) }

// blame is what a segment is blamed on: event ev (-1: none) of thread th.
// When that is runtime work on another thread than the one the device
// waited for (see runtimeBehind), across is set and frame is the user-code
// frame around the waiting thread's dispatch: the line that called it.
type blame struct {
	th         *thread
	ev         int
	frame, via trace.StrID
	across     bool
}

func newSiteTally() *siteTally {
	return &siteTally{
		sumAt: map[uint64]int32{}, sites: map[siteKey]int32{},
		ops: map[trace.StrID]int64{}, opFrame: map[trace.StrID]map[trace.StrID]int64{},
		copies: map[int32]int64{}, open: blame{ev: -1}, recent: [4]int32{-1, -1, -1, -1}, prog: -1,
	}
}

// insights fills Result.CallSites, Result.Ops and Result.Copies from the
// idle the attribution blamed on each event (see segmentDone).
func (a *analyzer) insights() {
	r := a.res
	st := a.sites
	a.flushBlame()
	a.tallySums()
	n := int64(max(len(a.devs), 1))
	for _, s := range st.list {
		s.Idle /= n
		r.CallSites = append(r.CallSites, s)
	}
	slices.SortFunc(r.CallSites, func(x, y CallSite) int {
		return cmp.Or(cmp.Compare(y.Idle, x.Idle), cmp.Compare(x.Call, y.Call), cmp.Compare(x.Frame.String(), y.Frame.String()), cmp.Compare(x.Cause, y.Cause))
	})
	r.Facts.UserFrames, r.Facts.CallFrames = st.user, st.stacks
	r.Ops = a.opCosts(st, n)
	r.Copies = a.copyStats(st.copies, n)
}

// Unsited returns, by cause, the window's idle that no call site holds:
// idle with no traced call to blame (untraced idle, host time between ops,
// a sync on a thread that shows no call). As in CallSite, InSync stands
// for sync, after-sync idle included, and AfterSync is 0. Call sites are
// averaged over devices one by one: a difference below one nanosecond a
// site is rounding, not idle left out.
func (r *Result) Unsited() [NumCauses]int64 {
	var out [NumCauses]int64
	for c := InSync; c < NumCauses; c++ {
		out[c] = r.Idle.Of(c)
	}
	out[InSync] += out[AfterSync]
	out[AfterSync] = 0
	for _, s := range r.CallSites {
		out[s.Cause] -= s.Idle
	}
	for c := range out {
		if out[c] <= int64(len(r.CallSites)) {
			out[c] = 0
		}
	}
	return out
}

// openBlame finds the event segment s, just opened on thread th inside
// stack (both nil when the gap waited for no thread), is blamed on; via is
// the other thread's call that decided the segment's cause, or nil. The
// segment is tallied when it is done, at its full length.
func (a *analyzer) openBlame(th *thread, stack *hostStack, s *Segment, via *hostStretch) {
	st := a.sites
	st.open = blame{th: th, ev: -1}
	switch {
	case th == nil || s.Cause == Untraced || s.Cause == Stall:
	case s.Cause == Runtime && via != nil:
		// The dispatch waits for another thread's runtime work: the
		// work is the call, the dispatch's caller the site.
		if via.ev >= 0 {
			rt := a.thread(via.track)
			frame, through := a.stackFrame(th, stack)
			st.open = blame{th: rt, ev: int(via.ev) - rt.lo, frame: frame, via: through, across: true}
		}
	default:
		st.open.ev = a.blamed(th, s, stack)
	}
}

// stackFrame returns the name of the innermost user-code frame of th's
// stack and the library frame it called through (see frameVia), 0 when
// there is none.
func (a *analyzer) stackFrame(th *thread, stack *hostStack) (user, via trace.StrID) {
	if n := len(stack.evs); n > 0 {
		return a.frameVia(th, int(stack.evs[n-1]))
	}
	return 0, 0
}

// segmentDone adds the finished segment s of the current gap to the
// steps' idle, unless the gap is inside one step (see stepHolding) or the
// run has none, and to what it is blamed on. Consecutive segments blamed on
// the same event for the same cause are summed before they reach the
// tally's maps (see addBlame): a long gap blames thousands of segments on
// a few events.
func (a *analyzer) segmentDone(s *Segment) {
	// A gap inside one step (a.wholeStep, set by idle) adds its split to
	// the step once, when the gap is done.
	if a.wholeStep < 0 && len(a.res.Steps) > 0 {
		a.stepIdle(Interval{s.Start, s.Start + s.Dur}, s.Cause)
	}
	st := a.sites
	if st.open.ev < 0 {
		return
	}
	k := blameRun{blame: st.open, cause: s.Cause, gap: st.gap, prog: st.prog}
	if st.run.set && st.run.key == k {
		st.run.dur += s.Dur
		return
	}
	a.flushBlame()
	st.run = pendingBlame{key: k, dur: s.Dur, set: true}
}

// blameRun identifies a run of segments tallied together: the event
// blamed, the cause and the gap.
type blameRun struct {
	blame
	cause Cause
	gap   int64
	prog  int32
}

// pendingBlame is the run of segments not yet tallied and its idle.
type pendingBlame struct {
	key blameRun
	dur int64
	set bool
}

// flushBlame adds the pending run of segments to the sum of its event and
// cause.
func (a *analyzer) flushBlame() {
	st := a.sites
	if !st.run.set {
		return
	}
	k, dur := st.run.key, st.run.dur
	st.run = pendingBlame{}
	st.runs++
	i := st.findSum(k)
	if i < 0 {
		i = int32(len(st.sums))
		st.sumAt[sumKey(int32(k.th.lo+k.ev), k.cause)] = i
		st.sums = append(roomForOne(st.sums), blameSum{blame: k.blame, cause: k.cause, first: k.gap, run: st.runs, prog: k.prog})
	}
	st.used(i)
	s := &st.sums[i]
	s.idle += dur
	if k.gap < s.first {
		s.first, s.run, s.prog = k.gap, st.runs, k.prog
	}
}

// findSum returns the index in sums of the sum of k's event and cause, -1
// when there is none yet. A run mostly comes back to the event of one of
// the last few runs or goes on to the sum begun after one of theirs (each
// device of a run blames the same events in the same order): those are
// tried before the map, whose lookups miss the cache on a long trace.
func (st *siteTally) findSum(k blameRun) int32 {
	for _, i := range st.recent {
		for _, j := range [2]int32{i, i + 1} {
			if j >= 0 && int(j) < len(st.sums) && st.sums[j].blame == k.blame && st.sums[j].cause == k.cause {
				return j
			}
		}
	}
	if i, ok := st.sumAt[sumKey(int32(k.th.lo+k.ev), k.cause)]; ok {
		return i
	}
	return -1
}

// used puts sum i first in recent.
func (st *siteTally) used(i int32) {
	k := slices.Index(st.recent[:], i)
	if k < 0 {
		k = len(st.recent) - 1
	}
	copy(st.recent[1:k+1], st.recent[:k])
	st.recent[0] = i
}

// tallySums adds each event's sums to their call sites, ops and copy
// calls, and counts each call once (see outerCall), at the site of its
// first gap, however many devices and gaps it held idle. The sums are in
// the order they were begun, so the sites are listed in the order their
// first segment was tallied.
func (a *analyzer) tallySums() {
	st := a.sites
	first := map[int32]int{} // index in sums of each call's first, by index in Trace.Events
	sites := make([]int32, len(st.sums))
	for i := range st.sums {
		s := &st.sums[i]
		sites[i] = a.tallySum(s)
		global := int32(s.th.lo + outerCall(s.th, s.th.parents(), s.ev))
		if j, ok := first[global]; !ok || s.first < st.sums[j].first || s.first == st.sums[j].first && s.run < st.sums[j].run {
			first[global] = i
		}
	}
	for _, i := range first {
		st.list[sites[i]].Count++
	}
}

// tallySum adds the sum s to its call site, op and copy call, and returns
// the site's index in list.
func (a *analyzer) tallySum(s *blameSum) int32 {
	st := a.sites
	th, ev, dur := s.th, s.ev, s.idle
	e := &th.evs[ev]
	frame, via := s.frame, s.via
	if !s.across {
		frame, via = a.frameVia(th, ev)
	}
	if via == e.Name {
		via = 0 // the call itself
	}
	st.user = st.user || frame != 0
	st.stacks = st.stacks || frame != 0 || via != 0 || a.factsOf(e.Name)&factFrame != 0
	c := s.cause
	if c == AfterSync {
		c = InSync
	}
	sk := siteKey{c, e.Name, frame}
	i, ok := st.sites[sk]
	if !ok {
		i = int32(len(st.list))
		st.sites[sk] = i
		st.list = append(st.list, CallSite{Frame: parseFrame(a.t.Str(frame)), Via: parseFrame(a.t.Str(via)), Call: a.t.Str(e.Name), Cause: c})
	}
	st.list[i].Idle += dur
	if frame == 0 && c == InSync && s.prog >= 0 && st.list[i].Program.IsZero() {
		st.list[i].Program = a.programLine(s.prog)
	}
	cp := -1
	switch {
	case e.Has(trace.FlagMemcpy):
		cp = ev
	case s.cause == InSync || s.cause == AfterSync:
		cp = a.copyCall(th, ev) // a blocking call waiting on a copy inside it
	}
	if cp >= 0 {
		st.copies[int32(th.lo+cp)] += dur
	}
	if s.cause == Host && a.factsOf(e.Name)&factFrame == 0 && !strings.HasPrefix(a.t.Str(e.Name), "<") {
		// An op, not Python between ops.
		st.ops[e.Name] += dur
		if st.opFrame[e.Name] == nil {
			st.opFrame[e.Name] = map[trace.StrID]int64{}
		}
		st.opFrame[e.Name][frame] += dur
	}
	return i
}

// copyCall returns the index in th.evs of the blocking copy call that
// the blocking call ev holds, -1 when there is none: aten::item blocks in
// the cudaMemcpyAsync inside it, and the idle blamed on it is the copy's
// too (see CopyStat.Idle). A call holds few events; the look stops after
// maxCopyLook.
func (a *analyzer) copyCall(th *thread, ev int) int {
	end := th.evs[ev].End()
	for i := ev + 1; i < min(len(th.evs), ev+maxCopyLook) && th.evs[i].Start < end; i++ {
		if th.evs[i].Has(trace.FlagMemcpy) && a.links.isBlocking(int32(th.lo+i)) {
			return i
		}
	}
	return -1
}

// maxCopyLook bounds the events copyCall looks at.
const maxCopyLook = 64

// blamed returns the index in th.evs of the event segment s is blamed on,
// -1 when none is on th: the blocking call (for after-sync, the one whose
// return the gap continues), the input event, the op (a known cost before
// the culprit op inside it), the runtime work.
func (a *analyzer) blamed(th *thread, s *Segment, stack *hostStack) int {
	switch s.Cause {
	case AfterSync:
		k := th.lastSyncIndex(s.Start)
		if k < 0 {
			return -1
		}
		i := th.syncCallAt(a, k)
		if i < 0 || a.t.Str(th.evs[i].Name) != a.res.CallName(s.Sync) {
			return -1 // another thread's call
		}
		return i
	case Host:
		for _, x := range stack.innermost() {
			if a.knownCostOf(th.evs[x].Name) >= 0 {
				return int(x)
			}
		}
	case Input:
		// The loader's own event rather than the Python frame of its
		// __next__, which the input patterns match too.
		for _, x := range stack.innermost() {
			if name := th.evs[x].Name; a.cls.of(name) == classInput && a.factsOf(name)&factFrame == 0 {
				return int(x)
			}
		}
	case Runtime:
		return a.runtimeIn(stack)
	}
	if i := culpritAt(s.Cause, th, stack); i >= 0 {
		return int(stack.evs[i])
	}
	return -1
}

// runtimeIn returns the index in its thread's events of the outermost
// runtime work in stack, -1 when there is none.
func (a *analyzer) runtimeIn(stack *hostStack) int {
	if k := stack.top().runtime; k >= 0 {
		return int(stack.evs[k])
	}
	return -1
}

// userFrame returns the name of the innermost user-code frame enclosing
// event i of th (i itself included), 0 when there is none.
func (a *analyzer) userFrame(th *thread, i int) trace.StrID {
	user, _ := a.frameVia(th, i)
	return user
}

// frameVia returns userFrame of event i of th and via, the library frame
// it called through: the outermost frame inside it, or, without a user
// frame, the outermost frame around i; 0 when there is none.
func (a *analyzer) frameVia(th *thread, i int) (user, via trace.StrID) {
	par := th.parents()
	for x, n := int32(i), 0; x >= 0 && n < maxWalk; x, n = par.of(x), n+1 {
		name := th.evs[x].Name
		f := a.factsOf(name)
		if f&factUserFrame != 0 {
			return name, via
		}
		if f&factFrame != 0 {
			via = name
		}
	}
	return 0, via
}

// parseFrame reads a Python frame as PyTorch names it ("train.py(42):
// <module>") or as JAX's Python tracer does ("train.py:42 train_step", the
// "$" before the file dropped); zero for any other name.
func parseFrame(s string) Frame {
	s = strings.TrimPrefix(s, "$") // JAX's tracer's mark, kept in JSON exports
	if i := strings.Index(s, ".py("); i > 0 {
		rest := s[i+4:]
		j := strings.Index(rest, "): ")
		if n, err := strconv.Atoi(rest[:max(j, 0)]); j > 0 && err == nil {
			return Frame{File: s[:i+3], Line: n, Function: rest[j+3:]}
		}
	}
	if i := strings.Index(s, ".py:"); i > 0 {
		rest := s[i+4:]
		line, fn, _ := strings.Cut(rest, " ")
		if n, err := strconv.Atoi(line); err == nil {
			return Frame{File: s[:i+3], Line: n, Function: fn}
		}
	}
	return Frame{}
}

// opCosts returns the ops that caused host idle, most idle first, with
// their calls, host time and launches on the waited-for threads.
func (a *analyzer) opCosts(st *siteTally, ndev int64) []OpCost {
	if len(st.ops) == 0 {
		return nil
	}
	idx := map[trace.StrID]int{}
	ops := make([]OpCost, 0, len(st.ops))
	for name, idle := range st.ops {
		o := OpCost{Name: a.t.Str(name), Idle: idle / ndev}
		best, bestName := int64(-1), ""
		for f, d := range st.opFrame[name] {
			if n := a.t.Str(f); d > best || d == best && n < bestName {
				best, bestName = d, n
			}
		}
		o.Frame = parseFrame(bestName)
		if k := knownCost(o.Name); k >= 0 {
			o.Known = knownCosts[k]
		}
		idx[name] = len(ops)
		ops = append(ops, o)
	}
	w := a.hostWindow()
	for tr := range a.waitedThreads() {
		a.countOps(a.thread(tr), w, idx, ops)
	}
	slices.SortFunc(ops, func(x, y OpCost) int { return cmp.Or(cmp.Compare(y.Idle, x.Idle), cmp.Compare(x.Name, y.Name)) })
	return ops
}

// countOps adds the calls of the ops in idx that th makes during w, and
// the launches inside each call, to ops. A call counts when it runs
// during w, also when it started before (a call that holds a device idle
// in the window is one of the window's calls), and only once: an op
// called inside itself is one call (see outerCall).
func (a *analyzer) countOps(th *thread, w Interval, idx map[trace.StrID]int, ops []OpCost) {
	par := th.parents()
	for i := range th.evs {
		e := &th.evs[i]
		if e.Start >= w.End || e.Start < w.Start && e.End() <= w.Start {
			continue
		}
		if k, ok := idx[e.Name]; ok && outerCall(th, par, i) == i {
			ops[k].Calls++
			ops[k].Host += e.Dur()
		}
		if e.Corr == 0 || a.links.host(e.Corr) != int32(th.lo+i) {
			continue
		}
		// A launch: it counts for the innermost op in idx around it.
		for x, n := par.of(int32(i)), 0; x >= 0 && n < maxWalk; x, n = par.of(x), n+1 {
			if k, ok := idx[th.evs[x].Name]; ok {
				ops[k].Launches++
				break
			}
		}
	}
}

// outerCall returns the call event i of th is part of: the outermost
// event enclosing it (itself included) with its name. A call that calls
// itself (a jitted function's wrapper around its own dispatch, an op
// re-dispatched) is one call.
func outerCall(th *thread, par *parentIndex, i int) int {
	out := i
	for x, n := par.of(int32(i)), 0; x >= 0 && n < maxWalk; x, n = par.of(x), n+1 {
		if th.evs[x].Name == th.evs[i].Name {
			out = int(x)
		}
	}
	return out
}

// waitedThreads returns the host threads some gap waited for.
func (a *analyzer) waitedThreads() map[int32]bool {
	m := map[int32]bool{}
	for i := range a.res.Gaps {
		if tr := a.res.Gaps[i].Track; tr >= 0 {
			m[tr] = true
		}
	}
	return m
}

// hostWindow returns the window on the host's clock: from the first
// step's host start to the last step's host end or, if later, the
// window's end (the host can wait for the device's last work after its
// last step, and a call there can hold a device idle in the window);
// without steps, the window.
func (a *analyzer) hostWindow() Interval {
	w := Interval{a.res.Window.Start, a.res.Window.End}
	if n := len(a.hostSpans); n > 0 {
		w = Interval{a.hostSpans[0].Start, max(a.hostSpans[n-1].End, w.End)}
	}
	return w
}

// programBefore returns the index in Trace.Programs of the program whose
// work on device d ran up to at, the start of an idle stretch: the work a
// blocking call then waited on. -1 when the trace ties none to a program.
func (a *analyzer) programBefore(d *device, at int64) int32 {
	if len(a.t.ProgramRuns) == 0 {
		return -1
	}
	return int32(lastProgram(a.t.ProgramRuns, d.tracks, at))
}

// lastProgram returns the index in Trace.Programs of the program whose
// work on tracks reaches furthest up to at, the work a device idle from at
// waited on; -1 when that work belongs to no program of Trace.Programs, or
// none of their work before at belongs to a program. runs are sorted by
// track and start, as Trace.ProgramRuns are.
func lastProgram(runs []trace.ProgramRun, tracks []int32, at int64) int {
	best, reach := -1, int64(-1)
	for _, tr := range tracks {
		// The last run of tr starting before at.
		i := sort.Search(len(runs), func(k int) bool {
			return runs[k].Track > tr || runs[k].Track == tr && runs[k].Start >= at
		}) - 1
		if i < 0 || runs[i].Track != tr {
			continue
		}
		if r := min(runs[i].End, at); r > reach {
			best, reach = int(runs[i].Program), r
		}
	}
	return best
}

// programLine returns program p with the line of the user's code most of
// its ops come from.
func (a *analyzer) programLine(p int32) ProgramLine {
	prog := &a.t.Programs[p]
	if len(prog.Lines) == 0 {
		return ProgramLine{}
	}
	l := &prog.Lines[0]
	return ProgramLine{Name: a.t.Str(prog.Name), File: a.t.Str(l.File), Line: int(l.Line), Op: a.t.Str(l.Op)}
}
