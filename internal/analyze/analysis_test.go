package analyze

import (
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestStepTime: the steps tile the window, so the pace is the window's
// length over its steps, whatever each step's own length.
func TestStepTime(t *testing.T) {
	tests := []struct {
		name   string
		window Window
		steps  []Step
		want   int64
		ok     bool
	}{
		{"none", Window{Start: 0, End: 100}, nil, 0, false},
		{"one", Window{Start: 5, End: 45}, []Step{{Start: 5, Dur: 40}}, 40, true},
		{"three", Window{Start: 0, End: 90}, []Step{{Start: 0, Dur: 30}, {Start: 30, Dur: 30}, {Start: 60, Dur: 30}}, 30, true},
		{"uneven", Window{Start: 10, End: 110}, []Step{{Start: 10, Dur: 20}, {Start: 30, Dur: 80}}, 50, true},
	}
	for _, tt := range tests {
		r := &Result{Window: tt.window, Steps: tt.steps}
		if got, ok := r.StepTime(); got != tt.want || ok != tt.ok {
			t.Errorf("%s: StepTime() = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
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
