package jobadvice

import (
	"fmt"
	"strings"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/human"
)

// reasons writes the job's reasons: what decided its verdict, the ranks'
// own reasons (merged where several ranks give the same), what the job
// analysis could not see or match, and its own doubts.
func reasons(res *job.Result) {
	o := &res.Overall
	if o.Verdict == analyze.NoDevice {
		o.Reasons = []string{"no rank's trace holds device activity (no kernels, copies or device ops): nothing to attribute"}
		return
	}
	rs := []string{"over the job's ranks, with collective waits counted as idle: " + advice.DecisionSentence(&res.Facts.Decision)}
	rs = append(rs, rankReasons(res)...)
	for _, n := range res.Facts.Notes {
		rs = append(rs, noteSentence(n))
	}
	if w := &res.Wait; w.MostlyLate() {
		rs = append(rs, fmt.Sprintf("most collective waiting (%s of %s, summed over ranks) was carried in from before the stretch it was measured over: the straggler entered it late, and the trace does not show why", human.Duration(w.Late), human.Duration(w.Total())))
	}
	if o.Idle.MostlyUntraced(o.Window.Dur()) {
		rs = append(rs, fmt.Sprintf("the largest share of device idle (%s per rank) falls where the waited-for host thread shows no event: it was not traced", human.Duration(o.Idle.Of(analyze.Untraced))))
	}
	o.Reasons = rs
}

// rankReasons merges the ranks' reasons: each once, in the order first
// given, naming the ranks that give it.
func rankReasons(res *job.Result) []string {
	var order []string
	who := map[string][]string{}
	for _, r := range res.Ranks {
		for _, s := range job.RankReasons(r.Result) {
			if who[s] == nil {
				order = append(order, s)
			}
			who[s] = append(who[s], fmt.Sprint(r.Rank))
		}
	}
	var rs []string
	for _, s := range order {
		ranks := "rank " + who[s][0]
		switch {
		case len(who[s]) == len(res.Ranks):
			ranks = "every rank"
		case len(who[s]) > 1:
			ranks = "ranks " + strings.Join(who[s], ", ")
		}
		rs = append(rs, ranks+": "+s)
	}
	return rs
}

// noteSentence says what the job analysis could not see or match.
func noteSentence(n job.Note) string {
	switch n.Kind {
	case job.NoteInputOrder:
		return "not every trace names its rank (Kineto distributedInfo): ranks are numbered in input order"
	case job.NoteMissingRanks:
		return fmt.Sprintf("%d of the job's %d ranks were given: the others' waits and stragglers are not seen", n.N, n.M)
	case job.NoteFewActive:
		return "fewer than 2 ranks have device work: no collective can be matched across ranks"
	case job.NoteNoStepMarkers:
		return "not every rank has step markers: the k-th collective of each rank's whole trace is taken to be the same one"
	case job.NoteNoCommonStep:
		return "the ranks' traces share no step number (captured at different steps?): their collectives cannot be matched"
	case job.NoteMismatch:
		return fmt.Sprintf("in %d step(s) the ranks ran different numbers of collectives: only as many as every rank ran are matched, in order", n.N)
	}
	return ""
}

// clockSentence says how the ranks' clocks were aligned.
func clockSentence(c *job.ClockFacts) string {
	var s string
	switch {
	case c.Matched == 0:
		s = "no collective matched across ranks: each rank's clock is taken as is"
	case c.Worst == 0:
		s = fmt.Sprintf("the ranks' clocks agree: their matched collectives (%d) end at the same instants", c.Matched)
	default:
		s = fmt.Sprintf("clocks aligned on the ends of the ranks' collectives, which finish together: the largest correction is %s (rank %d)", human.Duration(c.Worst), c.WorstRank)
	}
	if len(c.Unmatched) > 0 {
		s += fmt.Sprintf("; rank(s) %s share no matched collective with rank %d and keep their own clock", strings.Join(c.Unmatched, ", "), c.Ref)
	}
	return s
}
