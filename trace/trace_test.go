package trace

import (
	"testing"
	"unsafe"
)

// TestEventSize pins the size of an Event. A big trace holds tens of
// millions of them, so each byte is tens of megabytes of memory to fault
// in and the XPlane memory budget is stated in bytes an event
// (docs/performance.md); a field added to Event should find room in it or
// go beside the events, as Trace.Cats does.
func TestEventSize(t *testing.T) {
	if got := unsafe.Sizeof(Event{}); got != 32 {
		t.Errorf("trace.Event is %d bytes, want 32: the memory budget of docs/performance.md counts 32 bytes an event", got)
	}
}

// TestTrackOf checks TrackOf against the tracks' ranges, empty tracks
// included: first, last and between others.
func TestTrackOf(t *testing.T) {
	b := NewBuilder()
	sizes := []int{0, 3, 0, 0, 1, 5, 0}
	for i, n := range sizes {
		tr := b.Track(string(rune('a'+i)), Track{})
		for k := range n {
			b.Add(tr, Event{Start: int64(k)})
		}
	}
	tr := b.Finish()
	var want []int
	for i, n := range sizes {
		for range n {
			want = append(want, i)
		}
	}
	if len(tr.Events) != len(want) {
		t.Fatalf("%d events, want %d", len(tr.Events), len(want))
	}
	for i, w := range want {
		if got := tr.TrackOf(i); got != w {
			t.Errorf("TrackOf(%d) = %d, want %d", i, got, w)
		}
	}
}
