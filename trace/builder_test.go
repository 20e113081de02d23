package trace

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFinishOrder checks Finish against the documented order, computed the
// plain way: a stable sort of all events by track, start and longer first,
// for traces that fit one chunk, span several, come in order or not.
func TestFinishOrder(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		tracks int
		sorted bool
		grow   int // room asked for after growAt events
		growAt int
	}{
		{"empty", 0, 1, false, 0, 0},
		{"one chunk, shuffled", 1000, 5, false, 0, 0},
		{"one chunk, in order", 1000, 5, true, 0, 0},
		{"grown, in order", 3 * chunkEvents, 4, true, 3 * chunkEvents, 0},
		{"grown, shuffled", 3 * chunkEvents, 6, false, 3 * chunkEvents, 0},
		{"grown after a chunk and a half, shuffled", 20 * chunkEvents, 5, false, 18*chunkEvents + 100, chunkEvents + chunkEvents/2},
		{"grown short, shuffled", 3*chunkEvents + 9, 5, false, 2 * chunkEvents, 100},
		{"grown too late, shuffled", 3 * chunkEvents, 5, false, chunkEvents, chunkEvents + 1},
		{"many chunks, shuffled", 3*chunkEvents + 17, 7, false, 0, 0},
		{"many chunks, in order", 2*chunkEvents + 5, 3, true, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			evs := make([]Event, tc.n)
			for i := range evs {
				// Few distinct starts and durations, so that ties are
				// common and stability is tested; Corr tells events apart.
				evs[i] = Event{Start: 1000 + r.Int64N(50), Dur: r.Int64N(4), Corr: uint64(i), Track: int32(r.IntN(tc.tracks))}
			}
			if tc.sorted {
				slices.SortStableFunc(evs, finishOrder)
			}
			b := NewBuilder()
			for i := range tc.tracks {
				b.Track(string(rune('a'+i)), Track{})
			}
			for i, e := range evs {
				if i == tc.growAt {
					b.Grow(tc.grow)
				}
				b.Add(e)
			}
			tr := b.Finish()
			want := slices.Clone(evs)
			slices.SortStableFunc(want, finishOrder)
			var min int64
			if len(want) > 0 {
				min = slices.MinFunc(want, func(x, y Event) int { return cmp.Compare(x.Start, y.Start) }).Start
			}
			for i := range want {
				want[i].Start -= min
			}
			if !slices.Equal(tr.Events, want) {
				t.Fatalf("events not in track, start, longer-first order with ties kept in input order")
			}
			for i := range tr.Tracks {
				for _, e := range tr.TrackEvents(i) {
					if e.Track != int32(i) {
						t.Fatalf("track %d holds an event of track %d", i, e.Track)
					}
				}
			}
			if tr.StartNs != min || b.NumEvents() != tc.n {
				t.Errorf("StartNs %d, NumEvents %d; want %d, %d", tr.StartNs, b.NumEvents(), min, tc.n)
			}
		})
	}
}

func finishOrder(x, y Event) int {
	if c := cmp.Compare(x.Track, y.Track); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Start, y.Start); c != 0 {
		return c
	}
	return cmp.Compare(y.Dur, x.Dur)
}
