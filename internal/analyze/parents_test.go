package analyze

import (
	"path/filepath"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// plainParents is the enclosing event of each event, an int32 each: what
// parentIndex must answer.
func plainParents(evs []trace.Event) []int32 {
	par := make([]int32, len(evs))
	var n nesting
	for i := range evs {
		e := &evs[i]
		par[i] = n.next(i, e.Start, e.End(), e.Dur() > 0)
	}
	return par
}

// span is a host event from start lasting dur (0: an instant).
func span(start, dur int64) trace.Event {
	e := trace.Event{Start: start}
	e.SetDur(dur)
	return e
}

// farThread is two steps, each enclosing calls of one instant each: 300
// calls (600 events) under the first step, more than a byte back, so its
// far children make a run; then a call with 300 instants in it, whose
// children switch the run to that call; ten more calls in the first step
// switch it back, and the second step's far children start a fourth run.
// farThread has four runs of far parents.
func farThread() []trace.Event {
	var evs []trace.Event
	calls := func(t int64, n int) int64 {
		for range n {
			evs = append(evs, span(t, 10), span(t+1, 0))
			t += 10
		}
		return t
	}
	evs = append(evs, span(0, 10_000))
	t := calls(1, 300)
	evs = append(evs, span(t, 1_000))
	for k := range 300 {
		evs = append(evs, span(t+1+int64(k), 0))
	}
	t = calls(t+1_000, 10)
	evs = append(evs, span(10_000, 10_000))
	calls(10_001, 300)
	return evs
}

// TestParentIndex checks that the byte-a-event index answers what the
// plain one does, on threads whose parents are all near and on threads
// with far ones (runs: how many runs of far parents are expected, so that
// a case meant to take the far path cannot pass without it).
func TestParentIndex(t *testing.T) {
	loop := tracetest.Build(tracetest.Loop{Steps: 3, Input: 2 * msec, Dispatch: 30 * usec, Kernels: 400, Compute: 20 * usec, Sync: true}.Spec())
	tpu, err := trace.Open(filepath.Join(realtraces.Dir(t), "xprof-tpu-inference.xplane.pb"), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		evs  []trace.Event
		runs int // -1: any, as long as some
	}{
		{"empty", nil, 0},
		{"flat", []trace.Event{span(0, 5), span(5, 5), span(10, 0)}, 0},
		{"far runs", farThread(), 4},
		{"generated loop", hostEvents(loop), -1},
		{"real TPU", hostEvents(tpu), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := plainParents(tt.evs)
			th := &thread{evs: tt.evs}
			p := th.parents()
			for i, w := range want {
				if got := p.of(int32(i)); got != w {
					t.Fatalf("parent of %d = %d, want %d", i, got, w)
				}
			}
			if got := len(p.far); tt.runs >= 0 && got != tt.runs || tt.runs < 0 && got == 0 {
				t.Errorf("%d runs of far parents, want %d (-1: some)", got, tt.runs)
			}
		})
	}
}

// hostEvents returns the events of t's longest host track.
func hostEvents(t *trace.Trace) []trace.Event {
	var evs []trace.Event
	for i := range t.Tracks {
		if t.Tracks[i].Kind == trace.TrackHost && len(t.TrackEvents(i)) > len(evs) {
			evs = t.TrackEvents(i)
		}
	}
	return evs
}
