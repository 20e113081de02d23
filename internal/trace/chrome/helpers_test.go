package chrome

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// readString reads a Chrome trace held in a string through trace.Read, as
// trace.Open would.
func readString(t testing.TB, s string) (*trace.Trace, error) {
	t.Helper()
	return trace.Read(strings.NewReader(s), int64(len(s)), trace.Options{Format: "chrome"})
}

// mustRead is readString for input that must be usable.
func mustRead(t testing.TB, s string) *trace.Trace {
	t.Helper()
	tr, err := readString(t, s)
	if err != nil {
		t.Fatalf("reading %.80q: %v", s, err)
	}
	return tr
}

// busyNs returns, per device, the length of the union of its work
// intervals, clipped to [lo, hi).
func busyNs(tr *trace.Trace, lo, hi int64) map[string]int64 {
	type iv struct{ s, e int64 }
	per := map[string][]iv{}
	for i := range tr.Tracks {
		k := &tr.Tracks[i]
		if k.Kind != trace.TrackDevice {
			continue
		}
		for _, e := range tr.TrackEvents(i) {
			if e.Kind == trace.KindWork {
				per[k.Device] = append(per[k.Device], iv{max(e.Start, lo), min(e.End(), hi)})
			}
		}
	}
	busy := map[string]int64{}
	for dev, ivs := range per {
		slices.SortFunc(ivs, func(a, b iv) int { return int(a.s - b.s) })
		var total, cs, ce int64
		open := false
		for _, x := range ivs {
			if x.e <= x.s {
				continue
			}
			if open && x.s <= ce {
				ce = max(ce, x.e)
				continue
			}
			if open {
				total += ce - cs
			}
			cs, ce, open = x.s, x.e, true
		}
		if open {
			total += ce - cs
		}
		busy[dev] = total
	}
	return busy
}

// find returns the events named name, in track order.
func find(tr *trace.Trace, name string) []trace.Event {
	var out []trace.Event
	for _, e := range tr.Events {
		if tr.Str(e.Name) == name {
			out = append(out, e)
		}
	}
	return out
}
