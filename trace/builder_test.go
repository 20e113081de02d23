package trace

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// placed is an event and the track it is added to, which an Event does
// not hold, and the category it is added with.
type placed struct {
	Event
	track int32
	cat   StrID
}

// TestFinishOrder checks Finish against the documented order, computed the
// plain way: a stable sort of all events by track, start and longer first,
// for traces that fit one chunk, span several, come in order or not. The
// tracks must hold their own events, and the categories follow their
// events through the sort.
func TestFinishOrder(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		tracks int
		order  string // "in order", "by end" (as Kineto writes), "half reversed", else shuffled
		grow   int    // room asked for after growAt events
		growAt int
	}{
		{"empty", 0, 1, "shuffled", 0, 0},
		{"one chunk, shuffled", 1000, 5, "shuffled", 0, 0},
		{"one chunk, in order", 1000, 5, "in order", 0, 0},
		{"grown, in order", 3 * chunkEvents, 4, "in order", 3 * chunkEvents, 0},
		{"grown, shuffled", 3 * chunkEvents, 6, "shuffled", 3 * chunkEvents, 0},
		{"grown after a chunk and a half, shuffled", 20 * chunkEvents, 5, "shuffled", 18*chunkEvents + 100, chunkEvents + chunkEvents/2},
		{"grown short, shuffled", 3*chunkEvents + 9, 5, "shuffled", 2 * chunkEvents, 100},
		{"grown too late, shuffled", 3 * chunkEvents, 5, "shuffled", chunkEvents, chunkEvents + 1},
		{"many chunks, shuffled", 3*chunkEvents + 17, 7, "shuffled", 0, 0},
		{"many chunks, in order", 2*chunkEvents + 5, 3, "in order", 0, 0},
		{"grown, many small tracks, shuffled", 20000, 300, "shuffled", 20000, 0},
		{"grown, many small tracks, by end", 20000, 300, "by end", 20000, 0},
		{"grown exactly, by end", 5 * blockEvents, 2, "by end", 5 * blockEvents, 0},
		{"one chunk, by end", 1000, 3, "by end", 0, 0},
		{"grown, by end", 3 * chunkEvents, 3, "by end", 3 * chunkEvents, 0},
		{"one chunk, half reversed", 1000, 2, "half reversed", 0, 0},
		{"grown, half reversed", 3 * chunkEvents, 2, "half reversed", 3 * chunkEvents, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.n > 4*chunkEvents {
				t.Skip("sorts 20 chunks of events; the smaller cases span chunks too")
			}
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			b := NewBuilder()
			for i := range tc.tracks {
				b.Track(string(rune('a'+i)), Track{})
			}
			// Categories on two events in three, none on the third; the
			// names repeat across categories.
			cats := []StrID{0, b.Intern("kernel"), b.Intern("cpu_op")}
			names := []StrID{b.Intern("x"), b.Intern("y")}
			evs := make([]placed, tc.n)
			for i := range evs {
				// Few distinct starts and durations, so that ties are
				// common and stability is tested; Corr tells events apart.
				e := withDur(Event{Start: 1000 + r.Int64N(50), Corr: uint32(i), Name: names[i%2]}, r.Int64N(4))
				evs[i] = placed{e, int32(r.IntN(tc.tracks)), cats[i%3]}
			}
			arrange(evs, tc.order)
			for i, e := range evs {
				if i == tc.growAt {
					b.Grow(tc.grow)
				}
				b.AddCat(e.track, e.Event, e.cat)
			}
			tr := b.Finish()
			want := slices.Clone(evs)
			slices.SortStableFunc(want, finishOrder)
			var min int64
			if len(want) > 0 {
				min = slices.MinFunc(want, func(x, y placed) int { return cmp.Compare(x.Start, y.Start) }).Start
			}
			for i := range want {
				want[i].Start -= min
			}
			if got := place(tr); !slices.Equal(got, want) {
				t.Fatalf("events not in track, start, longer-first order with ties kept in input order, with their tracks and categories")
			}
			if tr.StartNs != min || b.NumEvents() != tc.n {
				t.Errorf("StartNs %d, NumEvents %d; want %d, %d", tr.StartNs, b.NumEvents(), min, tc.n)
			}
		})
	}
}

// arrange puts evs in the order the test case names: sorted as Finish
// sorts ("in order"); by end time, as Kineto writes operators after those
// they enclose ("by end"); by end time, then the second half reversed so
// that sorting starts well and then runs out of its insertion budget
// ("half reversed"); else left shuffled.
func arrange(evs []placed, order string) {
	switch order {
	case "in order":
		slices.SortStableFunc(evs, finishOrder)
	case "by end", "half reversed":
		slices.SortStableFunc(evs, func(x, y placed) int { return cmp.Compare(x.End(), y.End()) })
	}
	if order == "half reversed" {
		slices.Reverse(evs[len(evs)/2:])
	}
}

func finishOrder(x, y placed) int {
	if c := cmp.Compare(x.track, y.track); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Start, y.Start); c != 0 {
		return c
	}
	return cmp.Compare(y.Dur(), x.Dur())
}

// place returns t's events with the track TrackOf says holds them and
// their categories, after checking that the tracks follow each other.
func place(t *Trace) []placed {
	out := make([]placed, len(t.Events))
	lo := 0
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		if tr.Lo != lo || tr.Hi < tr.Lo {
			panic("tracks do not follow each other")
		}
		lo = tr.Hi
	}
	for i, e := range t.Events {
		out[i] = placed{e, int32(t.TrackOf(i)), t.Cat(i)}
	}
	return out
}

// BenchmarkFinish finishes a Kineto-like trace of about a million events:
// six threads interleaved, most events on three of them, each thread's
// operators nested up to six deep and written when they end, after those
// they enclose, in one slice as a reader that estimated its events leaves
// them.
func BenchmarkFinish(b *testing.B) {
	evs := kinetoLike(1 << 20)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		bl := NewBuilder()
		for tr := range 6 {
			bl.Track(string(rune('a'+tr)), Track{})
		}
		bl.Grow(len(evs))
		for _, e := range evs {
			bl.Add(e.track, e.Event)
		}
		b.StartTimer()
		bl.Finish()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

// kinetoLike returns about n events on six tracks, in the order Kineto
// writes them.
func kinetoLike(n int) []placed {
	r := rand.New(rand.NewPCG(1, 2))
	var tracks [6][]placed
	var clock [6]int64
	for total := 0; total < n; {
		tr := r.IntN(3)
		if r.IntN(100) == 0 {
			tr = 3 + r.IntN(3)
		}
		before := len(tracks[tr])
		tracks[tr], clock[tr] = nest(r, tracks[tr], int32(tr), clock[tr], 6)
		total += len(tracks[tr]) - before
	}
	// Interleave the threads in runs, as their buffers are flushed.
	var evs []placed
	for {
		tr := r.IntN(6)
		if len(tracks[tr]) == 0 {
			if len(tracks[0])+len(tracks[1])+len(tracks[2])+len(tracks[3])+len(tracks[4])+len(tracks[5]) == 0 {
				return evs
			}
			continue
		}
		k := min(len(tracks[tr]), 1+r.IntN(8))
		evs = append(evs, tracks[tr][:k]...)
		tracks[tr] = tracks[tr][k:]
	}
}

// nest appends an operator starting at start and, before it, the operators
// it encloses, to depth levels; it returns the time it ends.
func nest(r *rand.Rand, evs []placed, tr int32, start int64, depth int) ([]placed, int64) {
	t := start + r.Int64N(3)
	if depth > 0 {
		for range r.IntN(5) {
			evs, t = nest(r, evs, tr, t, depth-1)
		}
	}
	end := t + 1 + r.Int64N(5)
	return append(evs, placed{Event: withDur(Event{Start: start, Corr: uint32(len(evs))}, end-start), track: tr}), end
}

// TestInternBytes checks that the table of recent strings in front of the
// index never changes an answer: strings that share their ends, their
// length or their slot, asked for in turn and again, get the StrID Intern
// gives them.
func TestInternBytes(t *testing.T) {
	strs := []string{"", "a", "aten::empty", "aten::zeros", "cudaLaunchKernel",
		"void kernel<1>(float*, int)", "void kernel<2>(float*, int)", "abcdefgh", "abcdefgh" + "abcdefgh"}
	for i := range 3000 { // more strings than the table has slots
		strs = append(strs, "name"+string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)))
	}
	b := NewBuilder()
	for round := range 3 {
		for _, s := range strs {
			id := b.InternBytes([]byte(s))
			if got := b.Str(id); got != s {
				t.Fatalf("round %d: InternBytes(%q) = %d, which is %q", round, s, id, got)
			}
			if want := b.Intern(s); id != want {
				t.Fatalf("round %d: InternBytes(%q) = %d, Intern gives %d", round, s, id, want)
			}
		}
	}
	if got, want := len(b.strings), len(strs); got != want { // each once, "" from the start
		t.Errorf("%d strings in the table, want %d", got, want)
	}
}

// TestAddTrack checks that adding runs of one track's events with
// AddTrack builds the trace that adding them one by one with Add does,
// for runs shorter than a block, around a block and over many blocks,
// into a grown builder or into chunks.
func TestAddTrack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		maxRun int
		grow   int // room made first: 0 none, else n+grow-1 (an estimate that may fall short)
		runs   bool
		// ordered makes each track's events one run, tracks in order, as
		// GrowRuns expects of its reader.
		ordered bool
	}{
		{name: "single events, grown", n: 5000, maxRun: 1, grow: 1},
		{name: "short runs, grown", n: 20000, maxRun: 40, grow: 1},
		{name: "runs around a block, grown", n: 20000, maxRun: 2 * blockEvents, grow: 1},
		{name: "long runs, grown", n: 3 * chunkEvents, maxRun: 5000, grow: 1},
		{name: "short runs, chunks", n: 3*chunkEvents + 7, maxRun: 40},
		{name: "long runs, chunks", n: 3*chunkEvents + 7, maxRun: 5000},
		{name: "in runs, tracks in order", n: 20000, maxRun: 5000, grow: 1, runs: true, ordered: true},
		{name: "in runs, tracks resumed", n: 20000, maxRun: 300, grow: 1, runs: true},
		{name: "in runs, room short", n: 3*chunkEvents + 7, maxRun: 5000, grow: -9000, runs: true, ordered: true},
		{name: "in runs, room short, resumed", n: 3*chunkEvents + 7, maxRun: 700, grow: -9000, runs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := testRuns(tc.n, tc.maxRun, tc.ordered)
			build := func(add func(b *Builder, run trackRun), grow bool) *Trace {
				b := NewBuilder()
				for i := range 5 {
					b.Track(string(rune('a'+i)), Track{})
				}
				switch {
				case grow && tc.grow != 0 && tc.runs:
					b.GrowRuns(tc.n + tc.grow - 1)
				case grow && tc.grow != 0:
					b.Grow(tc.n + tc.grow - 1)
				}
				for _, run := range runs {
					add(b, trackRun{run.track, slices.Clone(run.evs)})
				}
				return b.Finish()
			}
			want := build(addEach, false)
			adders := map[string]func(b *Builder, run trackRun){
				"Add":      addEach,
				"AddTrack": func(b *Builder, run trackRun) { b.AddTrack(run.track, run.evs) },
				// A reader adding a line's events 100 at a time.
				"AddTrack in batches": func(b *Builder, run trackRun) {
					for evs := run.evs; len(evs) > 0; {
						k := min(100, len(evs))
						b.AddTrack(run.track, evs[:k])
						evs = evs[k:]
					}
				},
			}
			for name, add := range adders {
				got := build(add, true)
				if !slices.Equal(got.Events, want.Events) || !slices.Equal(got.Tracks, want.Tracks) || got.StartNs != want.StartNs {
					t.Errorf("%s built a trace other than Add's without room (start %d, want %d)", name, got.StartNs, want.StartNs)
				}
			}
		})
	}
}

// trackRun is a run of events of one track.
type trackRun struct {
	track int32
	evs   []Event
}

// testRuns makes n events in runs of one track each, of at most maxRun
// events; ordered puts each track's events in one run, tracks in order.
func testRuns(n, maxRun int, ordered bool) []trackRun {
	r := rand.New(rand.NewPCG(2, uint64(n)))
	var runs []trackRun
	for k := 0; k < n; {
		run := trackRun{int32(r.IntN(5)), make([]Event, min(1+r.IntN(maxRun), n-k))}
		for i := range run.evs {
			run.evs[i] = withDur(Event{Start: 1000 + r.Int64N(1e6), Corr: uint32(k + i)}, r.Int64N(4))
		}
		runs = append(runs, run)
		k += len(run.evs)
	}
	if ordered {
		slices.SortStableFunc(runs, func(x, y trackRun) int { return cmp.Compare(x.track, y.track) })
	}
	return runs
}

func addEach(b *Builder, run trackRun) {
	for _, e := range run.evs {
		b.Add(run.track, e)
	}
}

// TestPairLimit makes every event's (name, category) pair distinct, as a
// hostile file can: pairs past --max-strings are refused like names, and
// the events still build, without their category.
func TestPairLimit(t *testing.T) {
	const names, cats, limit = 4, 5, 12 // 20 pairs from 9 strings (and "")
	b := NewBuilder()
	b.SetLimits(Options{MaxStrings: limit})
	tr := b.Track("t", Track{Kind: TrackHost})
	for n := range names {
		for c := range cats {
			name := b.Intern(string(rune('a' + n)))
			cat := b.Intern(string(rune('A' + c)))
			b.AddCat(tr, withDur(Event{Start: int64(n*cats + c), Name: name}, 1), cat)
		}
	}
	if err := b.Err(); !errors.Is(err, ErrLimit) {
		t.Fatalf("Err() = %v, want the --max-strings limit", err)
	}
	got := b.Finish()
	if len(got.Events) != names*cats {
		t.Fatalf("%d events, want %d", len(got.Events), names*cats)
	}
	kept := 0
	for i, e := range got.Events {
		if got.Str(e.Name) == "" {
			t.Errorf("event %d lost its name", i)
		}
		if got.Cat(i) != 0 {
			kept++
		}
	}
	if kept != limit {
		t.Errorf("%d events kept their category, want the first %d pairs'", kept, limit)
	}
}

// withDur returns e lasting d.
func withDur(e Event, d int64) Event {
	e.SetDur(d)
	return e
}
