package chrome

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// TestFlowBinding: a launch flow names an instant on a track. Its id goes
// to the innermost event there that lacks a correlation, unless an event
// there already carries that id, even when another event starts at the
// same instant (fuzz seed 45558acebe58fe57 gave the id to both copies).
func TestFlowBinding(t *testing.T) {
	// ev writes an event on GPU:0 stream 7; corr 0 writes no correlation.
	ev := func(name string, ts, dur int, corr int) string {
		args := `"device":0,"stream":7`
		if corr != 0 {
			args += fmt.Sprintf(`,"correlation":%d`, corr)
		}
		return fmt.Sprintf(`{"ph":"X","cat":"gpu_memcpy","name":%q,"pid":0,"tid":7,"ts":%d,"dur":%d,"args":{%s}}`, name, ts, dur, args)
	}
	flow := `{"ph":"f","id":48,"pid":0,"tid":7,"ts":10,"cat":"ac2g","name":"ac2g","bp":"e"}`
	tests := []struct {
		name   string
		events []string
		want   map[string]uint64
	}{
		{"the longer of two carries the id", []string{ev("long", 10, 5, 48), ev("short", 10, 4, 0)},
			map[string]uint64{"long": 48, "short": 0}},
		{"the shorter of two carries the id", []string{ev("long", 10, 5, 0), ev("short", 10, 4, 48)},
			map[string]uint64{"long": 0, "short": 48}},
		{"neither carries it: the innermost gets it", []string{ev("long", 10, 5, 0), ev("short", 10, 4, 0)},
			map[string]uint64{"long": 0, "short": 48}},
		{"an enclosing event carries it", []string{ev("outer", 5, 20, 48), ev("inner", 10, 4, 0)},
			map[string]uint64{"outer": 48, "inner": 0}},
		{"the innermost carries another id", []string{ev("outer", 5, 20, 0), ev("inner", 10, 4, 77)},
			map[string]uint64{"outer": 48, "inner": 77}},
		{"every event carries another id", []string{ev("outer", 5, 20, 76), ev("inner", 10, 4, 77)},
			map[string]uint64{"outer": 76, "inner": 77}},
		{"the event before ends at the flow", []string{ev("before", 6, 4, 0), ev("at", 10, 4, 0)},
			map[string]uint64{"before": 0, "at": 48}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The flow both before and after its events: binding waits for
			// the whole trace.
			for _, order := range [][]string{append([]string{flow}, tt.events...), append(tt.events, flow)} {
				tr := mustRead(t, `{"traceEvents":[`+strings.Join(order, ",\n")+`]}`)
				for name, corr := range tt.want {
					if evs := find(tr, name); len(evs) != 1 || tr.CorrID(evs[0].Corr) != corr {
						t.Errorf("%s: %+v, want one event with Corr %d", name, evs, corr)
					}
				}
			}
		})
	}
}

// TestSearchAfter checks the search from a hint against a binary search of
// the whole track, for every time around the events and every hint, good
// or bad.
func TestSearchAfter(t *testing.T) {
	starts := []int64{1, 3, 3, 3, 7, 8, 8, 20, 21, 22, 23, 24, 25, 40}
	for _, n := range []int{0, 1, 2, len(starts)} {
		evs := make([]trace.Event, n)
		for i := range evs {
			evs[i].Start = starts[i]
		}
		for ts := int64(-1); ts <= 42; ts++ {
			want := sort.Search(n, func(k int) bool { return evs[k].Start > ts })
			for hint := -1; hint <= n+1; hint++ {
				if got := searchAfter(evs, ts, hint); got != want {
					t.Errorf("%d events, ts %d, hint %d: searchAfter = %d, want %d", n, ts, hint, got, want)
				}
			}
		}
	}
}
