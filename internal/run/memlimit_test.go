package run

import (
	"math"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

func TestHeapBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bytes  int64
		events int
		want   int64
	}{
		// JSON: about 400 bytes an event; the quarter of the input wins.
		{"kineto 1 GB", 1 << 30, 2_700_000, (1 << 30) / 4 * 9 / 10},
		// XPlane: about 30 bytes an event; the events alone need more.
		{"xplane 384 MB", 384 << 20, 16_000_000, 0},
		{"empty", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := heapBudget(tc.bytes, tc.events); got != tc.want {
				t.Errorf("heapBudget(%d, %d) = %d, want %d", tc.bytes, tc.events, got, tc.want)
			}
		})
	}
}

// TestMemLimitsSum checks that traces analysed at once add their budgets,
// that one without a budget lifts the limit while it is held, and that
// the limit is lifted when none is left.
func TestMemLimitsSum(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	var got []int64
	var percents []int
	m := &memLimits{
		set:     func(n int64) int64 { got = append(got, n); return 0 },
		percent: func(p int) int { percents = append(percents, p); return 100 },
	}
	a := &trace.Trace{Bytes: 4 << 30, Events: make([]trace.Event, 10)}
	b := &trace.Trace{Bytes: 8 << 30, Events: make([]trace.Event, 10)}
	dense := &trace.Trace{Bytes: 1 << 20, Events: make([]trace.Event, 100_000)}
	ra := m.hold(a)
	rb := m.hold(b)
	rd := m.hold(dense)
	rd()
	ra()
	rb()
	ba, bb := heapBudget(a.Bytes, 10), heapBudget(b.Bytes, 10)
	want := []int64{ba, ba + bb, math.MaxInt64, ba + bb, bb, math.MaxInt64}
	if !slices.Equal(got, want) {
		t.Fatalf("limits set %v, want %v", got, want)
	}
	// The dense trace has no budget: the collector runs early while it is
	// held, and as before once it is released.
	if want := []int{leanGCPercent, 100}; !slices.Equal(percents, want) {
		t.Errorf("GC percents set %v, want %v", percents, want)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	got = nil
	m.hold(a)()
	if len(got) != 0 {
		t.Errorf("with GOMEMLIMIT set, limits set %v, want none", got)
	}
}
