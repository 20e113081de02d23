package analyze

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// StackID indexes a result's table of host stacks (Result.Stack). 0 is the
// empty stack.
type StackID uint32

// CallID indexes a result's table of blocking-call names
// (Result.CallName). 0 is no call.
type CallID uint32

// Segment is a stretch of a gap during which the waited-for thread was in
// the same stack of host events. It holds no pointers: a long trace has
// tens of millions of segments, and the garbage collector need not scan
// them. Result.Stack and Result.CallName name its stack and call;
// Result.Named returns it with the names.
type Segment struct {
	Start, Dur int64
	// Stack is the host events enclosing the segment on the waited-for
	// thread; 0 (empty) when untraced.
	Stack StackID
	// Sync is the blocking call of a sync segment: for in-sync, the
	// outermost blocking call the thread is inside (aten::item rather
	// than the cudaStreamSynchronize inside it); for after-sync, the
	// blocking call whose return the device has been waiting on the host
	// since. When the waited-for thread shows nothing while another
	// thread blocks (JAX's runtime thread while Python is in
	// block_until_ready), it is that thread's call. For a runtime
	// segment of a JAX loop thread waiting inside a dispatch while
	// another thread does runtime work (see runtimeBehind), it is that
	// work (TfrtTpuClient::DefragmentMemory). For a stalled segment, the
	// blocking call the launching thread (or, showing nothing, another
	// thread) was in while the device was stalled, 0 when none. 0 for
	// other causes.
	Sync  CallID
	Cause Cause
}

// NamedSegment is a Segment with its stack and call named, for the few
// gaps a report shows.
type NamedSegment struct {
	Start, Dur int64
	Cause      Cause
	// Stack names the host events enclosing the segment on the
	// waited-for thread, outermost first; empty when untraced.
	Stack []string
	// Sync names the blocking call or the other thread's runtime work
	// (see Segment.Sync); empty for none.
	Sync string
}

// segments holds the segments of a result's gaps, encoded, and the tables
// their ids index. A gap's segments are a run of the encoding: per
// segment, its kind (an index into kinds) shifted left by one with the low
// bit set when the segment does not start where the previous one ended (or
// the first at its gap's start), then that jump (zig-zag) when set, then
// its length. Segments tile their gap, so a segment takes 2 to 5 bytes
// where a Segment takes 32; nothing in it is a pointer.
type segments struct {
	data   []byte
	kinds  []segKind
	stacks [][]string
	calls  []string
	// index interns names for AddSegments; nil until it is first called.
	index *segIndex
}

// segKind is what a segment is apart from its time.
type segKind struct {
	stack StackID
	call  CallID
	cause Cause
}

// segIndex finds the ids of names already in the tables.
type segIndex struct {
	kinds  map[segKind]uint32
	stacks map[string]StackID
	calls  map[string]CallID
}

// Stack returns the names of stack id, outermost first (empty, not nil,
// for the empty stack). The slice is shared: callers must not modify it.
func (r *Result) Stack(id StackID) []string {
	if int(id) < len(r.segs.stacks) {
		return r.segs.stacks[id]
	}
	return []string{}
}

// CallName returns the name of blocking call id, "" for 0.
func (r *Result) CallName(id CallID) string {
	if int(id) < len(r.segs.calls) {
		return r.segs.calls[id]
	}
	return ""
}

// Stacks returns how many distinct stacks the result's segments have:
// every StackID is below it.
func (r *Result) Stacks() int { return max(len(r.segs.stacks), 1) }

// Segments returns the segments of g, a gap of r, in time order.
func (r *Result) Segments(g *Gap) iter.Seq[Segment] {
	return func(yield func(Segment) bool) {
		data, kinds := r.segs.data[g.segLo:g.segHi], r.segs.kinds
		at := g.Start
		for len(data) > 0 {
			kind, jump, dur, rest, _ := nextSegment(data) // the result's own encoding: whole
			data, at = rest, at+jump
			k := kinds[kind]
			s := Segment{Start: at, Dur: int64(dur), Stack: k.stack, Sync: k.call, Cause: k.cause}
			at += s.Dur
			if !yield(s) {
				return
			}
		}
	}
}

// nextSegment decodes the segment at the start of data (see segments):
// its kind, how far it starts from the previous one's end, its length, and
// the bytes after it; ok is false when data ends inside it.
func nextSegment(data []byte) (kind uint64, jump int64, dur uint64, rest []byte, ok bool) {
	v, n := binary.Uvarint(data)
	if n <= 0 {
		return 0, 0, 0, nil, false
	}
	data = data[n:]
	if v&1 != 0 {
		if jump, n = binary.Varint(data); n <= 0 {
			return 0, 0, 0, nil, false
		}
		data = data[n:]
	}
	if dur, n = binary.Uvarint(data); n <= 0 {
		return 0, 0, 0, nil, false
	}
	return v >> 1, jump, dur, data[n:], true
}

// Named returns s, a segment of r, with its stack and call named.
func (r *Result) Named(s Segment) NamedSegment {
	return NamedSegment{Start: s.Start, Dur: s.Dur, Cause: s.Cause, Stack: r.Stack(s.Stack), Sync: r.CallName(s.Sync)}
}

// NamedSegments returns the segments of g, a gap of r, with their names.
func (r *Result) NamedSegments(g *Gap) []NamedSegment {
	var out []NamedSegment
	for s := range r.Segments(g) {
		out = append(out, r.Named(s))
	}
	return out
}

// HostStack returns the stack of the longest segment of g, a gap of r,
// outermost first (the first such segment on a tie): what the host was
// doing in the gap's longest single stretch.
func (r *Result) HostStack(g *Gap) []string {
	best := Segment{Dur: -1}
	for s := range r.Segments(g) {
		if s.Dur > best.Dur {
			best = s
		}
	}
	if best.Dur < 0 {
		return nil
	}
	return r.Stack(best.Stack)
}

// SetSegments sets the segments of g, a gap of r, to segs, which name
// their stacks and calls. It is for results made by hand (tests, merged
// results); the analysis encodes its segments as it finds them.
func (r *Result) SetSegments(g *Gap, segs ...NamedSegment) {
	x := r.segs.indexOf()
	g.segLo = len(r.segs.data)
	w := segWriter{at: g.Start}
	for _, s := range segs {
		k := segKind{stack: x.stack(&r.segs, s.Stack), call: x.call(&r.segs, s.Sync), cause: s.Cause}
		r.segs.data = w.put(r.segs.data, x.kind(&r.segs, k), s.Start, s.Dur)
	}
	g.segHi = len(r.segs.data)
}

// AppendGap appends g, a gap of from, to r's gaps with its segments,
// whose times follow g.Start: a caller moving g to another timeline moves
// its segments with it.
func (r *Result) AppendGap(from *Result, g Gap) {
	var segs []NamedSegment
	if g.segHi > g.segLo {
		segs = from.NamedSegments(&g)
	}
	r.SetSegments(&g, segs...)
	r.Gaps = append(r.Gaps, g)
}

// indexOf returns the index of s's tables, building it on first use.
func (s *segments) indexOf() *segIndex {
	if s.index != nil {
		return s.index
	}
	s.init()
	x := &segIndex{kinds: map[segKind]uint32{}, stacks: map[string]StackID{}, calls: map[string]CallID{}}
	for i, k := range s.kinds {
		x.kinds[k] = uint32(i)
	}
	for i, st := range s.stacks {
		x.stacks[stackKey(st)] = StackID(i)
	}
	for i, c := range s.calls {
		x.calls[c] = CallID(i)
	}
	s.index = x
	return x
}

// init gives empty tables their entry 0: the empty stack and no call.
func (s *segments) init() {
	if len(s.stacks) == 0 {
		s.stacks = [][]string{{}}
		s.calls = []string{""}
	}
}

func (x *segIndex) kind(s *segments, k segKind) uint32 {
	return intern(x.kinds, &s.kinds, k, func() segKind { return k })
}

func (x *segIndex) stack(s *segments, names []string) StackID {
	return intern(x.stacks, &s.stacks, stackKey(names), func() []string { return append([]string{}, names...) })
}

func (x *segIndex) call(s *segments, name string) CallID {
	return intern(x.calls, &s.calls, name, func() string { return name })
}

// intern returns the id of key in ids, first appending value() to table
// under the next id when the key is new.
func intern[K comparable, T any, ID ~uint32](ids map[K]ID, table *[]T, key K, value func() T) ID {
	id, ok := ids[key]
	if !ok {
		id = ID(len(*table))
		*table = append(*table, value())
		ids[key] = id
	}
	return id
}

// stackKey returns a key that tells stacks of names apart.
func stackKey(names []string) string {
	var b []byte
	for _, n := range names {
		b = binary.AppendUvarint(b, uint64(len(n)))
		b = append(b, n...)
	}
	return string(b)
}

// segWriter encodes one gap's segments; at is where the last one ended.
type segWriter struct{ at int64 }

// put appends a segment of kind k to data.
func (w *segWriter) put(data []byte, k uint32, start, dur int64) []byte {
	if room := 3 * binary.MaxVarintLen64; cap(data)-len(data) < room {
		// Double the room: append grows a large slice by a quarter at a
		// time, and a long trace's segments take tens of megabytes.
		data = slices.Grow(data, max(len(data), room))
	}
	v := uint64(k) << 1
	if start != w.at {
		data = binary.AppendUvarint(data, v|1)
		data = binary.AppendVarint(data, start-w.at)
	} else {
		data = binary.AppendUvarint(data, v)
	}
	w.at = start + dur
	return binary.AppendUvarint(data, uint64(dur))
}

// segEncoder is the analysis's side of a result's segments: it finds the
// ids of stacks and calls by their string ids, and holds back the gap's
// last segment to merge the next one into it when cause, call and stack
// are the same.
type segEncoder struct {
	s *segments
	x *segIndex
	// children and nodes intern stacks of string ids as stackNodes.
	children map[uint64]stackNode             // by nodeKey
	recent   *[1 << recentNodeBits]recentNode // see node
	nodes    []nodeInfo
	// calls holds the id of each blocking call's string id, plus one.
	calls []CallID
	// byStack lists the kinds of each stack id, by index in s.kinds.
	byStack [][]uint32
	names   []string
	w       segWriter
	// open is set while a segment is held back: last, of stack lastNode.
	open     bool
	last     Segment
	lastNode stackNode
	// done, when set, is given each segment as it is written, merged:
	// the analysis blames it and adds it to the steps in the same pass.
	done func(*Segment)
}

// stackNode is a stack of event names (string ids) interned as a path from
// the root of a trie, 0 being the empty stack. The attribution finds a
// stack's node from its parent's as an event enters it (see hostStack):
// a stretch's stack is then compared and looked up as one number, and a
// long trace has millions of stretches but few distinct stacks.
type stackNode uint32

// nodeInfo is a stackNode's top name and parent, and its stack id once a
// segment has had it.
type nodeInfo struct {
	parent stackNode
	name   trace.StrID
	stack  StackID
	known  bool
}

// nodeKey is the key of the node of name on top of parent.
func nodeKey(parent stackNode, name trace.StrID) uint64 {
	return uint64(parent)<<32 | uint64(name)
}

func newSegEncoder(s *segments) *segEncoder {
	return &segEncoder{s: s, x: s.indexOf(), children: map[uint64]stackNode{}, recent: new([1 << recentNodeBits]recentNode), nodes: []nodeInfo{{}}}
}

// node returns the node of the stack parent with name on top.
func (e *segEncoder) node(parent stackNode, name trace.StrID) stackNode {
	k := nodeKey(parent, name)
	// A thread enters the same few stacks over and over: a small table in
	// front of the map answers nine look-ups in ten on the TPU capture.
	// Key 0 (an unnamed event at the root) always goes to the map, so
	// that a zero slot reads as empty.
	c := &e.recent[k*0x9e3779b97f4a7c15>>(64-recentNodeBits)]
	if c.key == k && k != 0 {
		return c.node
	}
	n, ok := e.children[k]
	if !ok {
		n = stackNode(len(e.nodes))
		e.nodes = append(e.nodes, nodeInfo{parent: parent, name: name})
		e.children[k] = n
	}
	*c = recentNode{k, n}
	return n
}

// recentNodeBits sizes segEncoder.recent: 4096 slots, 64 KB.
const recentNodeBits = 12

// recentNode is a slot of segEncoder.recent: a nodeKey and its node.
type recentNode struct {
	key  uint64
	node stackNode
}

// start begins the segments of g.
func (e *segEncoder) start(g *Gap) {
	g.segLo = len(e.s.data)
	e.w = segWriter{at: g.Start}
	e.open = false
}

// finish ends the segments of g.
func (e *segEncoder) finish(g *Gap) {
	e.flush()
	g.segHi = len(e.s.data)
}

// close drops what only the encoding needed and stops passing segments
// to done: stretches explained after the analysis (Analysis.ExplainIdle)
// are no gap's.
func (e *segEncoder) close() { e.s.index, e.done = nil, nil }

// add adds the stretch [start, start+dur) of cause c inside the stack of
// event names n, of blocking call sync (0 for none), to the gap's
// segments, merged into the previous one when cause, call and names are
// the same. It returns the segment held back and whether the stretch
// opened it rather than being merged into it.
func (e *segEncoder) add(start, dur int64, c Cause, sync trace.StrID, name func(trace.StrID) string, n stackNode) (*Segment, bool) {
	call := e.call(sync, name)
	if e.open && e.last.Cause == c && e.last.Sync == call && e.lastNode == n {
		e.last.Dur += dur
		return &e.last, false
	}
	e.flush()
	e.open = true
	e.last = Segment{Start: start, Dur: dur, Stack: e.stack(n, name), Sync: call, Cause: c}
	e.lastNode = n
	return &e.last, true
}

// flush writes the segment held back.
func (e *segEncoder) flush() {
	if !e.open {
		return
	}
	e.open = false
	k := e.kind(segKind{stack: e.last.Stack, call: e.last.Sync, cause: e.last.Cause})
	e.s.data = e.w.put(e.s.data, k, e.last.Start, e.last.Dur)
	if e.done != nil {
		e.done(&e.last)
	}
}

// kind returns the index of k in the kinds table. The kinds of each stack
// are kept in a short list, searched in place of hashing k: a stack has
// few causes and calls.
func (e *segEncoder) kind(k segKind) uint32 {
	if int(k.stack) >= len(e.byStack) {
		e.byStack = append(e.byStack, make([][]uint32, int(k.stack)+1-len(e.byStack))...)
	}
	for _, i := range e.byStack[k.stack] {
		if e.s.kinds[i] == k {
			return i
		}
	}
	i := e.x.kind(e.s, k)
	e.byStack[k.stack] = append(e.byStack[k.stack], i)
	return i
}

// stack returns the id of the stack of node n, looking its names up the
// first time. A stack deeper than maxWalk keeps its innermost maxWalk
// names under deepMark: a thread entering 100,000 nested events one by
// one through a gap passes as many stacks, and keeping each whole took
// memory and time of their depth squared.
func (e *segEncoder) stack(n stackNode, name func(trace.StrID) string) StackID {
	if info := &e.nodes[n]; info.known {
		return info.stack
	}
	e.names = e.names[:0]
	m := n
	for ; m != 0 && len(e.names) < maxWalk; m = e.nodes[m].parent {
		e.names = append(e.names, name(e.nodes[m].name))
	}
	if m != 0 {
		e.names = append(e.names, deepMark)
	}
	slices.Reverse(e.names)
	id := e.x.stack(e.s, e.names)
	e.nodes[n].stack, e.nodes[n].known = id, true
	return id
}

// deepMark stands for the outer events of a stack kept to its innermost
// maxWalk (see segEncoder.stack).
const deepMark = "…"

// call returns the id of blocking call sync.
func (e *segEncoder) call(sync trace.StrID, name func(trace.StrID) string) CallID {
	if int(sync) < len(e.calls) && e.calls[sync] != 0 {
		return e.calls[sync] - 1
	}
	id := e.x.call(e.s, name(sync))
	if int(sync) >= len(e.calls) {
		e.calls = append(e.calls, make([]CallID, int(sync)+1-len(e.calls))...)
	}
	e.calls[sync] = id + 1
	return id
}

// SegmentTables are a result's segments as it keeps them: the encoded run
// of every gap and the tables its kinds index. A rank summary carries them
// whole: named, every segment repeats its stack's names, which for a
// long trace made a summary hundreds of megabytes.
type SegmentTables struct {
	// Data holds the gaps' runs (see segments); Spans[i] bounds gap i's.
	Data  []byte   `json:"data"`
	Spans [][2]int `json:"spans"`
	// Kinds are a segment's stack, call and cause; Stacks and Calls the
	// names they index.
	Kinds  [][3]uint32 `json:"kinds"`
	Stacks [][]string  `json:"stacks"`
	Calls  []string    `json:"calls"`
}

// SegmentTables returns r's segments in the form SetSegmentTables takes.
func (r *Result) SegmentTables() *SegmentTables {
	r.segs.init()
	t := &SegmentTables{Data: r.segs.data, Stacks: r.segs.stacks, Calls: r.segs.calls}
	for _, k := range r.segs.kinds {
		t.Kinds = append(t.Kinds, [3]uint32{uint32(k.stack), uint32(k.call), uint32(k.cause)})
	}
	for i := range r.Gaps {
		t.Spans = append(t.Spans, [2]int{r.Gaps[i].segLo, r.Gaps[i].segHi})
	}
	return t
}

// SetSegmentTables gives r's gaps the segments t holds, for a result
// read back (a rank summary). t comes from a file: every run is decoded
// and every index checked first, so that a damaged one is an error here
// and never a wrong segment later.
func (r *Result) SetSegmentTables(t *SegmentTables) error {
	if len(t.Spans) != len(r.Gaps) {
		return fmt.Errorf("segments of %d gaps for %d gaps: expected a run per gap", len(t.Spans), len(r.Gaps))
	}
	if len(t.Stacks) == 0 || len(t.Stacks[0]) != 0 || len(t.Calls) == 0 || t.Calls[0] != "" {
		return errors.New("segment tables without the empty stack and call first")
	}
	kinds := make([]segKind, len(t.Kinds))
	for i, k := range t.Kinds {
		if int(k[0]) >= len(t.Stacks) || int(k[1]) >= len(t.Calls) || k[2] >= uint32(NumCauses) {
			return fmt.Errorf("segment kind %d (%v) indexes past its tables", i, k)
		}
		kinds[i] = segKind{stack: StackID(k[0]), call: CallID(k[1]), cause: Cause(k[2])}
	}
	for i, sp := range t.Spans {
		if sp[0] < 0 || sp[0] > sp[1] || sp[1] > len(t.Data) {
			return fmt.Errorf("segments of gap %d at [%d, %d) of %d bytes", i, sp[0], sp[1], len(t.Data))
		}
		if err := checkRun(t.Data[sp[0]:sp[1]], len(kinds), r.Gaps[i].Dur); err != nil {
			return fmt.Errorf("segments of gap %d: %w", i, err)
		}
	}
	r.segs = segments{data: t.Data, kinds: kinds, stacks: t.Stacks, calls: t.Calls}
	for i := range r.Gaps {
		r.Gaps[i].segLo, r.Gaps[i].segHi = t.Spans[i][0], t.Spans[i][1]
	}
	return nil
}

// checkRun checks that data is a run of whole segments (see segments)
// whose kinds are below kinds and whose lengths fit in a gap of dur.
func checkRun(data []byte, kinds int, dur int64) error {
	for len(data) > 0 {
		kind, _, d, rest, ok := nextSegment(data)
		switch {
		case !ok:
			return errors.New("a segment is cut short")
		case kind >= uint64(kinds):
			return errors.New("a segment's kind is past the kinds")
		case d > uint64(max(dur, 0)):
			return errors.New("a segment is longer than its gap")
		}
		data = rest
	}
	return nil
}
