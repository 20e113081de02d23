package job

import (
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// TestFiguresAddUp: every job figure means one thing wherever it is shown,
// so the job's figures add up. Over the job's window, and over each job
// step, device busy time + idle by cause + the rest (waits with no idle
// cause, time outside the rank's own stretch) is the stretch's length,
// each averaged over the ranks; the waits of the ranks' table, of the
// collectives' and of the step-spread finding agree. Averages are of integers, so each
// sum may be short by a nanosecond for every figure divided.
func TestFiguresAddUp(t *testing.T) {
	tests := []struct {
		name   string
		traces func(*testing.T) []*trace.Trace
	}{
		{"slow input", func(t *testing.T) []*trace.Trace {
			return jobTraces(t, tracetest.Job{Steps: 6, Input: []int64{200_000, 200_000, 200_000, 3_000_000}, Dispatch: 100_000,
				CollectiveDispatch: 50_000, Compute: 1_000_000, Transfer: 200_000, ClockOffset: []int64{0, 5_000_000_123, 77_777, 1e12}}, "build")
		}},
		{"imbalance", func(t *testing.T) []*trace.Trace {
			return jobTraces(t, tracetest.Job{Steps: 5, Input: []int64{100_000, 100_000, 100_000}, Dispatch: 20_000,
				CollectiveDispatch: 20_000, Compute: 500_000, ExtraCompute: []int64{0, 0, 300_000}, Transfer: 50_000}, "build")
		}},
		{"many ranks", func(t *testing.T) []*trace.Trace { return jobTraces(t, tracetest.ManyRanks(8, 6), "build") }},
		{"DLRM", dlrmTraces},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jr, err := analyzeAdvised(tt.traces(t), analyze.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			checkFiguresAddUp(t, jr)
		})
	}
}

func checkFiguresAddUp(t *testing.T, jr *Result) {
	t.Helper()
	o := &jr.Overall
	n := int64(len(jr.Ranks))
	slack := 2*n + 8 // a nanosecond per rank's average and per figure
	var busy int64
	for _, d := range o.Devices {
		busy += d.WindowBusy
	}
	busy /= int64(len(o.Devices))
	idle := o.Idle.Attributed() + o.Idle.BelowMinGap
	if win, sum := o.Window.Dur(), busy+idle+jr.Rest.Total(); abs(win-sum) > slack {
		t.Errorf("window %d ns, but busy %d + idle %d + rest %+v = %d", win, busy, idle, jr.Rest, sum)
	}
	for i, s := range o.Steps {
		rest := jr.Steps[i].Rest
		if sum := s.DeviceBusy + s.Idle.Attributed() + s.Idle.BelowMinGap + rest.Total(); abs(s.Dur-sum) > slack {
			t.Errorf("step %s: %d ns, but busy %d + idle %d + rest %+v = %d", s.Name, s.Dur, s.DeviceBusy, s.Idle.Attributed()+s.Idle.BelowMinGap, rest, sum)
		}
	}
	var fromRanks, fromColls int64
	perRank := make([]int64, len(jr.Ranks))
	for i, rk := range jr.Ranks {
		fromRanks += rk.Wait.Total()
		for k := range jr.Steps {
			perRank[i] += jr.Steps[k].Waited(i) // as the step-spread finding gives it
		}
		if perRank[i] != rk.Wait.Total() {
			t.Errorf("rank %d: waits %d in its steps' collectives, %d in the ranks' table", rk.Rank, perRank[i], rk.Wait.Total())
		}
	}
	for _, s := range jr.Steps {
		var imposed int64 // the step's wait is the part its straggler imposed
		for _, c := range s.Collectives {
			fromColls += c.Split.Total()
			if c.Straggler == s.Straggler {
				imposed += c.Split.Total()
			}
		}
		if s.Wait != imposed {
			t.Errorf("step %s: straggler rank %d imposed %d ns, its collectives %d", s.Name, s.Straggler, s.Wait, imposed)
		}
	}
	if w := jr.Wait.Total(); fromRanks != w || fromColls != w {
		t.Errorf("job wait %d ns, but the ranks' sum to %d, the collectives' %d", w, fromRanks, fromColls)
	}
}
