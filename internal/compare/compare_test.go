package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/internal/trace/xplane"
	"github.com/tracegap/tracegap/trace"
)

const (
	ms = int64(1_000_000)
	us = int64(1_000)
)

// idle builds an analyze.Breakdown from per-cause times.
func idle(by map[analyze.Cause]int64, belowMinGap int64) analyze.Breakdown {
	var b analyze.Breakdown
	for c, d := range by {
		b.Add(c, d)
	}
	b.BelowMinGap = belowMinGap
	return b
}

// run builds a Result of n identical steps of stepDur on one device, with
// busy device time, input and sync time per step, and the window's idle.
func run(verdict analyze.Verdict, n int, stepDur, busy, input, sync int64, idle analyze.Breakdown) *analyze.Result {
	r := &analyze.Result{
		Source:     analyze.Source{Path: string(verdict) + ".json", Format: "chrome"},
		Verdict:    verdict,
		Confidence: analyze.High,
		Window:     analyze.Window{Start: 0, End: int64(n) * stepDur, Steps: n},
		Devices:    []analyze.Device{{ID: "GPU:0", WindowBusy: int64(n) * busy}},
		Idle:       idle,
	}
	for i := range n {
		r.Steps = append(r.Steps, analyze.Step{
			Name: "ProfilerStep#" + string(rune('0'+i)), Start: int64(i) * stepDur, Dur: stepDur,
			DeviceBusy: busy, Input: input, Sync: sync,
		})
	}
	return r
}

func compareRuns(base, next *analyze.Result, opt Options) *Comparison {
	return Compare(Summarize(base), Summarize(next), opt)
}

// idleOf lists a Summary's idle by cause as the test cases write it:
// per step and share for the causes given, zero for the others.
func idleOf(perStep map[string]int64, share map[string]float64) []CauseIdle {
	var out []CauseIdle
	for c := range analyze.NumCauses {
		out = append(out, CauseIdle{Cause: c.String(), PerStep: perStep[c.String()], Share: share[c.String()]})
	}
	return append(out, CauseIdle{Cause: BelowMinGap, PerStep: perStep[BelowMinGap], Share: share[BelowMinGap]})
}

func TestSummarize(t *testing.T) {
	// A pipelined run: each step lasts 51 ms to the end of its device
	// work, but a new one starts every 31 ms.
	piped := run(analyze.DataBound, 5, 31*ms, 20*ms, 30*ms, 0, idle(map[analyze.Cause]int64{analyze.Input: 50 * ms}, 0))
	for i := range piped.Steps {
		piped.Steps[i].Dur = 51 * ms
	}
	// A host that runs ahead: steps start every 2 ms, but each one's
	// device work ends 20 ms after the previous one's.
	ahead := run(analyze.Parallel, 3, 2*ms, 20*ms, 0, 0, analyze.Breakdown{})
	for i := range ahead.Steps {
		ahead.Steps[i].Dur = int64(i+1)*20*ms - ahead.Steps[i].Start
	}
	ahead.Window.End = 60 * ms
	// The last step runs to the window's end and holds the tail of the
	// work launched before the window: the typical step leaves it out.
	tail := run(analyze.Parallel, 3, 10*ms, 6*ms, 2*ms, 1*ms, analyze.Breakdown{})
	tail.Steps[2].DeviceBusy, tail.Steps[2].Input, tail.Steps[2].Sync = 9*ms, 5*ms, 4*ms

	tests := []struct {
		name string
		res  *analyze.Result
		want Summary
	}{
		{
			name: "steps",
			res:  run(analyze.DataBound, 4, 150*ms, 80*ms, 50*ms, 2*ms, idle(map[analyze.Cause]int64{analyze.Input: 200 * ms, analyze.Host: 40 * ms}, 8*ms)),
			want: Summary{
				Path: "data-bound.json", Format: "chrome", Verdict: analyze.DataBound, Confidence: analyze.High,
				Steps: 4, StepTime: 150 * ms, DeviceBusy: 80 * ms, Input: 50 * ms, Sync: 2 * ms,
				StepMedian: 150 * ms, StepP90: 150 * ms, Stability: "stable",
				Utilization: 320.0 / 600, IdleShare: 240.0 / 600,
				Idle: idleOf(map[string]int64{"input": 50 * ms, "host": 10 * ms, BelowMinGap: 2 * ms},
					map[string]float64{"input": 200.0 / 600, "host": 40.0 / 600, BelowMinGap: 8.0 / 600}),
			},
		},
		{
			name: "no steps: the window is one step",
			res: &analyze.Result{
				Verdict: analyze.Sequential, Confidence: analyze.Low,
				Window:  analyze.Window{Start: 10 * ms, End: 110 * ms},
				Devices: []analyze.Device{{ID: "GPU:0", WindowBusy: 60 * ms}, {ID: "GPU:1", WindowBusy: 40 * ms}},
				Idle:    idle(map[analyze.Cause]int64{analyze.InSync: 30 * ms, analyze.AfterSync: 10 * ms, analyze.Input: 4 * ms}, 0),
				// The host's loading and blocking over the window, which
				// the idle they caused need not equal.
				Loading: 6 * ms, Blocking: 45 * ms,
			},
			want: Summary{
				Verdict: analyze.Sequential, Confidence: analyze.Low, Steps: 1, PerWindow: true,
				StepTime: 100 * ms, DeviceBusy: 50 * ms, Input: 6 * ms, Sync: 45 * ms,
				Utilization: 0.5, IdleShare: 0.44,
				Idle: idleOf(map[string]int64{"in-sync": 30 * ms, "after-sync": 10 * ms, "input": 4 * ms},
					map[string]float64{"in-sync": 0.3, "after-sync": 0.1, "input": 0.04}),
				Window: &WindowFigures{
					Ns: 100 * ms, IdleNs: 44 * ms, SyncIdleNs: 40 * ms, InputIdleNs: 4 * ms,
					Devices: []DeviceBusy{{ID: "GPU:0", BusyNs: 60 * ms}, {ID: "GPU:1", BusyNs: 40 * ms}},
				},
			},
		},
		{
			name: "overlapping steps: the pace, not the length",
			res:  piped,
			want: Summary{
				Path: "data-bound.json", Format: "chrome", Verdict: analyze.DataBound, Confidence: analyze.High,
				Steps: 5, StepTime: 31 * ms, DeviceBusy: 20 * ms, Input: 30 * ms,
				// The steps' own lengths, longer than their pace.
				StepMedian: 51 * ms, StepP90: 51 * ms, Stability: "stable",
				Utilization: 100.0 / 155, IdleShare: 50.0 / 155,
				Idle: idleOf(map[string]int64{"input": 10 * ms}, map[string]float64{"input": 50.0 / 155}),
			},
		},
		{
			name: "host ahead: the device's pace",
			res:  ahead,
			want: Summary{
				Path: "parallel.json", Format: "chrome", Verdict: analyze.Parallel, Confidence: analyze.High,
				Steps: 3, StepTime: 20 * ms, DeviceBusy: 20 * ms, Utilization: 1, Idle: idleOf(nil, nil),
				StepMedian: 38 * ms, StepP90: 56 * ms, Stability: "weakly unstable",
				InputUnseen: unseenNoEvents,
			},
		},
		{
			// The steps tile the window: a typical step is the mean of
			// them all, the last one too.
			name: "a typical step is the mean of every step",
			res:  tail,
			want: Summary{
				Path: "parallel.json", Format: "chrome", Verdict: analyze.Parallel, Confidence: analyze.High,
				Steps: 3, StepTime: 10 * ms, DeviceBusy: 7 * ms, Input: 3 * ms, Sync: 2 * ms,
				StepMedian: 10 * ms, StepP90: 10 * ms, Stability: "stable",
				Utilization: 0.6, Idle: idleOf(nil, nil),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Version, tt.want.Syncs = SummaryVersion, []SyncSite{}
			got := Summarize(tt.res)
			if tt.want.Window == nil {
				got.Window = nil // the window's figures are checked in one case
			}
			if !summariesEqual(got, tt.want) {
				t.Errorf("Summarize:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// summariesEqual compares Summaries with shares equal to 1e-12.
func summariesEqual(a, b Summary) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-12 }
	if !near(a.Utilization, b.Utilization) || !near(a.IdleShare, b.IdleShare) || len(a.Idle) != len(b.Idle) {
		return false
	}
	for i := range a.Idle {
		if !near(a.Idle[i].Share, b.Idle[i].Share) {
			return false
		}
		b.Idle[i].Share = a.Idle[i].Share
	}
	a.Utilization, a.IdleShare = 0, 0
	b.Utilization, b.IdleShare = 0, 0
	return reflect.DeepEqual(a, b)
}

// TestSummaryJSON checks that a Summary survives the store: what the service
// keeps compares as the Summary it was made from.
func TestSummaryJSON(t *testing.T) {
	r := run(analyze.Sequential, 4, 130*ms, 90*ms, 20*ms, 25*ms, idle(map[analyze.Cause]int64{analyze.InSync: 100 * ms}, 3*ms))
	r.Gaps = nil
	addSyncGap(r, 20*ms, "ProfilerStep#5", "aten::item", "cudaMemcpyAsync")
	s := Summarize(r)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("after JSON:\n got %+v\nwant %+v", back, s)
	}
	base := run(analyze.Parallel, 4, 100*ms, 90*ms, 0, 0, analyze.Breakdown{})
	if a, b := Compare(Summarize(base), s, Options{}), Compare(Summarize(base), back, Options{}); !reflect.DeepEqual(a.Synthetic, b.Synthetic) || len(a.Rows) != len(b.Rows) {
		t.Errorf("comparisons differ after JSON: %+v vs %+v", a.Synthetic, b.Synthetic)
	}
}

// TestOlderSummary compares a Summary that lacks a cause (stored before the
// cause existed) as if that cause were zero.
func TestOlderSummary(t *testing.T) {
	base := Summarize(run(analyze.Parallel, 4, 100*ms, 90*ms, 1*ms, 0, idle(map[analyze.Cause]int64{analyze.Host: 40 * ms}, 0)))
	base.Idle = slices.DeleteFunc(base.Idle, func(ci CauseIdle) bool { return ci.Cause == "untraced" })
	next := Summarize(run(analyze.Parallel, 4, 100*ms, 90*ms, 1*ms, 0, idle(map[analyze.Cause]int64{analyze.Untraced: 8 * ms}, 0)))
	c := Compare(base, next, Options{})
	if r := c.Row("idle untraced per step"); r == nil || r.Base != 0 || r.New != float64(2*ms) {
		t.Errorf("untraced row = %+v, want 0 -> 2 ms", r)
	}
}

func TestCompareRows(t *testing.T) {
	base := run(analyze.DataBound, 4, 150*ms, 80*ms, 50*ms, 0, idle(map[analyze.Cause]int64{analyze.Input: 240 * ms}, 0))
	next := run(analyze.Parallel, 4, 100*ms, 80*ms, 2*ms, 0, idle(map[analyze.Cause]int64{analyze.Host: 40 * ms}, 0))
	c := compareRuns(base, next, Options{})

	step := c.Row(MetricStepTime)
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
	host := func(extra map[analyze.Cause]int64) analyze.Breakdown {
		m := map[analyze.Cause]int64{analyze.Host: 40 * ms}
		for c, d := range extra {
			m[c] += d
		}
		return idle(m, 0)
	}
	base := run(analyze.Parallel, 4, 100*ms, 90*ms, 1*ms, 0, host(nil))
	tests := []struct {
		name  string
		next  *analyze.Result
		limit float64
		want  []string
	}{
		{"same", run(analyze.Parallel, 4, 100*ms, 90*ms, 1*ms, 0, host(nil)), 0.05, nil},
		{"step time within limit", run(analyze.Parallel, 4, 104*ms, 90*ms, 1*ms, 0, host(nil)), 0.05, nil},
		{"step time over limit", run(analyze.Parallel, 4, 106*ms, 90*ms, 1*ms, 0, host(nil)), 0.05, []string{MetricStepTime}},
		// 10% -> 16.6% of the window is 6.6 points, over 5.
		{"idle share over limit", run(analyze.Sequential, 4, 100*ms, 90*ms, 1*ms, 0, host(map[analyze.Cause]int64{analyze.InSync: 26 * ms})), 0.05, []string{MetricIdleShare}},
		{"idle share within a wider limit", run(analyze.Sequential, 4, 100*ms, 90*ms, 1*ms, 0, host(map[analyze.Cause]int64{analyze.InSync: 26 * ms})), 0.10, nil},
		{"both", run(analyze.Sequential, 4, 120*ms, 90*ms, 1*ms, 0, host(map[analyze.Cause]int64{analyze.Host: 160 * ms})), 0.05, []string{MetricStepTime, MetricIdleShare}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range compareRuns(base, tt.next, Options{}).FindRegressions(tt.limit) {
				got = append(got, r.Metric)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("FindRegressions(%g) = %q, want %q", tt.limit, got, tt.want)
			}
		})
	}
	c := compareRuns(base, run(analyze.Parallel, 4, 110*ms, 90*ms, 1*ms, 0, host(nil)), Options{})
	got := c.Check(0.05)
	want := []Regression{{Metric: MetricStepTime, Base: float64(100 * ms), New: float64(110 * ms), Change: 0.1, Limit: 0.05}}
	if len(got) != 1 || math.Abs(got[0].Change-0.1) > 1e-12 {
		t.Fatalf("Check(0.05) = %+v, want %+v", got, want)
	}
	got[0].Change = 0.1
	if !reflect.DeepEqual(got, want) || c.Limit != 0.05 || !reflect.DeepEqual(c.Regressions, got) {
		t.Errorf("Check(0.05) = %+v (kept %g, %+v), want %+v", got, c.Limit, c.Regressions, want)
	}
}

// addSyncGap adds to r a gap whose waited-for thread sat in stack for
// dur.
func addSyncGap(r *analyze.Result, dur int64, stack ...string) {
	g := analyze.Gap{Device: "GPU:0", Dur: dur, Cause: analyze.InSync}
	r.SetSegments(&g,
		analyze.NamedSegment{Dur: dur, Cause: analyze.InSync, Stack: stack},
		analyze.NamedSegment{Dur: dur / 10, Cause: analyze.AfterSync, Stack: []string{"ProfilerStep#7", "aten::add"}})
	r.Gaps = append(r.Gaps, g)
}

func TestSynthetic(t *testing.T) {
	synthetic := run(analyze.Parallel, 4, 100*ms, 90*ms, 0, 0, idle(map[analyze.Cause]int64{analyze.Host: 10 * ms}, 0))
	real := run(analyze.Parallel, 4, 100*ms, 90*ms, 2*ms, 0, analyze.Breakdown{})
	tests := []struct {
		name       string
		base, next *analyze.Result
		force      bool
		detected   bool
		fits       bool
		slower     bool
		outcome    Outcome
		syncNames  []string
		// unseen is set when the new run shows no input event.
		unseen bool
	}{
		{
			name: "input fits, at target", base: synthetic, detected: true, fits: true,
			next:    run(analyze.Parallel, 4, 103*ms, 90*ms, 20*ms, 0, idle(map[analyze.Cause]int64{analyze.Host: 10 * ms}, 0)),
			outcome: KeepsUp,
		},
		{
			name: "input fits, slower: a sync", base: synthetic, detected: true, fits: true, slower: true,
			next: func() *analyze.Result {
				r := run(analyze.Sequential, 4, 130*ms, 90*ms, 20*ms, 25*ms, idle(map[analyze.Cause]int64{analyze.InSync: 100 * ms}, 0))
				r.Gaps = nil
				addSyncGap(r, 20*ms, "ProfilerStep#5", "aten::item", "aten::_local_scalar_dense", "cudaMemcpyAsync")
				addSyncGap(r, 30*ms, "ProfilerStep#6", "aten::item", "aten::_local_scalar_dense", "cudaMemcpyAsync")
				addSyncGap(r, 5*ms, "ProfilerStep#6", "cudaDeviceSynchronize")
				return r
			}(),
			outcome:   SyncBound,
			syncNames: []string{"cudaMemcpyAsync", "cudaDeviceSynchronize"},
		},
		{
			name: "input longer than compute", base: synthetic, detected: true, slower: true,
			next:    run(analyze.DataBound, 4, 150*ms, 90*ms, 95*ms, 0, idle(map[analyze.Cause]int64{analyze.Input: 200 * ms}, 0)),
			outcome: InputBound,
		},
		{
			// No input event in the new run: the test cannot tell its
			// input from a sync.
			name: "input unseen, slower", base: synthetic, detected: true, slower: true, unseen: true,
			next:    run(analyze.HostBound, 4, 130*ms, 90*ms, 0, 0, idle(map[analyze.Cause]int64{analyze.Untraced: 100 * ms}, 0)),
			outcome: InputUnseen,
		},
		{
			// Neither run shows input: the base may not be synthetic.
			name: "input unseen, at target", base: synthetic, next: synthetic, detected: true, unseen: true,
			outcome: InputUnseen,
		},
		{
			// Declared synthetic, and the new run reaches it: no input
			// figure is needed to say it keeps up.
			name: "input unseen, declared base, at target", base: synthetic, next: synthetic, force: true, detected: true, unseen: true,
			outcome: KeepsUp,
		},
		{name: "real base not detected", base: real, next: real},
		{name: "real base forced", base: real, force: true, detected: true, fits: true, next: real, outcome: KeepsUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := compareRuns(tt.base, tt.next, Options{SyntheticBase: tt.force}).Synthetic
			if (s != nil) != tt.detected {
				t.Fatalf("synthetic test run = %v, want %v", s != nil, tt.detected)
			}
			if s == nil {
				return
			}
			if s.Forced != tt.force || s.InputFits != tt.fits || s.Slower != tt.slower || s.Outcome != tt.outcome || s.Target != tt.base.Steps[0].Dur {
				t.Errorf("got forced %v fits %v slower %v outcome %s target %d, want %v %v %v %s %d",
					s.Forced, s.InputFits, s.Slower, s.Outcome, s.Target, tt.force, tt.fits, tt.slower, tt.outcome, tt.base.Steps[0].Dur)
			}
			if (s.InputUnseen != "") != tt.unseen {
				t.Errorf("input unseen %q, want unseen %v", s.InputUnseen, tt.unseen)
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
	r := &analyze.Result{}
	addSyncGap(r, 2*ms, "ProfilerStep#5", "aten::item", "cudaStreamSynchronize")
	addSyncGap(r, 3*ms, "ProfilerStep#12", "aten::item", "cudaStreamSynchronize")
	sites := syncSites(r)
	if len(sites) != 1 {
		t.Fatalf("syncSites = %+v, want one site", sites)
	}
	want := []string{"ProfilerStep#N", "aten::item", "cudaStreamSynchronize"}
	if s := sites[0]; s.Time != 5*ms || s.Gaps != 2 || !slices.Equal(s.Stack, want) {
		t.Errorf("site = %+v, want 5 ms in 2 gaps with stack %q", s, want)
	}
}

func TestSyncSitesAfterSync(t *testing.T) {
	r := &analyze.Result{Gaps: make([]analyze.Gap, 2)}
	r.SetSegments(&r.Gaps[0], analyze.NamedSegment{Dur: 4 * ms, Cause: analyze.AfterSync, Stack: []string{"aten::linear"}, Sync: "cudaStreamSynchronize"})
	r.SetSegments(&r.Gaps[1],
		analyze.NamedSegment{Dur: 1 * ms, Cause: analyze.InSync, Stack: []string{"aten::item", "cudaStreamSynchronize"}},
		analyze.NamedSegment{Dur: 2 * ms, Cause: analyze.AfterSync, Stack: []string{"aten::linear"}, Sync: "cudaStreamSynchronize"},
		analyze.NamedSegment{Dur: 9 * ms, Cause: analyze.AfterSync, Stack: []string{"aten::linear"}}) // the call is not known
	sites := syncSites(r)
	want := []string{"aten::item", "cudaStreamSynchronize"}
	if len(sites) != 1 || sites[0].Time != 7*ms || sites[0].Gaps != 2 || !slices.Equal(sites[0].Stack, want) {
		t.Errorf("syncSites = %+v, want cudaStreamSynchronize for 7 ms in 2 gaps, stack %q", sites, want)
	}
}

// TestSyncSitesPerDevice checks that sync sites' times are averaged over
// devices, as every other figure of a Summary is. Each step loads 5 ms,
// dispatches 1 ms, then syncs (aten::item) on its 20 ms kernel, on two
// devices in step: each device idles 6 ms of every 26 after the sync, so
// the five steady steps hold a gap on each device, about 30 ms per device
// in all. The sites hold exactly the window's sync idle, which is averaged
// over devices: summed over them, they would hold twice that.
func TestSyncSitesPerDevice(t *testing.T) {
	loop := tracetest.Loop{Steps: 6, Input: 5 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, Devices: 2}
	r, err := advice.Analyze(tracetest.Build(loop.Spec()), analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(r)
	var sum int64
	for _, site := range s.Syncs {
		sum += site.Time
	}
	if want := r.Idle.Sync(); sum != want {
		t.Errorf("sync sites %+v hold %d ns, want the window's sync idle %d ns (per device)", s.Syncs, sum, want)
	}
	if len(s.Syncs) == 0 || s.Syncs[0].Name != "aten::item" || s.Syncs[0].Gaps != 2*5 {
		t.Errorf("sync sites %+v, want aten::item first, in 10 gaps (5 on each device)", s.Syncs)
	}
}

// TestSyntheticGenerated runs the synthetic-data test on generated loops.
// The base has no input and syncs on the previous step's work, so its
// device never idles: a 20 ms kernel every 20 ms.
func TestSyntheticGenerated(t *testing.T) {
	summarizeLoop := func(l tracetest.Loop) Summary {
		t.Helper()
		r, err := advice.Analyze(tracetest.Build(l.Spec()), analyze.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		return Summarize(r)
	}
	base := summarizeLoop(tracetest.Loop{Steps: 6, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, SyncPrevious: true})
	// Each steady step holds one 20 ms kernel.
	compute := int64(20 * ms)
	tests := []struct {
		name string
		loop tracetest.Loop
		want Synthetic // Syncs and InputFinding left out
		// finding is the ID of the new run's input finding.
		finding string
	}{
		{
			// 5 ms of input, 1 ms of dispatch, then a sync on this
			// step's kernel: the device idles 6 ms of every 26.
			name: "sync in the step",
			loop: tracetest.Loop{Steps: 6, Input: 5 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true},
			want: Synthetic{Target: 20 * ms, BaseCompute: compute, NewStep: 26 * ms, NewInput: 5 * ms,
				NewSync: 20 * ms, NewAfterSync: 6 * ms, NewSyncIdle: 6 * ms, InputFits: true, Slower: true, Outcome: SyncBound},
		},
		{
			name: "sync on the previous step",
			loop: tracetest.Loop{Steps: 6, Input: 5 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, SyncPrevious: true},
			want: Synthetic{Target: 20 * ms, BaseCompute: compute, NewStep: 20 * ms, NewInput: 5 * ms,
				// Each step syncs 14 ms on the previous kernel, but
				// step 2 waits on step 1's kernel, launched 5 us
				// (step 1's SyncMin) earlier in the pace: the mean over
				// the five steps is 1 us short.
				NewSync: 14*ms - tracetest.SyncMin/5, InputFits: true, Outcome: KeepsUp},
		},
		{
			// 30 ms of input cannot hide behind 20 ms of compute: a step
			// every 31 ms (plus the 5 us a sync takes at least).
			name: "slow input",
			loop: tracetest.Loop{Steps: 6, Input: 30 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, SyncPrevious: true},
			want: Synthetic{Target: 20 * ms, BaseCompute: compute, NewStep: 31*ms + tracetest.SyncMin, NewInput: 30 * ms,
				NewSync: tracetest.SyncMin, NewInputIdle: 10*ms + tracetest.SyncMin, Slower: true, Outcome: InputBound},
			finding: "slow-input",
		},
		{
			// analyze's l scenario at twice the scale: each step loads
			// 12 ms inline, then four 3 ms ops each launch a 4 ms
			// kernel at their end, and nothing syncs. From a step's host
			// start h the kernels run over [h+15, h+31); the next step's
			// first starts at h+39: the gap is the last 5 ms of the next
			// load and 3 ms of its first op. A step every 24 ms; the
			// input (12 ms) fits inside the base's compute (20 ms) and
			// the new run's (16 ms), but runs inline, not overlapped:
			// the verdict rule's sequential case, not a sync.
			name: "inline loader, fast enough, not overlapped",
			loop: tracetest.Loop{Steps: 6, Input: 12 * ms, Dispatch: 3 * ms, Kernels: 4, Compute: 4 * ms},
			want: Synthetic{Target: 20 * ms, BaseCompute: compute, NewStep: 24 * ms, NewInput: 12 * ms,
				NewInputIdle: 5 * ms, InputFits: true, Slower: true, Outcome: InlineInput},
			finding: "inline-input",
		},
		{
			// The same timeline with the loop waiting on worker
			// processes' queue: the loader already runs in the
			// background, so more of it is the fix (data-bound).
			name: "background workers waited on",
			loop: tracetest.Loop{Steps: 6, Input: 12 * ms, InputName: tracetest.MultiProcessLoader, Dispatch: 3 * ms, Kernels: 4, Compute: 4 * ms},
			want: Synthetic{Target: 20 * ms, BaseCompute: compute, NewStep: 24 * ms, NewInput: 12 * ms,
				NewInputIdle: 5 * ms, InputFits: true, Slower: true, Outcome: InputBound},
			finding: "slow-input",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Compare(base, summarizeLoop(tt.loop), Options{}).Synthetic
			if s == nil {
				t.Fatal("the base, fed no input, was not read as synthetic")
			}
			got := *s
			if id := findingID(got.InputFinding); id != tt.finding {
				t.Errorf("input finding %q, want %q", id, tt.finding)
			}
			got.Syncs, got.InputFinding = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func findingID(f *InputFinding) string {
	if f == nil {
		return ""
	}
	return f.ID
}

// TestSyntheticJAX runs the synthetic-data test on generated JAX programs
// written as XPlane. The base feeds no input and queues two calls ahead:
// its device runs a 10 ms step back to back. The new run loads 20 ms with
// grain before each 1 ms call (jax-c in analyze's scenarios): a step every
// 21 ms. With the Python tracer, its loading is seen and longer than the
// base's compute; without it, the loop thread shows nothing while it
// loads, and the test says so instead of concluding.
func TestSyntheticJAX(t *testing.T) {
	summarize := func(p tracetest.JAXProgram) Summary { return summarizeXPlane(t, p) }
	base := summarize(tracetest.JAXProgram{Steps: 6, Dispatch: ms, Compute: 10 * ms, Depth: 2})
	slow := tracetest.JAXProgram{Steps: 6, Load: 20 * ms, Dispatch: ms, Compute: 10 * ms}
	blind := slow
	blind.NoPythonTracer = true
	tests := []struct {
		name    string
		program tracetest.JAXProgram
		force   bool
		want    Synthetic // Syncs and InputFinding left out
	}{
		{
			name: "Python tracer on", program: slow,
			// Input idle: jax-c's 10 ms a step, less its 10 us of
			// untraced idle over the five steps.
			want: Synthetic{Target: 10 * ms, BaseCompute: 10 * ms, NewStep: 21 * ms, NewInput: 20 * ms,
				NewInputIdle: 10*ms - 10*us/5, Slower: true, Outcome: InputBound},
		},
		{
			name: "Python tracer off", program: blind,
			want: Synthetic{Target: 10 * ms, BaseCompute: 10 * ms, NewStep: 21 * ms, Slower: true,
				InputUnseen: unseenNoPythonTracer, Outcome: InputUnseen},
		},
		{
			name: "Python tracer off, base declared", program: blind, force: true,
			want: Synthetic{Forced: true, Target: 10 * ms, BaseCompute: 10 * ms, NewStep: 21 * ms, Slower: true,
				InputUnseen: unseenNoPythonTracer, Outcome: InputUnseen},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Compare(base, summarize(tt.program), Options{SyntheticBase: tt.force}).Synthetic
			if s == nil {
				t.Fatal("the base, fed no input, was not read as synthetic")
			}
			got := *s
			got.Syncs, got.InputFinding = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// summarizeXPlane writes the program as an XPlane, reads it back and
// summarizes its analysis.
func summarizeXPlane(t *testing.T, p tracetest.JAXProgram) Summary {
	t.Helper()
	var buf bytes.Buffer
	if err := tracetest.WriteXPlane(&buf, p.Spec()); err != nil {
		t.Fatal(err)
	}
	tr, err := xplane.Decode(buf.Bytes(), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := advice.Analyze(tr, analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return Summarize(r)
}
