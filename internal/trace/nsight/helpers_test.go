package nsight_test

import (
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// checkInvariants checks the promises of a trace: the tracks tile the
// events in order, each track's events sorted by start (the longer first),
// times and durations not negative, names in the string table.
func checkInvariants(t *testing.T, tr *trace.Trace) {
	t.Helper()
	next := 0
	for i := range tr.Tracks {
		k := &tr.Tracks[i]
		if k.Lo != next || k.Hi < k.Lo {
			t.Fatalf("track %d spans [%d, %d), want it to start at %d", i, k.Lo, k.Hi, next)
		}
		next = k.Hi
		evs := tr.TrackEvents(i)
		for j := range evs {
			e := &evs[j]
			if e.Start < 0 || e.Dur() < 0 || int(e.Name) >= len(tr.Strings) {
				t.Fatalf("track %d event %d: start %d, dur %d, name %d of %d", i, j, e.Start, e.Dur(), e.Name, len(tr.Strings))
			}
			if j > 0 && (evs[j-1].Start > e.Start || evs[j-1].Start == e.Start && evs[j-1].Dur() < e.Dur()) {
				t.Fatalf("track %d: events %d and %d out of order", i, j-1, j)
			}
		}
	}
	if next != len(tr.Events) {
		t.Fatalf("tracks cover %d of %d events", next, len(tr.Events))
	}
}
