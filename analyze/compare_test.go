package analyze

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace/tracetest"
)

const ms = int64(1_000_000)

// run builds a Result of n identical steps of stepDur on one device, with
// busy device time, input and sync time per step, and the window's idle.
func run(verdict Verdict, n int, stepDur, busy, input, sync int64, idle Breakdown) *Result {
	r := &Result{
		Source:     Source{Path: string(verdict) + ".json", Format: "chrome"},
		Verdict:    verdict,
		Confidence: High,
		Window:     Window{Start: 0, End: int64(n) * stepDur, Steps: n},
		Devices:    []Device{{ID: "GPU:0", WindowBusy: int64(n) * busy}},
		Idle:       idle,
	}
	for i := range n {
		r.Steps = append(r.Steps, Step{
			Name: "ProfilerStep#" + string(rune('0'+i)), Start: int64(i) * stepDur, Dur: stepDur,
			DeviceBusy: busy, Input: input, Sync: sync,
		})
	}
	return r
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		res  *Result
		want Summary
	}{
		{
			name: "steps",
			res:  run(DataBound, 4, 150*ms, 80*ms, 50*ms, 2*ms, Breakdown{ByCause: [NumCauses]int64{Input: 200 * ms, Host: 40 * ms}, BelowMinGap: 8 * ms}),
			want: Summary{
				Path: "data-bound.json", Format: "chrome", Verdict: DataBound, Confidence: High,
				Steps: 4, StepTime: 150 * ms, DeviceBusy: 80 * ms, Input: 50 * ms, Sync: 2 * ms,
				Utilization: 320.0 / 600, IdleShare: 240.0 / 600,
				IdlePerStep: Breakdown{ByCause: [NumCauses]int64{Input: 50 * ms, Host: 10 * ms}, BelowMinGap: 2 * ms},
				IdleShares:  [NumCauses + 1]float64{Input: 200.0 / 600, Host: 40.0 / 600, NumCauses: 8.0 / 600},
			},
		},
		{
			name: "no steps: the window is one step",
			res: &Result{
				Verdict: Sequential, Confidence: Low,
				Window:  Window{Start: 10 * ms, End: 110 * ms},
				Devices: []Device{{ID: "GPU:0", WindowBusy: 60 * ms}, {ID: "GPU:1", WindowBusy: 40 * ms}},
				Idle:    Breakdown{ByCause: [NumCauses]int64{InSync: 30 * ms, AfterSync: 10 * ms, Input: 4 * ms}},
			},
			want: Summary{
				Verdict: Sequential, Confidence: Low, Steps: 1, PerWindow: true,
				StepTime: 100 * ms, DeviceBusy: 50 * ms, Input: 4 * ms, Sync: 40 * ms,
				Utilization: 0.5, IdleShare: 0.44,
				IdlePerStep: Breakdown{ByCause: [NumCauses]int64{InSync: 30 * ms, AfterSync: 10 * ms, Input: 4 * ms}},
				IdleShares:  [NumCauses + 1]float64{InSync: 0.3, AfterSync: 0.1, Input: 0.04},
			},
		},
	}
	// A pipelined run: each step lasts 51 ms to the end of its device
	// work, but a new one starts every 31 ms.
	piped := run(DataBound, 5, 31*ms, 20*ms, 30*ms, 0, Breakdown{ByCause: [NumCauses]int64{Input: 50 * ms}})
	for i := range piped.Steps {
		piped.Steps[i].Dur = 51 * ms
	}
	tests = append(tests, struct {
		name string
		res  *Result
		want Summary
	}{
		name: "overlapping steps: the pace, not the length",
		res:  piped,
		want: Summary{
			Path: "data-bound.json", Format: "chrome", Verdict: DataBound, Confidence: High,
			Steps: 5, StepTime: 31 * ms, DeviceBusy: 20 * ms, Input: 30 * ms,
			Utilization: 100.0 / 155, IdleShare: 50.0 / 155,
			IdlePerStep: Breakdown{ByCause: [NumCauses]int64{Input: 10 * ms}},
			IdleShares:  [NumCauses + 1]float64{Input: 50.0 / 155},
		},
	})
	// A host that runs ahead: steps start every 2 ms, but each one's
	// device work ends 20 ms after the previous one's.
	ahead := run(Parallel, 3, 2*ms, 20*ms, 0, 0, Breakdown{})
	for i := range ahead.Steps {
		ahead.Steps[i].Dur = int64(i+1)*20*ms - ahead.Steps[i].Start
	}
	ahead.Window.End = 60 * ms
	tests = append(tests, struct {
		name string
		res  *Result
		want Summary
	}{
		name: "host ahead: the device's pace",
		res:  ahead,
		want: Summary{
			Path: "parallel.json", Format: "chrome", Verdict: Parallel, Confidence: High,
			Steps: 3, StepTime: 20 * ms, DeviceBusy: 20 * ms, Utilization: 1,
		},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.res)
			if !summariesEqual(got, tt.want) {
				t.Errorf("Summarize:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func summariesEqual(a, b Summary) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }
	if !near(a.Utilization, b.Utilization) || !near(a.IdleShare, b.IdleShare) {
		return false
	}
	for i := range a.IdleShares {
		if !near(a.IdleShares[i], b.IdleShares[i]) {
			return false
		}
	}
	a.Utilization, a.IdleShare, a.IdleShares = 0, 0, b.IdleShares
	b.Utilization, b.IdleShare = 0, 0
	return a == b
}

func TestCompareRows(t *testing.T) {
	base := run(DataBound, 4, 150*ms, 80*ms, 50*ms, 0, Breakdown{ByCause: [NumCauses]int64{Input: 240 * ms}})
	next := run(Parallel, 4, 100*ms, 80*ms, 2*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 40 * ms}})
	c := Compare(base, next)

	step := c.Row("step time")
	if step == nil || step.Base != float64(150*ms) || step.New != float64(100*ms) ||
		step.Diff != float64(-50*ms) || math.Abs(step.Ratio-2.0/3) > 1e-12 {
		t.Errorf("step time row = %+v, want 150 ms -> 100 ms, diff -50 ms, ratio 0.667", step)
	}
	if r := c.Row("idle host per step"); r == nil || !math.IsNaN(r.Ratio) || r.New != float64(10*ms) {
		t.Errorf("idle host per step row = %+v, want 0 -> 10 ms with an undefined ratio", r)
	}
	// The input idle share fell 40 points (0.4) and the input idle per
	// step 60 ms of a 150 ms base step (0.4); then the step time fell 50 ms
	// (0.333), ahead of the idle share's 30 points.
	var order []string
	for _, r := range c.Rows[:3] {
		order = append(order, r.Metric)
	}
	if want := []string{"idle input share", "idle input per step", "step time"}; !slices.Equal(order, want) {
		t.Errorf("first rows = %q, want %q", order, want)
	}
	for i := 1; i < len(c.Rows); i++ {
		if c.Rows[i].Weight > c.Rows[i-1].Weight {
			t.Errorf("row %d (%s, %g) outweighs row %d (%s, %g)", i, c.Rows[i].Metric, c.Rows[i].Weight,
				i-1, c.Rows[i-1].Metric, c.Rows[i-1].Weight)
		}
	}
	if c.Synthetic != nil {
		t.Errorf("base with 50 ms input per step read as synthetic: %+v", c.Synthetic)
	}
}

func TestRegressions(t *testing.T) {
	base := run(Parallel, 4, 100*ms, 90*ms, 1*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 40 * ms}})
	tests := []struct {
		name  string
		next  *Result
		limit float64
		want  []string
	}{
		{"same", run(Parallel, 4, 100*ms, 90*ms, 1*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 40 * ms}}), 0.05, nil},
		{"step time within limit", run(Parallel, 4, 104*ms, 90*ms, 1*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 40 * ms}}), 0.05, nil},
		{"step time over limit", run(Parallel, 4, 106*ms, 90*ms, 1*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 40 * ms}}), 0.05, []string{"step time"}},
		// 10% -> 16.6% of the window is 6.6 points, over 5.
		{"idle share over limit", run(Sequential, 4, 100*ms, 90*ms, 1*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 40 * ms, InSync: 26 * ms}}), 0.05, []string{"idle share"}},
		{"idle share within a wider limit", run(Sequential, 4, 100*ms, 90*ms, 1*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 40 * ms, InSync: 26 * ms}}), 0.10, nil},
		{"both", run(Sequential, 4, 120*ms, 90*ms, 1*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 200 * ms}}), 0.05, []string{"step time", "idle share"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range Compare(base, tt.next).FindRegressions(tt.limit) {
				got = append(got, r.Metric)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Regressions(%g) = %q, want %q", tt.limit, got, tt.want)
			}
		})
	}
	msg := Compare(base, run(Parallel, 4, 110*ms, 90*ms, 1*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 40 * ms}})).Check(0.05)[0].Message
	if want := "step time grew 10.0% (100 ms -> 110 ms), limit 5.0%"; msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
}

// syncGap is a gap whose waited-for thread sat in stack for dur.
func syncGap(dur int64, stack ...string) Gap {
	return Gap{Device: "GPU:0", Dur: dur, Cause: InSync, Segments: []Segment{
		{Dur: dur, Cause: InSync, Stack: stack},
		{Dur: dur / 10, Cause: AfterSync, Stack: []string{"ProfilerStep#7", "aten::add"}},
	}}
}

func TestSynthetic(t *testing.T) {
	synthetic := run(Parallel, 4, 100*ms, 90*ms, 0, 0, Breakdown{ByCause: [NumCauses]int64{Host: 10 * ms}})
	tests := []struct {
		name       string
		base, next *Result
		force      bool
		detected   bool
		fits       bool
		slower     bool
		conclude   string
		syncNames  []string
	}{
		{
			name: "input fits, at target", base: synthetic, detected: true, fits: true,
			next:     run(Parallel, 4, 103*ms, 90*ms, 20*ms, 0, Breakdown{ByCause: [NumCauses]int64{Host: 10 * ms}}),
			conclude: "the input pipeline keeps up",
		},
		{
			name: "input fits, slower: a sync", base: synthetic, detected: true, fits: true, slower: true,
			next: func() *Result {
				r := run(Sequential, 4, 130*ms, 90*ms, 20*ms, 25*ms, Breakdown{ByCause: [NumCauses]int64{InSync: 100 * ms}})
				r.Gaps = []Gap{
					syncGap(20*ms, "ProfilerStep#5", "aten::item", "aten::_local_scalar_dense", "cudaMemcpyAsync"),
					syncGap(30*ms, "ProfilerStep#6", "aten::item", "aten::_local_scalar_dense", "cudaMemcpyAsync"),
					syncGap(5*ms, "ProfilerStep#6", "cudaDeviceSynchronize"),
				}
				return r
			}(),
			conclude:  "a forced synchronization is the likely cause: cudaMemcpyAsync (50.0 ms in 2 gaps), cudaDeviceSynchronize (5.00 ms in 1 gap).",
			syncNames: []string{"cudaMemcpyAsync", "cudaDeviceSynchronize"},
		},
		{
			name: "input longer than compute", base: synthetic, detected: true, slower: true,
			next:     run(DataBound, 4, 150*ms, 90*ms, 95*ms, 0, Breakdown{ByCause: [NumCauses]int64{Input: 200 * ms}}),
			conclude: "is longer than the synthetic run's compute (90.0 ms per step): the input pipeline is the bottleneck",
		},
		{
			name: "real base not detected", base: run(Parallel, 4, 100*ms, 90*ms, 2*ms, 0, Breakdown{}),
			next: run(Parallel, 4, 100*ms, 90*ms, 2*ms, 0, Breakdown{}),
		},
		{
			name: "real base forced", base: run(Parallel, 4, 100*ms, 90*ms, 2*ms, 0, Breakdown{}), force: true, detected: true, fits: true,
			next:     run(Parallel, 4, 100*ms, 90*ms, 2*ms, 0, Breakdown{}),
			conclude: "keeps up",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := CompareWith(tt.base, tt.next, CompareOptions{SyntheticBase: tt.force}).Synthetic
			if (s != nil) != tt.detected {
				t.Fatalf("synthetic test run = %v, want %v", s != nil, tt.detected)
			}
			if s == nil {
				return
			}
			if s.Forced != tt.force || s.InputFits != tt.fits || s.Slower != tt.slower || s.Target != tt.base.Steps[0].Dur {
				t.Errorf("got forced %v fits %v slower %v target %d, want %v %v %v %d",
					s.Forced, s.InputFits, s.Slower, s.Target, tt.force, tt.fits, tt.slower, tt.base.Steps[0].Dur)
			}
			if !strings.Contains(s.Conclusion, tt.conclude) {
				t.Errorf("conclusion %q does not say %q", s.Conclusion, tt.conclude)
			}
			var names []string
			for _, site := range s.Syncs {
				names = append(names, site.Name)
			}
			if !slices.Equal(names, tt.syncNames) {
				t.Errorf("syncs = %q, want %q", names, tt.syncNames)
			}
		})
	}
}

func TestSyncSitesStack(t *testing.T) {
	r := &Result{Gaps: []Gap{
		syncGap(2*ms, "ProfilerStep#5", "aten::item", "cudaStreamSynchronize"),
		syncGap(3*ms, "ProfilerStep#12", "aten::item", "cudaStreamSynchronize"),
	}}
	sites := SyncSites(r)
	if len(sites) != 1 {
		t.Fatalf("SyncSites = %+v, want one site", sites)
	}
	want := []string{"ProfilerStep#N", "aten::item", "cudaStreamSynchronize"}
	if s := sites[0]; s.Time != 5*ms || s.Gaps != 2 || !slices.Equal(s.Stack, want) {
		t.Errorf("site = %+v, want 5 ms in 2 gaps with stack %q", s, want)
	}
}

func TestSyncSitesAfterSync(t *testing.T) {
	r := &Result{Gaps: []Gap{
		{Segments: []Segment{{Dur: 4 * ms, Cause: AfterSync, Stack: []string{"aten::linear"}, Sync: "cudaStreamSynchronize"}}},
		{Segments: []Segment{
			{Dur: 1 * ms, Cause: InSync, Stack: []string{"aten::item", "cudaStreamSynchronize"}},
			{Dur: 2 * ms, Cause: AfterSync, Stack: []string{"aten::linear"}, Sync: "cudaStreamSynchronize"},
			{Dur: 9 * ms, Cause: AfterSync, Stack: []string{"aten::linear"}}, // the call is not known
		}},
	}}
	sites := SyncSites(r)
	want := []string{"aten::item", "cudaStreamSynchronize"}
	if len(sites) != 1 || sites[0].Time != 7*ms || sites[0].Gaps != 2 || !slices.Equal(sites[0].Stack, want) {
		t.Errorf("SyncSites = %+v, want cudaStreamSynchronize for 7 ms in 2 gaps, stack %q", sites, want)
	}
}

// TestSyntheticGenerated runs the synthetic-data test on generated loops.
// The base has no input and syncs on the previous step's work, so its
// device never idles: a 20 ms kernel every 20 ms.
func TestSyntheticGenerated(t *testing.T) {
	analyzeLoop := func(l tracetest.Loop) *Result {
		t.Helper()
		r, err := Analyze(tracetest.Build(l.Spec()), DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base := analyzeLoop(tracetest.Loop{Steps: 6, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, SyncPrevious: true})
	tests := []struct {
		name string
		loop tracetest.Loop
		want Synthetic // Syncs and Conclusion left out
		says string
	}{
		{
			// 5 ms of input, 1 ms of dispatch, then a sync on this
			// step's kernel: the device idles 6 ms of every 26.
			name: "sync in the step",
			loop: tracetest.Loop{Steps: 6, Input: 5 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true},
			want: Synthetic{Target: 20 * ms, BaseCompute: 20 * ms, NewStep: 26 * ms, NewInput: 5 * ms,
				NewSync: 20 * ms, NewAfterSync: 6 * ms, InputFits: true, Slower: true},
			says: "a forced synchronization is the likely cause",
		},
		{
			name: "sync on the previous step",
			loop: tracetest.Loop{Steps: 6, Input: 5 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, SyncPrevious: true},
			want: Synthetic{Target: 20 * ms, BaseCompute: 20 * ms, NewStep: 20 * ms, NewInput: 5 * ms,
				// Each step syncs 14 ms on the previous kernel, but
				// step 2 waits on step 1's kernel, launched 5 us
				// (step 1's SyncMin) earlier in the pace.
				NewSync: 14*ms - tracetest.SyncMin/5, InputFits: true},
			says: "the input pipeline keeps up",
		},
		{
			// 30 ms of input cannot hide behind 20 ms of compute: a step
			// every 31 ms (plus the 5 us a sync takes at least).
			name: "slow input",
			loop: tracetest.Loop{Steps: 6, Input: 30 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, SyncPrevious: true},
			want: Synthetic{Target: 20 * ms, BaseCompute: 20 * ms, NewStep: 31*ms + tracetest.SyncMin, NewInput: 30 * ms,
				NewSync: tracetest.SyncMin, Slower: true},
			says: "the input pipeline is the bottleneck",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Compare(base, analyzeLoop(tt.loop)).Synthetic
			if s == nil {
				t.Fatal("the base, fed no input, was not read as synthetic")
			}
			got := *s
			got.Syncs, got.Conclusion = nil, ""
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if !strings.Contains(s.Conclusion, tt.says) {
				t.Errorf("conclusion %q does not say %q", s.Conclusion, tt.says)
			}
		})
	}
}
