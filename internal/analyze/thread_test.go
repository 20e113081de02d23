package analyze

import (
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// TestGallopStart checks gallopStart against a binary search over the
// whole slice, from every start that leaves the answer ahead of it, on
// starts with repeats and gaps.
func TestGallopStart(t *testing.T) {
	starts := []int64{1, 1, 2, 5, 5, 5, 8, 13, 21, 21, 34}
	evs := make([]trace.Event, len(starts))
	for i, s := range starts {
		evs[i].Start = s
	}
	for x := int64(0); x <= 40; x++ {
		want := startIndex(evs, x)
		for from := 0; from <= want; from++ {
			if got := gallopStart(evs, from, x); got != want {
				t.Errorf("gallopStart(from %d, t %d) = %d, want %d", from, x, got, want)
			}
		}
	}
}
