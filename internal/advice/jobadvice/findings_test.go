package jobadvice

import (
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
)

const msec = int64(1_000_000)

// plainJob is a job of two ranks with 100 ms windows, from plain data: the
// ranks waited wait in collectives (compute of it for a rank with more
// work) and transferred for transfer, summed over the ranks.
func plainJob(wait, compute, transfer int64, clockFixed bool) *job.Result {
	opt := analyze.DefaultOptions()
	rank := func(n int) job.Rank {
		return job.Rank{Rank: n, Result: &analyze.Result{Window: analyze.Window{End: 100 * msec}, Options: opt}}
	}
	var w job.WaitSplit
	w.Idle.Add(analyze.Host, wait-compute)
	w.Compute = compute
	return &job.Result{
		Overall: analyze.Result{Verdict: analyze.Parallel, Options: opt},
		Ranks:   []job.Rank{rank(0), rank(1)},
		Wait:    w, Transfer: transfer,
		Facts: job.Facts{Active: []int{0, 1}, ClockFixed: clockFixed},
	}
}

// TestJobFindingsFromPlainData: the collectives' wait, load imbalance and
// clock findings from a job's figures alone, with their figures per rank
// and shares of the ranks' 200 ms.
func TestJobFindingsFromPlainData(t *testing.T) {
	tests := []struct {
		name                    string
		wait, compute, transfer int64
		clockFixed              bool
		want                    []string // finding ids, in order
		says                    string   // in the first finding's message
	}{
		{"no collectives", 0, 0, 0, false, nil, ""},
		{"small wait", 4 * msec, 0, 6 * msec, false, []string{advice.FindCollectiveWait}, "Collectives took 5.00 ms per rank over the window: 2.00 ms (40.0% of their time) waiting"},
		{"imbalance", 30 * msec, 20 * msec, 10 * msec, true, []string{advice.FindCollectiveWait, advice.FindLoadImbalance, advice.FindClockAlignment}, "the wait is 15.0% of the ranks' time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := plainJob(tt.wait, tt.compute, tt.transfer, tt.clockFixed)
			Add(res)
			var got []string
			for _, f := range res.Overall.Findings {
				got = append(got, f.ID)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("findings %q, want %q", got, tt.want)
			}
			if len(got) > 0 && !strings.Contains(res.Overall.Findings[0].Message, tt.says) {
				t.Errorf("message %q lacks %q", res.Overall.Findings[0].Message, tt.says)
			}
		})
	}
}

// TestJobReasonsAndClock: the job's reasons carry the ranks' own (each
// once, naming the ranks), then its notes, and the clock sentence says how
// the clocks were aligned, all from plain data.
func TestJobReasonsAndClock(t *testing.T) {
	res := plainJob(0, 0, 0, true)
	res.Ranks[0].Result.Reasons = []string{"rank 0 decided", "too few steps", "cut short"}
	res.Ranks[1].Result.Reasons = []string{"rank 1 decided", "too few steps"}
	res.Facts.Notes = []job.Note{{Kind: job.NoteMissingRanks, N: 2, M: 8}, {Kind: job.NoteMismatch, N: 3}}
	res.Facts.Clock = job.ClockFacts{Matched: 12, Worst: 2 * msec, WorstRank: 1, Unmatched: []string{"3"}, Ref: 0}
	Add(res)
	want := []string{
		"over the job's ranks, with collective waits counted as idle: the window is empty",
		"every rank: too few steps",
		"rank 0: cut short",
		"2 of the job's 8 ranks were given: the others' waits and stragglers are not seen",
		"in 3 step(s) the ranks ran different numbers of collectives: only as many as every rank ran are matched, in order",
	}
	if got := res.Overall.Reasons; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reasons %q, want %q", got, want)
	}
	if want := "clocks aligned on the ends of the ranks' collectives, which finish together: the largest correction is 2.00 ms (rank 1); rank(s) 3 share no matched collective with rank 0 and keep their own clock"; res.Clock != want {
		t.Errorf("clock %q, want %q", res.Clock, want)
	}
}
