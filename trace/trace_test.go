package trace

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

// TestEventSize pins the size of an Event. A big trace holds tens of
// millions of them, so each byte is tens of megabytes of memory to fault
// in and the XPlane memory budget is stated in bytes an event ("Budgets
// at a glance" in docs/performance.md); a field added to Event should find
// room in it or go beside the events, as Trace.Cats does.
func TestEventSize(t *testing.T) {
	if got := unsafe.Sizeof(Event{}); got != 24 {
		t.Errorf("trace.Event is %d bytes, want 24: XPlane's budget of 56 bytes an event (docs/performance.md) counts 24 for the event", got)
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

// TestSetDur checks the 48 bits an Event keeps of a duration: exact up to
// MaxDur, cut there beyond it, and never negative.
func TestSetDur(t *testing.T) {
	tests := []struct{ set, want int64 }{
		{0, 0}, {1, 1}, {1<<32 - 1, 1<<32 - 1}, {1 << 32, 1 << 32}, {1<<32 + 5, 1<<32 + 5},
		{MaxDur - 1, MaxDur - 1}, {MaxDur, MaxDur}, {MaxDur + 1, MaxDur}, {1<<63 - 1, MaxDur}, {-5, 0},
	}
	for _, tt := range tests {
		e := Event{Start: 7}
		e.SetDur(tt.set)
		if got := e.Dur(); got != tt.want {
			t.Errorf("SetDur(%d): Dur() = %d, want %d", tt.set, got, tt.want)
		}
		if got := e.End(); got != 7+tt.want {
			t.Errorf("SetDur(%d): End() = %d, want %d", tt.set, got, 7+tt.want)
		}
	}
}

// TestCorr checks that ids below WideCorr are kept as they are and wider
// ones become keys that tell them apart and lead back to them.
func TestCorr(t *testing.T) {
	b := NewBuilder()
	ids := []uint64{0, 1, WideCorr - 1, WideCorr, 1 << 40, WideCorr, 1<<64 - 1, 1 << 40, 5}
	keys := make([]uint32, len(ids))
	for i, id := range ids {
		keys[i] = b.Corr(id)
	}
	tr := b.Finish()
	for i, id := range ids {
		if got := tr.CorrID(keys[i]); got != id {
			t.Errorf("id %d: key %d leads back to %d", id, keys[i], got)
		}
		if id < WideCorr && uint64(keys[i]) != id {
			t.Errorf("id %d: key %d, want the id itself", id, keys[i])
		}
		for j, other := range ids {
			if (keys[i] == keys[j]) != (id == other) {
				t.Errorf("ids %d and %d: keys %d and %d", id, other, keys[i], keys[j])
			}
		}
	}
	if want := []uint64{WideCorr, 1 << 40, 1<<64 - 1}; !slices.Equal(tr.WideCorrs, want) {
		t.Errorf("WideCorrs = %v, want %v", tr.WideCorrs, want)
	}
}

// TestCorrLimit checks that distinct wide correlation ids count against
// the limit on distinct strings: past it, Err is a limit error.
func TestCorrLimit(t *testing.T) {
	b := NewBuilder()
	b.SetLimits(Options{MaxStrings: 2})
	b.Corr(1 << 40)
	b.Corr(1 << 41)
	b.Corr(1 << 40) // known: no new key
	b.Corr(5)       // not wide
	if err := b.Err(); err != nil {
		t.Fatalf("two wide ids under a limit of 2: %v", err)
	}
	if k := b.Corr(1 << 42); k != 0 {
		t.Errorf("a third wide id got key %d, want 0", k)
	}
	if err := b.Err(); !errors.Is(err, ErrLimit) {
		t.Errorf("Err() = %v, want the --max-strings limit", err)
	}
}
