package trace

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Builder accumulates tracks and events while a reader walks its input, and
// produces a sorted, relative-time Trace with Finish. Readers give absolute
// times in nanoseconds; Finish rebases them on the earliest event.
type Builder struct {
	strings []string
	index   map[string]StrID
	tracks  []Track
	keys    map[string]int32
	// Events are kept in fixed-size chunks while they come: a single
	// growing slice would copy tens of millions of events at each growth
	// and, while it does, hold the old and the new array at once.
	// Finish gathers the chunks into one slice grouped by track.
	chunks  [][]Event
	cur     []Event
	n       int
	minTime int64
	warn    []string
	// dropped counts events dropped, by reason, so that one warning per
	// reason is kept however many events it hits.
	dropped map[string]int
	order   []string

	// Meta is copied into the trace by Finish.
	Meta map[string]string
	// Truncated is copied into the trace by Finish.
	Truncated bool
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{
		strings: []string{""},
		index:   map[string]StrID{"": 0},
		keys:    map[string]int32{},
		minTime: math.MaxInt64,
		dropped: map[string]int{},
		Meta:    map[string]string{},
	}
}

// Intern returns the StrID of s, adding it to the table on first use.
func (b *Builder) Intern(s string) StrID {
	if id, ok := b.index[s]; ok {
		return id
	}
	id := StrID(len(b.strings))
	s = cloneString(s)
	b.strings = append(b.strings, s)
	b.index[s] = id
	return id
}

// InternBytes is Intern for a byte slice; it allocates only for a string
// not seen before.
func (b *Builder) InternBytes(s []byte) StrID {
	if id, ok := b.index[string(s)]; ok { // no allocation: map lookup of string(bytes)
		return id
	}
	return b.Intern(string(s))
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
	i := int32(len(b.tracks))
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

// NumTracks returns the number of tracks so far.
func (b *Builder) NumTracks() int { return len(b.tracks) }

// NumEvents returns the number of events added so far.
func (b *Builder) NumEvents() int { return b.n }

// chunkEvents is the size of an event chunk: 1.25 MB, small against a big
// trace and large enough that the chunk list stays short.
const chunkEvents = 32 << 10

// Add appends an event whose Start is an absolute time in nanoseconds.
func (b *Builder) Add(e Event) {
	if e.Start < b.minTime {
		b.minTime = e.Start
	}
	if len(b.cur) == cap(b.cur) {
		b.newChunk(chunkEvents)
	}
	b.cur = append(b.cur, e)
	b.n++
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
// trace. A trace whose events all fit, added grouped by track, is
// finished without moving them at all.
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
		b.order = append(b.order, reason)
	}
	b.dropped[reason]++
}

// Dropped returns how many events were dropped for reason.
func (b *Builder) Dropped(reason string) int { return b.dropped[reason] }

// Finish sorts the events by track and start, rebases times on the earliest
// event and returns the trace. The Builder must not be used afterwards.
func (b *Builder) Finish() *Trace {
	t := &Trace{
		Strings:   b.strings,
		Tracks:    b.tracks,
		Events:    b.gather(),
		Meta:      b.Meta,
		Warnings:  b.warn,
		Truncated: b.Truncated,
	}
	for _, r := range b.order {
		t.Warnings = append(t.Warnings, fmt.Sprintf("dropped %d events: %s", b.dropped[r], r))
	}
	if len(t.Events) == 0 {
		return t
	}
	t.StartNs = b.minTime
	for i := range t.Events {
		t.Events[i].Start -= b.minTime
	}
	for i := range t.Tracks {
		t.Tracks[i].Lo, t.Tracks[i].Hi = 0, 0
	}
	for lo := 0; lo < len(t.Events); {
		tr := t.Events[lo].Track
		hi := lo
		for hi < len(t.Events) && t.Events[hi].Track == tr {
			hi++
		}
		sortTrack(t.Events[lo:hi])
		t.Tracks[tr].Lo, t.Tracks[tr].Hi = lo, hi
		lo = hi
	}
	b.chunks, b.cur, b.strings, b.tracks = nil, nil, nil, nil
	return t
}

// sortTrack sorts one track's events by start, the longer first among
// equal starts, keeping the input order of events equal in both. Readers
// mostly add a track's events in order already (XPlane lines are sorted,
// Kineto writes each thread in time order); checking costs a fraction of
// sorting.
func sortTrack(evs []Event) {
	order := func(x, y Event) int {
		if c := cmp.Compare(x.Start, y.Start); c != 0 {
			return c
		}
		return cmp.Compare(y.Dur, x.Dur)
	}
	if !slices.IsSortedFunc(evs, order) {
		slices.SortStableFunc(evs, order)
	}
}

// gather returns all events in one slice, grouped by track in track order
// and, within a track, in the order they were added. Events in a single
// slice are grouped in place; otherwise a counting sort by track copies
// them once, releasing each chunk once copied.
func (b *Builder) gather() []Event {
	byTrack := func(x, y Event) int { return cmp.Compare(x.Track, y.Track) }
	if len(b.chunks) == 0 {
		if !slices.IsSortedFunc(b.cur, byTrack) {
			groupInPlace(b.cur, len(b.tracks))
		}
		return b.cur
	}
	b.chunks = append(b.chunks, b.cur)
	b.cur = nil
	next := trackStarts(b.chunks, len(b.tracks))
	out := make([]Event, b.n)
	for k, c := range b.chunks {
		for i := range c {
			tr := c[i].Track
			out[next[tr]] = c[i]
			next[tr]++
		}
		b.chunks[k] = nil
	}
	return out
}

// trackStarts returns where each track's events start once grouped.
func trackStarts(chunks [][]Event, tracks int) []int {
	next := make([]int, tracks+1)
	for _, c := range chunks {
		for i := range c {
			next[c[i].Track+1]++
		}
	}
	for i := 1; i < len(next); i++ {
		next[i] += next[i-1]
	}
	return next[:tracks]
}

// groupInPlace is the counting sort of gather done within evs: each
// event's place is worked out first (4 bytes an event, against the 40 of
// a copy), then the events are swapped along the permutation's cycles.
func groupInPlace(evs []Event, tracks int) {
	next := trackStarts([][]Event{evs}, tracks)
	dest := make([]int32, len(evs))
	for i := range evs {
		tr := evs[i].Track
		dest[i] = int32(next[tr])
		next[tr]++
	}
	for i := range evs {
		for d := int(dest[i]); d != i; d = int(dest[i]) {
			evs[i], evs[d] = evs[d], evs[i]
			dest[i], dest[d] = dest[d], dest[i]
		}
	}
}
