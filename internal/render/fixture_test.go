package render

import (
	"github.com/tracegap/tracegap/internal/analyze"
)

// fixtureResult is a small data-bound run with known figures: one GPU, a
// 10 ms window of two steps, three gaps (input, in-sync, untraced) and one
// finding whose text holds Markdown and HTML metacharacters.
func fixtureResult() *analyze.Result {
	r := &analyze.Result{
		Source: analyze.Source{
			Path: "runs/a.pt.trace.json.gz", Format: "chrome", Bytes: 12_345_678, Events: 54_321, Tracks: 9,
			Warnings: []string{"dropped 3 events with a negative duration"},
		},
		Verdict:    analyze.DataBound,
		Confidence: analyze.High,
		Reasons:    []string{"input-caused device idle is 15.0% of the window (threshold 5.0%)"},
		Secondary:  []analyze.Verdict{analyze.Sequential},
		Options:    analyze.DefaultOptions(),
		Window:     analyze.Window{Start: 1 * ms, End: 11 * ms, Steps: 2, StepSource: "ProfilerStep"},
		Devices: []analyze.Device{{
			ID: "GPU:0", Start: 0, End: 12 * ms, Busy: 9_350_000, Idle: 2_650_000,
			Utilization: 9.35 / 12, Gaps: 3, WindowBusy: 7_350_000,
			WindowIdle: analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.InSync: 500_000, analyze.Input: 1_500_000, analyze.Host: 500_000, analyze.Untraced: 100_000}, BelowMinGap: 50_000},
			Intervals: []analyze.Interval{
				{Start: 0, End: 2 * ms}, {Start: 4 * ms, End: 6 * ms}, {Start: 6_500_000, End: 8 * ms},
				{Start: 8_100_000, End: 10 * ms}, {Start: 10_050_000, End: 12 * ms},
			},
		}},
		Idle: analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.InSync: 500_000, analyze.Input: 1_500_000, analyze.Host: 500_000, analyze.Untraced: 100_000}, BelowMinGap: 50_000},
		Steps: []analyze.Step{
			{Name: "ProfilerStep#1", Num: 1, Start: 1 * ms, Dur: 5 * ms, DeviceBusy: 3 * ms, Input: 1_500_000,
				Idle: analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.Input: 1_500_000, analyze.Host: 500_000}}, Verdict: analyze.DataBound},
			{Name: "ProfilerStep#2", Num: 2, Start: 6 * ms, Dur: 5 * ms, DeviceBusy: 4_400_000, Sync: 500_000,
				Idle: analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.InSync: 500_000, analyze.Untraced: 100_000}, BelowMinGap: 50_000}, Verdict: analyze.Sequential},
		},
		Gaps: []analyze.Gap{
			{Device: "GPU:0", Start: 2 * ms, Dur: 2 * ms, Cause: analyze.Input, Thread: "thread 7 (python)", Track: 3, Step: 0,
				Split: analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.Input: 1_500_000, analyze.Host: 500_000}}},
			{Device: "GPU:0", Start: 6 * ms, Dur: 500_000, Cause: analyze.InSync, Thread: "thread 7 (python)", Track: 3, Step: 1,
				Split: analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.InSync: 500_000}}},
			{Device: "GPU:0", Start: 8 * ms, Dur: 100_000, Cause: analyze.Untraced, Thread: "thread 7 (python)", Track: 3, Step: 1,
				Split: analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.Untraced: 100_000}}},
		},
		TopGaps: []int{0, 1, 2},
		Findings: []analyze.Finding{{
			ID: "slow-input", Severity: "high",
			Message: "Single-process DataLoader takes 750 us per step | against <3.70 ms> of GPU work",
			Fix:     "DataLoader(num_workers=2, pin_memory=True)",
		}},
	}
	r.SetSegments(&r.Gaps[0],
		analyze.NamedSegment{Start: 2 * ms, Dur: 1_500_000, Cause: analyze.Input, Stack: []string{"ProfilerStep#1", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"}},
		analyze.NamedSegment{Start: 3_500_000, Dur: 500_000, Cause: analyze.Host, Stack: []string{"ProfilerStep#1", "aten::copy_"}})
	r.SetSegments(&r.Gaps[1],
		analyze.NamedSegment{Start: 6 * ms, Dur: 500_000, Cause: analyze.InSync, Stack: []string{"ProfilerStep#2", "aten::item", "cudaStreamSynchronize"}})
	r.SetSegments(&r.Gaps[2], analyze.NamedSegment{Start: 8 * ms, Dur: 100_000, Cause: analyze.Untraced})
	return r
}
