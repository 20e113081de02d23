package trace

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/tracegap/tracegap/internal/human"
)

// Builder accumulates tracks and events while a reader walks its input, and
// produces a sorted, relative-time Trace with Finish. Readers give absolute
// times in nanoseconds; Finish rebases them on the earliest event.
type Builder struct {
	strings []string
	index   map[string]StrID
	recent  *[1 << recentBits]recentString
	tracks  []Track
	keys    map[string]int32
	// Events are kept in fixed-size chunks while they come: a single
	// growing slice would copy tens of millions of events at each growth
	// and, while it does, hold the old and the new array at once.
	// Finish gathers the chunks into one slice grouped by track.
	chunks [][]Event
	cur    []Event
	// stage holds each track's latest events, fewer than blockEvents:
	// events are stored in blocks of one track, which Finish groups by
	// track moving whole blocks, in order through memory.
	stage [][]Event
	// runs is set by GrowRuns: the reader adds each track's events
	// together, so they are stored as they come, unstaged, and Finish
	// needs no grouping.
	runs bool
	// order gives the stored events their tracks, which an Event does
	// not hold: the track of each run of them, in storage order (the
	// chunks, then cur). Events are stored in blocks or runs of one
	// track, so it stays short, an entry a block or a run at most; Finish
	// drops it. unordered is set once a run's track was below the one
	// before, when Finish must group the events.
	order     []run
	unordered bool
	n         int
	// pairs holds the (name, category) pairs of events added by AddCat
	// with a category, and pairIDs indexes it. While building, such an
	// event's Name holds ^k, for pairs[k], so that its category moves with
	// it through grouping and sorting at no cost to the events of sources
	// without categories; Finish splits the pairs into Name and
	// Trace.Cats. A StrID is far below any ^k: the string table is
	// bounded well under 2^31 strings.
	pairs       []namedCat
	pairIDs     map[namedCat]StrID
	recentPairs *[1 << recentPairBits]recentPair

	minTime int64
	warn    []string
	// dropped counts events dropped, by reason, so that one warning per
	// reason is kept however many events it hits.
	dropped   map[string]int
	dropOrder []string
	// maxTracks and maxStrings bound the tracks and the string table
	// (SetLimits); err is the first bound passed.
	maxTracks, maxStrings int
	err                   error

	// Meta is copied into the trace by Finish.
	Meta map[string]string
	// copyBytes becomes Trace.CopyBytes, wideCorrs Trace.WideCorrs;
	// wideCorr finds a wide id's key (see Corr).
	copyBytes map[uint32]int64
	wideCorrs []uint64
	wideCorr  map[uint64]uint32
	// cutDurs counts the durations SetDur cut to MaxDur.
	cutDurs int
	// cutTracks counts the track names cut to MaxTrackName, cutEvents
	// holds the names cut to MaxEventName (see names.go).
	cutTracks int
	cutEvents map[StrID]bool
	// Truncated and Invalid are copied into the trace by Finish.
	Truncated, Invalid bool
}

// run is a stretch of stored events of one track.
type run struct {
	track int32
	n     int
}

// namedCat is an event's name and category.
type namedCat struct{ name, cat StrID }

// recentString is a string interned lately and its StrID.
type recentString struct {
	s  string
	id StrID
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{
		strings: []string{""},
		index:   map[string]StrID{"": 0},
		recent:  new([1 << recentBits]recentString),
		keys:    map[string]int32{},
		minTime: math.MaxInt64,
		dropped: map[string]int{},
		Meta:    map[string]string{},
	}
}

// SetLimits bounds the tracks and distinct strings the builder takes to
// opt.MaxTracks and opt.MaxStrings (0: the defaults). Past a bound, Track
// and Intern stop growing the builder and Err reports the bound; the
// reader checks Err as it checks its event count, and stops.
func (b *Builder) SetLimits(opt Options) {
	b.maxTracks = cmp.Or(max(opt.MaxTracks, 0), DefaultMaxTracks)
	b.maxStrings = cmp.Or(max(opt.MaxStrings, 0), DefaultMaxStrings)
}

// Err returns the error of the first bound that SetLimits set and the
// input passed, or nil.
func (b *Builder) Err() error { return b.err }

// Intern returns the StrID of s, adding it to the table on first use.
func (b *Builder) Intern(s string) StrID {
	s, cut := cutName(s, MaxEventName)
	if id, ok := b.index[s]; ok {
		if cut {
			b.markCut(id)
		}
		return id
	}
	if b.maxStrings > 0 && len(b.strings) > b.maxStrings {
		if b.err == nil {
			b.err = Limitf("more than %d distinct names (raise --max-strings if the trace is genuine)", b.maxStrings)
		}
		return 0
	}
	id := StrID(len(b.strings))
	s = cloneString(s)
	b.strings = append(b.strings, s)
	b.index[s] = id
	if cut {
		b.markCut(id)
	}
	return id
}

// InternBytes is Intern for a byte slice; it allocates only for a string
// not seen before.
func (b *Builder) InternBytes(s []byte) StrID {
	// A trace repeats a few hundred names millions of times: a small
	// table, indexed by a hash of a string's ends that is cheaper than the
	// map's, answers most lookups with one comparison.
	c := &b.recent[recentSlot(s)]
	if c.s == string(s) { // an empty slot holds "", whose StrID is 0
		return c.id
	}
	id, ok := b.index[string(s)] // no allocation: map lookup of string(bytes)
	if !ok {
		// Intern cuts a long name after its first MaxEventName bytes:
		// only those are copied.
		id = b.Intern(string(s[:min(len(s), MaxEventName+1)]))
	}
	c.s, c.id = b.strings[id], id
	return id
}

// recentBits is the log2 of the number of recently interned strings kept.
const recentBits = 10

// recentSlot returns where s is kept among the recently interned strings:
// a hash of its length and its first and last eight bytes.
func recentSlot(s []byte) int {
	n := len(s)
	var h uint64
	if n >= 8 {
		h = binary.LittleEndian.Uint64(s) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(s[n-8:]), 29)
	} else {
		for _, c := range s {
			h = h<<8 | uint64(c)
		}
	}
	return int(((h ^ uint64(n)) * 0x9e3779b97f4a7c15) >> (64 - recentBits))
}

func cloneString(s string) string { return string([]byte(s)) }

// Str returns the string for id.
func (b *Builder) Str(id StrID) string { return b.strings[id] }

// Track returns the index of the track with the given key, creating it from
// t on first use. The key is the reader's own identity for the track (for
// example "pid/tid"); t's Lo and Hi are ignored.
func (b *Builder) Track(key string, t Track) int32 {
	if i, ok := b.keys[key]; ok {
		return i
	}
	if b.maxTracks > 0 && len(b.tracks) >= b.maxTracks {
		if b.err == nil {
			b.err = Limitf("more than %d tracks (threads, streams, lines) (raise --max-tracks if the trace is genuine)", b.maxTracks)
		}
		return int32(len(b.tracks) - 1) // a valid index until the reader stops
	}
	i := int32(len(b.tracks))
	t.Device, t.Process = b.TrackName(t.Device), b.TrackName(t.Process)
	t.Thread, t.Name = b.TrackName(t.Thread), b.TrackName(t.Name)
	b.tracks = append(b.tracks, t)
	b.keys[key] = i
	return i
}

// LookupTrack returns the index of the track with the given key.
func (b *Builder) LookupTrack(key string) (int32, bool) {
	i, ok := b.keys[key]
	return i, ok
}

// TrackAt gives access to a track already created, so that a reader can
// name it when metadata arrives after its events.
func (b *Builder) TrackAt(i int32) *Track { return &b.tracks[i] }

// CopyBytes records that the copy of Event.Corr corr moved n bytes (see
// Trace.CopyBytes); a copy without a correlation id cannot be told and
// is not recorded.
func (b *Builder) CopyBytes(corr uint32, n int64) {
	if corr == 0 || n <= 0 {
		return
	}
	if b.copyBytes == nil {
		b.copyBytes = map[uint32]int64{}
	}
	b.copyBytes[corr] = n
}

// Corr returns the Event.Corr of correlation id id: id itself below
// WideCorr; else WideCorr plus the index of id among the wide ids met so
// far, the same for the same id. Profilers count ids up from a small
// number, so the map is for odd traces only. Wide ids count against the
// limit on distinct strings, as each costs about as much; past it, or
// past the 2^31 keys there are, Corr returns 0 and Err says so.
func (b *Builder) Corr(id uint64) uint32 {
	if id < WideCorr {
		return uint32(id)
	}
	if k, ok := b.wideCorr[id]; ok {
		return k
	}
	n := len(b.wideCorrs)
	if n >= maxWideCorrs || b.maxStrings > 0 && n >= b.maxStrings {
		if b.err == nil {
			b.err = Limitf("more than %d distinct correlation ids of 2^31 and above (raise --max-strings if the trace is genuine)", n)
		}
		return 0
	}
	if b.wideCorr == nil {
		b.wideCorr = map[uint64]uint32{}
	}
	k := uint32(WideCorr) + uint32(n)
	b.wideCorr[id] = k
	b.wideCorrs = append(b.wideCorrs, id)
	return k
}

// maxWideCorrs is how many keys there are for wide correlation ids: those
// from WideCorr to 2^32-1, less one so that it fits an int32.
const maxWideCorrs = 1<<31 - 1

// SetDur sets the duration of e to d as Event.SetDur does, counting a
// duration longer than MaxDur, which it cuts, for a warning.
func (b *Builder) SetDur(e *Event, d int64) {
	if d > MaxDur {
		b.cutDurs++
	}
	e.SetDur(d)
}

// NumTracks returns the number of tracks so far.
func (b *Builder) NumTracks() int { return len(b.tracks) }

// NumEvents returns the number of events added so far.
func (b *Builder) NumEvents() int { return b.n }

// chunkEvents is the size of an event chunk: 1.25 MB, small against a big
// trace and large enough that the chunk list stays short; a whole number
// of blocks.
const chunkEvents = 32 << 10

// blockEvents is the size of a block of one track's events: 10 KB, small
// against a chunk, large enough that moving a block costs a copy and not
// the cache misses of moving its events one by one.
const blockEvents = 256

// Add appends an event of track whose Start is an absolute time in
// nanoseconds.
func (b *Builder) Add(track int32, e Event) {
	if e.Start < b.minTime {
		b.minTime = e.Start
	}
	b.n++
	if b.runs {
		b.note(track, 1)
		if len(b.cur) == cap(b.cur) {
			b.newChunk(chunkEvents)
		}
		b.cur = append(b.cur, e)
		return
	}
	if int(track) >= len(b.stage) {
		b.stage = append(b.stage, make([][]Event, int(track)+1-len(b.stage))...)
	}
	st := append(b.stage[track], e)
	if len(st) < blockEvents {
		b.stage[track] = st
		return
	}
	b.store(track, st)
	b.stage[track] = st[:0]
}

// AddCat is Add for an event with a category, which Finish keeps in
// Trace.Cats; a category of 0 is none. A trace whose events all come
// through Add has no categories, and its Cats is nil.
func (b *Builder) AddCat(track int32, e Event, cat StrID) {
	if cat != 0 {
		e.Name = b.pair(e.Name, cat)
	}
	b.Add(track, e)
}

// pair returns what the Name of an event named name, of category cat,
// holds until Finish (see Builder.pairs).
func (b *Builder) pair(name, cat StrID) StrID {
	p := namedCat{name, cat}
	if b.pairIDs == nil {
		b.pairIDs = map[namedCat]StrID{}
		b.recentPairs = new([1 << recentPairBits]recentPair)
	}
	// A trace repeats a few hundred pairs millions of times: a small
	// table indexed by a hash of the pair answers most lookups without
	// the map's hashing. An empty slot holds no category, never asked
	// for.
	c := &b.recentPairs[(uint64(name)<<32|uint64(cat))*0x9e3779b97f4a7c15>>(64-recentPairBits)]
	if c.p == p {
		return c.id
	}
	k, ok := b.pairIDs[p]
	if !ok {
		// Pairs cost memory as names do (hostile input can make every
		// one distinct), so they count against the same bound.
		if b.maxStrings > 0 && len(b.pairs) >= b.maxStrings {
			if b.err == nil {
				b.err = Limitf("more than %d distinct name and category pairs (raise --max-strings if the trace is genuine)", b.maxStrings)
			}
			return name
		}
		k = StrID(len(b.pairs))
		b.pairs = append(b.pairs, p)
		b.pairIDs[p] = k
	}
	c.p, c.id = p, ^k
	return ^k
}

// recentPairBits is the log2 of the number of recent pairs kept.
const recentPairBits = 8

// recentPair is a pair looked up lately and what Name holds for it.
type recentPair struct {
	p  namedCat
	id StrID
}

// AddTrack appends evs, events of track in the order they came, as Add
// would one at a time: their Start is an absolute time in nanoseconds. A
// reader that decodes a run of one track's events (an XPlane line) adds
// them in one call, and whole blocks of them are stored with one copy
// instead of passing through the track's stage. evs is not kept.
func (b *Builder) AddTrack(track int32, evs []Event) {
	if len(evs) == 0 {
		return
	}
	lo := b.minTime
	for i := range evs {
		lo = min(lo, evs[i].Start)
	}
	b.minTime = lo
	b.n += len(evs)
	if b.runs {
		b.note(track, len(evs))
		b.addRun(evs)
		return
	}
	if int(track) >= len(b.stage) {
		b.stage = append(b.stage, make([][]Event, int(track)+1-len(b.stage))...)
	}
	st := b.stage[track]
	if len(st) > 0 { // fill the staged block first
		k := min(blockEvents-len(st), len(evs))
		st, evs = append(st, evs[:k]...), evs[k:]
		if len(st) < blockEvents {
			b.stage[track] = st
			return
		}
		b.store(track, st)
		st = st[:0]
	}
	for ; len(evs) >= blockEvents; evs = evs[blockEvents:] {
		b.store(track, evs[:blockEvents])
	}
	b.stage[track] = append(st, evs...)
}

// note notes that n events of track are stored next (see Builder.order).
func (b *Builder) note(track int32, n int) {
	if k := len(b.order) - 1; k >= 0 {
		if last := &b.order[k]; last.track == track {
			last.n += n
			return
		} else if track < last.track {
			b.unordered = true
		}
	}
	b.order = append(b.order, run{track, n})
}

// addRun stores evs as they are.
func (b *Builder) addRun(evs []Event) {
	if cap(b.cur)-len(b.cur) < len(evs) {
		b.newChunk(max(chunkEvents, len(evs)))
	}
	b.cur = append(b.cur, evs...)
}

// GrowRuns is Grow for a reader that adds each track's events together,
// in one run of AddTrack calls, as XPlane's lines hold them: the events are
// then stored as they come, with no staging by track. Finish groups them
// like any others if the promise is broken, only slower. n may be an
// estimate: room made and never used costs address space, not memory.
func (b *Builder) GrowRuns(n int) {
	if b.n == 0 {
		b.runs = true
	}
	b.Grow(n)
}

// store appends a block of events of track to the current chunk, or to a
// new one.
func (b *Builder) store(track int32, blk []Event) {
	b.note(track, len(blk))
	if cap(b.cur)-len(b.cur) < len(blk) {
		b.newChunk(chunkEvents)
	}
	b.cur = append(b.cur, blk...)
}

func (b *Builder) newChunk(n int) {
	if len(b.cur) > 0 {
		b.chunks = append(b.chunks, b.cur)
	}
	b.cur = make([]Event, 0, n)
}

// Grow makes room for n more events, for a reader that knows or can
// estimate how many are coming. The events so far and the n to come are
// then kept in one slice, which Finish groups by track in place: it needs
// no second copy of the events, which halves the peak memory of a big
// trace.
func (b *Builder) Grow(n int) {
	if n <= cap(b.cur)-len(b.cur) {
		return
	}
	if b.n > n/8 { // too late to gather cheaply: start a chunk
		b.newChunk(max(n, chunkEvents))
		return
	}
	cur := make([]Event, 0, b.n+n)
	for _, c := range b.chunks {
		cur = append(cur, c...)
	}
	b.chunks, b.cur = nil, append(cur, b.cur...)
}

// Warn records a warning.
func (b *Builder) Warn(format string, args ...any) {
	b.warn = append(b.warn, fmt.Sprintf(format, args...))
}

// Drop counts an event dropped for reason; Finish turns the counts into one
// warning per reason.
func (b *Builder) Drop(reason string) {
	if b.dropped[reason] == 0 {
		b.dropOrder = append(b.dropOrder, reason)
	}
	b.dropped[reason]++
}

// Dropped returns how many events were dropped for reason.
func (b *Builder) Dropped(reason string) int { return b.dropped[reason] }

// Drops returns how many events were dropped in all, and the reason of the
// first: for the error of a trace none of whose events was usable.
func (b *Builder) Drops() (n int, first string) {
	for _, r := range b.dropOrder {
		n += b.dropped[r]
	}
	if n > 0 {
		first = b.dropOrder[0]
	}
	return n, first
}

// Finish sorts the events by track and start, rebases times on the earliest
// event and returns the trace. The Builder must not be used afterwards.
func (b *Builder) Finish() *Trace {
	t := &Trace{
		Strings:   b.strings,
		Tracks:    b.tracks,
		Meta:      b.Meta,
		CopyBytes: b.copyBytes,
		WideCorrs: b.wideCorrs,
		Warnings:  b.warn,
		Truncated: b.Truncated,
		Invalid:   b.Invalid,
	}
	for _, r := range b.dropOrder {
		t.Warnings = append(t.Warnings, fmt.Sprintf("dropped %s: %s", human.Count(b.dropped[r], "event"), r))
	}
	if b.cutDurs > 0 {
		t.Warnings = append(t.Warnings, fmt.Sprintf("cut %d events lasting longer than 78 hours, the most an event holds, to 78 hours", b.cutDurs))
	}
	if w := b.cutWarning(); w != "" {
		t.Warnings = append(t.Warnings, w)
	}
	lo := b.trackStarts()
	t.Events = b.gather()
	if len(t.Events) > 0 {
		t.StartNs = b.minTime
	}
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		tr.Lo, tr.Hi = lo[i], lo[i+1]
		if evs := t.Events[tr.Lo:tr.Hi]; len(evs) > 0 && !rebase(evs, b.minTime) {
			sortTrack(evs)
		}
	}
	t.Cats = b.splitPairs(t.Events)
	b.chunks, b.cur, b.strings, b.tracks, b.order = nil, nil, nil, nil, nil
	b.pairs, b.pairIDs, b.recentPairs = nil, nil, nil
	b.wideCorr = nil
	return t
}

// rebase subtracts base from the start of one track's events, and reports
// whether they are in track order: one pass through memory for what would
// take two.
func rebase(evs []Event, base int64) (sorted bool) {
	sorted = true
	evs[0].Start -= base
	for n := 1; n < len(evs); n++ {
		evs[n].Start -= base
		if after(&evs[n-1], &evs[n]) {
			sorted = false
		}
	}
	return sorted
}

// splitPairs gives the events added with a category their name back, and
// returns their categories, parallel to evs; nil when no event had one.
func (b *Builder) splitPairs(evs []Event) []StrID {
	if len(b.pairs) == 0 {
		return nil
	}
	cats := make([]StrID, len(evs))
	for i := range evs {
		if k := ^evs[i].Name; int(k) < len(b.pairs) {
			p := b.pairs[k]
			evs[i].Name, cats[i] = p.name, p.cat
		}
	}
	return cats
}

// sortTrack sorts one track's events by start, the longer first among
// equal starts, keeping the input order of events equal in both.
//
// Readers add a track's events nearly in order: XPlane lines are sorted;
// Kineto writes a thread's operators each when it ends, a few places after
// its own start order, then the thread's runtime calls, in order, over the
// same time. So the events are taken as runs, each kept in order by
// inserting an event that comes a little late where it belongs, and a new
// run begun by one that comes far too late; the runs are then merged in
// turn. That is linear work on such input, where a stable merge sort does
// O(n log² n). Past budgets of moves and of buffer, input far from order,
// the merge sort takes over from the partly sorted slice: every step keeps
// ties in input order, so the result is the same.
func sortTrack(evs []Event) {
	if isSortedTrack(evs) {
		return
	}
	if !sortRuns(evs) {
		slices.SortStableFunc(evs, func(x, y Event) int {
			if c := cmp.Compare(x.Start, y.Start); c != 0 {
				return c
			}
			return cmp.Compare(y.Dur(), x.Dur())
		})
	}
}

// Bounds on sortRuns: how far back an event is inserted into its run, and
// how many events may be moved and buffered, beyond a floor, for each
// event of the track.
const (
	nearBy       = 64
	movesPer     = 16
	bufferPer    = 1.0 / 8
	sortRunFloor = 1 << 12
)

// isSortedTrack reports whether evs are in track order.
func isSortedTrack(evs []Event) bool {
	for i := 1; i < len(evs); i++ {
		if after(&evs[i-1], &evs[i]) {
			return false
		}
	}
	return true
}

// after reports whether x sorts after y in a track: it starts later, or at
// the same time and is shorter.
func after(x, y *Event) bool {
	return x.Start > y.Start || x.Start == y.Start && x.Dur() < y.Dur()
}

// sortRuns sorts evs as sortTrack describes and reports whether it did;
// when it did not, evs hold the same events, ties still in input order.
func sortRuns(evs []Event) bool {
	moves := movesPer*len(evs) + sortRunFloor
	var buf []Event
	maxBuf := int(float64(len(evs))*bufferPer) + sortRunFloor
	sorted := 0 // evs[:sorted] is sorted; the run being built starts there
	for i := 1; i <= len(evs); i++ {
		if i < len(evs) && !after(&evs[i-1], &evs[i]) {
			continue
		}
		if i < len(evs) {
			j := i - 1
			for j > sorted && i-j < nearBy && after(&evs[j-1], &evs[i]) {
				j--
			}
			if j == sorted || !after(&evs[j-1], &evs[i]) { // a little late
				e := evs[i]
				copy(evs[j+1:i+1], evs[j:i])
				evs[j] = e
				if moves -= i - j; moves < 0 {
					return false
				}
				continue
			}
		}
		// evs[sorted:i] is a run: merge it into the sorted events.
		n, ok := merge(evs[:i], sorted, &buf, maxBuf)
		if moves -= n; !ok || moves < 0 {
			return false
		}
		sorted = i
	}
	return true
}

// merge merges the sorted evs[:mid] and evs[mid:], through buf, and
// returns how many events it moved; ok is false, with nothing moved, if it
// would need more than maxBuf events of buffer.
func merge(evs []Event, mid int, buf *[]Event, maxBuf int) (moved int, ok bool) {
	if mid == 0 || mid == len(evs) || !after(&evs[mid-1], &evs[mid]) {
		return 0, true
	}
	// Only the left events after the right's first, and the right events
	// before the left's last, change places.
	lo := mid - sort.Search(mid, func(k int) bool { return !after(&evs[mid-1-k], &evs[mid]) })
	hi := mid + sort.Search(len(evs)-mid, func(k int) bool { return !after(&evs[mid-1], &evs[mid+k]) })
	left, right := evs[lo:mid], evs[mid:hi]
	if min(len(left), len(right)) > maxBuf {
		return 0, false
	}
	if len(left) <= len(right) {
		b := append((*buf)[:0], left...)
		*buf = b
		k, i, j := lo, 0, 0
		for i < len(b) && j < len(right) {
			if after(&b[i], &right[j]) {
				evs[k] = right[j]
				j++
			} else {
				evs[k] = b[i]
				i++
			}
			k++
		}
		copy(evs[k:], b[i:])
	} else {
		b := append((*buf)[:0], right...)
		*buf = b
		k, i, j := hi-1, len(left)-1, len(b)-1
		for i >= 0 && j >= 0 {
			if after(&left[i], &b[j]) {
				evs[k] = left[i]
				i--
			} else {
				evs[k] = b[j]
				j--
			}
			k--
		}
		copy(evs[lo:k+1], b[:j+1])
	}
	return hi - lo, true
}

// gather returns all events in one slice, grouped by track in track order
// and, within a track, in the order they were added. Events that all fit
// the current slice are grouped in place, by blocks; otherwise a counting
// sort by track copies them once, releasing each chunk once copied.
func (b *Builder) gather() []Event {
	if !b.runs && len(b.chunks) == 0 && cap(b.cur) >= b.n && len(b.cur)%blockEvents == 0 {
		return b.groupBlocks()
	}
	for t, st := range b.stage { // the last events of each track, last
		if len(st) > 0 {
			b.note(int32(t), len(st))
		}
		for _, e := range st {
			if len(b.cur) == cap(b.cur) {
				b.newChunk(chunkEvents)
			}
			b.cur = append(b.cur, e)
		}
		b.stage[t] = nil
	}
	if len(b.chunks) == 0 {
		if b.unordered {
			b.groupInPlace(b.cur)
		}
		return b.cur
	}
	b.chunks = append(b.chunks, b.cur)
	b.cur = nil
	next := b.trackStarts()
	out := make([]Event, b.n)
	r, left := -1, 0 // the run being copied, and its events not yet copied
	for k, c := range b.chunks {
		for len(c) > 0 {
			for left == 0 {
				r++
				left = b.order[r].n
			}
			n, tr := min(left, len(c)), b.order[r].track
			copy(out[next[tr]:], c[:n])
			next[tr] += n
			left -= n
			c = c[n:]
		}
		b.chunks[k] = nil
	}
	return out
}

// groupBlocks groups the events by track in b.cur, which holds whole
// blocks and has room for the events still in b.stage. The blocks are
// moved into track order along the cycles of their permutation, then each
// track's blocks are moved up to make room for its staged events, the last
// track first.
func (b *Builder) groupBlocks() []Event {
	evs := b.cur
	nb := len(evs) / blockEvents
	// Each track's first block, once grouped; b.order holds runs of whole
	// blocks, as they were stored.
	first := make([]int, len(b.tracks)+1)
	for _, r := range b.order {
		first[r.track+1] += r.n / blockEvents
	}
	for t := 1; t < len(first); t++ {
		first[t] += first[t-1]
	}
	next := slices.Clone(first)
	dest := make([]int32, 0, nb)
	for _, r := range b.order {
		for range r.n / blockEvents {
			dest = append(dest, int32(next[r.track]))
			next[r.track]++
		}
	}
	tmp := make([]Event, blockEvents)
	for k := range nb {
		for d := int(dest[k]); d != k; d = int(dest[k]) {
			x, y := evs[k*blockEvents:(k+1)*blockEvents], evs[d*blockEvents:(d+1)*blockEvents]
			copy(tmp, x)
			copy(x, y)
			copy(y, tmp)
			dest[k], dest[d] = dest[d], dest[k]
		}
	}
	evs = evs[:b.n]
	shift := b.n - len(b.cur) // staged events of the tracks up to t
	for t := len(b.tracks) - 1; t >= 0; t-- {
		var st []Event
		if t < len(b.stage) {
			st = b.stage[t]
		}
		shift -= len(st)
		lo, hi := first[t]*blockEvents, first[t+1]*blockEvents
		copy(evs[lo+shift:], evs[lo:hi])
		copy(evs[hi+shift:], st)
	}
	b.stage = nil
	return evs
}

// trackStarts returns where each track's events start once grouped, and
// where the last ends: the stored and the staged events, counted by track.
func (b *Builder) trackStarts() []int {
	next := make([]int, len(b.tracks)+1)
	for _, r := range b.order {
		next[r.track+1] += r.n
	}
	for t, st := range b.stage {
		next[t+1] += len(st)
	}
	for i := 1; i < len(next); i++ {
		next[i] += next[i-1]
	}
	return next
}

// groupInPlace is the counting sort of gather done within evs, all the
// builder's events, stored as b.order says: each event's place is worked
// out first (4 bytes an event, against the 24 of a copy), then the events
// are swapped along the permutation's cycles.
func (b *Builder) groupInPlace(evs []Event) {
	next := b.trackStarts()
	dest := make([]int32, 0, len(evs))
	for _, r := range b.order {
		for range r.n {
			dest = append(dest, int32(next[r.track]))
			next[r.track]++
		}
	}
	for i := range evs {
		for d := int(dest[i]); d != i; d = int(dest[i]) {
			evs[i], evs[d] = evs[d], evs[i]
			dest[i], dest[d] = dest[d], dest[i]
		}
	}
}
