package analyze

import (
	"testing"

	"github.com/tracegap/tracegap/trace/tracetest"
)

// TestStepTime: the pace is the longer of the mean start-to-start and
// end-to-end times; a host that runs ahead starts steps faster than they
// end.
func TestStepTime(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		want  int64
	}{
		{"none", nil, 0},
		{"one", []Step{{Start: 5, Dur: 40}}, 40},
		{"starts decide", []Step{{Start: 0, Dur: 10}, {Start: 30, Dur: 10}, {Start: 60, Dur: 10}}, 30},
		{"ends decide", []Step{{Start: 0, Dur: 10}, {Start: 10, Dur: 30}, {Start: 20, Dur: 50}}, 30},
	}
	for _, tt := range tests {
		r := &Result{Steps: tt.steps}
		if got := r.StepTime(); got != tt.want {
			t.Errorf("%s: StepTime() = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestCovered(t *testing.T) {
	busy := []Interval{{0, 10}, {20, 30}, {40, 50}}
	tests := []struct {
		w    Interval
		want int64
	}{
		{Interval{0, 50}, 30},
		{Interval{5, 25}, 10},
		{Interval{10, 20}, 0},
		{Interval{45, 100}, 5},
		{Interval{-10, -5}, 0},
	}
	for _, tt := range tests {
		if got := Covered(busy, tt.w); got != tt.want {
			t.Errorf("Covered(%v, %v) = %d, want %d", busy, tt.w, got, tt.want)
		}
	}
}

// TestExplainIdle: over the window, the idle ExplainIdle splits is the
// window's idle, and where no gap is shorter than MinGap its split is the
// one the analysis gave the gaps.
func TestExplainIdle(t *testing.T) {
	a, err := New(tracetest.Build(exampleLoop.Spec()), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	res := a.Result()
	d := &res.Devices[0]
	if d.WindowIdle.BelowMinGap != 0 {
		t.Fatalf("example has %d ns idle below MinGap, want none", d.WindowIdle.BelowMinGap)
	}
	w := Interval{res.Window.Start, res.Window.End}
	split, idle := a.ExplainIdle(0, w)
	if want := w.End - w.Start - d.WindowBusy; idle != want || split.Attributed() != idle {
		t.Errorf("idle %d split into %d, want %d all split", idle, split.Attributed(), want)
	}
	for c := InSync; c < NumCauses; c++ {
		if split.Of(c) != d.WindowIdle.Of(c) {
			t.Errorf("%s: %d, want the gaps' %d", c, split.Of(c), d.WindowIdle.Of(c))
		}
	}
}
