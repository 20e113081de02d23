package analyze

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// stepsTrace writes a Kineto trace of n 100 us steps. Step k launches a
// kernel of kernel(k) us (none for 0) at its start, then loads a batch
// inline from 60 to 99 us into the step: the loader runs after the step's
// work, as in a loop that fetches the next batch at its end.
func stepsTrace(n int, kernel func(k int) int) string {
	var evs []string
	add := func(format string, args ...any) { evs = append(evs, fmt.Sprintf(format, args...)) }
	for k := range n {
		t := 100 * k
		add(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%d,"dur":100}`, k, t)
		if d := kernel(k); d > 0 {
			add(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":2,"args":{"correlation":%d}}`, t+1, k+1)
			add(`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":%d,"args":{"device":0,"stream":7,"correlation":%d}}`, t+5, d, k+1)
		}
		add(`{"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__","pid":1,"tid":1,"ts":%d,"dur":39}`, t+60)
	}
	return `{"traceEvents":[` + strings.Join(evs, ",") + `]}`
}

func analyzeJSON(t *testing.T, doc string) *Result {
	t.Helper()
	tr, err := trace.Read(strings.NewReader(doc), int64(len(doc)), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return mustAnalyze(t, tr)
}

// mustAnalyze analyses tr with the default options.
func mustAnalyze(t *testing.T, tr *trace.Trace) *Result {
	t.Helper()
	res, err := analyzeAdvised(tr, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestLastStepHostSpan: the last step's loading counts in full, though it
// runs after the last device work: a step's host figures are over its
// host span, which for the last step runs to its marker's end.
func TestLastStepHostSpan(t *testing.T) {
	res := analyzeJSON(t, stepsTrace(5, func(int) int { return 50 }))
	// Steps 1-4 are kept; each loads for 39 us.
	for _, s := range res.Steps {
		if s.Input != 39_000 {
			t.Errorf("%s: input %d ns, want 39000", s.Name, s.Input)
		}
	}
	if in, _, _ := res.PerStep(); in != 39_000 {
		t.Errorf("PerStep input %d ns, want 39000", in)
	}
}

// TestLastStepWithoutWork: a last step that launches nothing ends at its
// marker's end, not where the work before it ended: it is not cut to
// nothing.
func TestLastStepWithoutWork(t *testing.T) {
	// Step 3's kernel runs 120 us, from 305 to 425 us, into step 4
	// (400-500 us), which launches nothing: step 4 starts when that
	// kernel ends and runs to its marker's end.
	res := analyzeJSON(t, stepsTrace(5, func(k int) int {
		return map[int]int{0: 50, 1: 50, 2: 50, 3: 120}[k]
	}))
	last := res.Steps[len(res.Steps)-1]
	if last.Start != 425_000 || last.Dur != 75_000 {
		t.Errorf("last step [%d, +%d) ns, want [425000, +75000)", last.Start, last.Dur)
	}
}

// TestMostlyUntraced: untraced idle makes a verdict a guess only when it
// is the largest share the rule weighs, host work counting runtime work,
// and at least UntracedDoubt of the window.
func TestMostlyUntraced(t *testing.T) {
	for _, tt := range []struct {
		by     map[Cause]int64
		window int64
		want   bool
	}{
		{map[Cause]int64{Untraced: 12, Host: 10, Runtime: 10}, 100, false},
		{map[Cause]int64{Untraced: 12, Host: 10}, 100, true},
		{map[Cause]int64{Untraced: 12, InSync: 6, AfterSync: 7}, 100, false},
		{map[Cause]int64{Untraced: 12, Input: 12}, 100, true},
		{map[Cause]int64{Untraced: 12, Host: 10}, 1200, true},
		{map[Cause]int64{Untraced: 12, Host: 10}, 1201, false},
		{map[Cause]int64{}, 100, false},
	} {
		var b Breakdown
		for c, d := range tt.by {
			b.Add(c, d)
		}
		if got := b.MostlyUntraced(tt.window); got != tt.want {
			t.Errorf("MostlyUntraced(%v, window %d) = %v, want %v", tt.by, tt.window, got, tt.want)
		}
	}
}

// aheadTrace writes a Kineto trace of 5 host steps of 100 us on thread 1,
// each launching a 150 us kernel at 1 us into the step: the device runs
// them back to back from 5 us, so the host runs ahead and the device
// steps (after the warm-up) are [155, 305), [305, 455), [455, 605) and
// [605, 755) us. In each step thread 1 blocks in aten::item from 60 to 80
// us, a cudaStreamSynchronize nested in it from 61 to 79 us, and thread 2
// (which launches a 1 us kernel at 2 us) blocks from 70 to 90 us: the
// launching threads are blocked 30 us of each step. After the last marker
// thread 1 waits in cudaDeviceSynchronize from 500 us until the device
// drains at 755 us: outside every step.
func aheadTrace() string {
	var evs []string
	add := func(format string, args ...any) { evs = append(evs, fmt.Sprintf(format, args...)) }
	for k := range 5 {
		t := 100 * k
		add(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%d,"dur":100}`, k, t)
		add(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":2,"args":{"correlation":%d}}`, t+1, 2*k+1)
		add(`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":150,"args":{"device":0,"stream":7,"correlation":%d}}`, 5+150*k, 2*k+1)
		add(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":%d,"dur":2,"args":{"correlation":%d}}`, t+2, 2*k+2)
		add(`{"ph":"X","cat":"kernel","name":"b","pid":0,"tid":8,"ts":%d,"dur":1,"args":{"device":0,"stream":8,"correlation":%d}}`, 6+150*k, 2*k+2)
		add(`{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":%d,"dur":20}`, t+60)
		add(`{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":%d,"dur":18}`, t+61)
		add(`{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":2,"ts":%d,"dur":20}`, t+70)
	}
	add(`{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":500,"dur":255}`)
	return `{"traceEvents":[` + strings.Join(evs, ",") + `]}`
}

// TestStepSyncWithinStep: a step's sync time is the wall time its
// launching threads were blocked during its host span, each instant once
// (nested calls, two threads blocked at once), and the host's wait after
// its last marker is in no step: every step's sync is 30 us, no more than
// its 150 us, where the sum over threads gave 40 us and the last step's
// span, run on to the device's end, 295 us.
func TestStepSyncWithinStep(t *testing.T) {
	res := analyzeJSON(t, aheadTrace())
	if len(res.Steps) != 4 {
		t.Fatalf("%d steps, want 4", len(res.Steps))
	}
	for _, s := range res.Steps {
		if s.Sync != 30_000 || s.Dur != 150_000 {
			t.Errorf("%s: sync %d ns in %d ns, want 30000 in 150000", s.Name, s.Sync, s.Dur)
		}
	}
	if sync, _ := res.SyncPerStep(); sync != 30_000 || res.Blocking != 120_000 {
		t.Errorf("SyncPerStep %d ns, Blocking %d ns, want 30000 and 120000", sync, res.Blocking)
	}
}

// TestGapStepMostOf: a gap is labelled with the step holding the most of
// it: one that begins 150 us before a step's start and lasts 60 ms into it
// is that step's, not the one it began in.
func TestGapStepMostOf(t *testing.T) {
	a := &analyzer{res: &Result{
		Steps:  []Step{{Start: 0, Dur: 100_000_000}, {Start: 100_000_000, Dur: 100_000_000}, {Start: 200_000_000, Dur: 100_000_000}},
		Window: Window{Start: 0, End: 300_000_000},
	}}
	tests := []struct {
		iv   Interval
		want int
	}{
		{Interval{99_850_000, 159_850_000}, 1},  // 150 us in step 0, the rest in step 1
		{Interval{40_000_000, 110_000_000}, 0},  // mostly in step 0
		{Interval{50_000_000, 150_000_000}, 0},  // a tie: the earlier step
		{Interval{90_000_000, 290_000_000}, 1},  // across three steps, 100 ms in step 1
		{Interval{250_000_000, 260_000_000}, 2}, // inside the last step
	}
	for _, tt := range tests {
		if got := a.stepMostOf(a.stepIndex(tt.iv.Start), tt.iv); got != tt.want {
			t.Errorf("gap %v: step %d, want %d", tt.iv, got, tt.want)
		}
	}
}
