package advice

import (
	"fmt"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// DecisionSentence says what decided a verdict, with the deciding figures:
// the first of a result's reasons, which the summary shows.
func DecisionSentence(d *analyze.Decision) string {
	switch d.How {
	case analyze.DecidedEmpty:
		return "the window is empty"
	case analyze.DecidedByUntraced:
		return fmt.Sprintf("device idle while the waited-for host thread shows no event is %s of the window (over the host threshold %s): the device waits on host time the profile does not show",
			human.Share(d.Untraced), human.Share(d.HostThreshold))
	case analyze.DecidedNone:
		sh := &d.Shares
		return fmt.Sprintf("no cause of device idle passes its threshold: sync %s (threshold %s), input %s (%s), other host work %s (%s), stalled %s (%s)",
			human.Share(sh[0].Share), human.Share(sh[0].Threshold), human.Share(sh[1].Share), human.Share(sh[1].Threshold), human.Share(sh[2].Share), human.Share(sh[2].Threshold), human.Share(sh[3].Share), human.Share(sh[3].Threshold))
	}
	top := d.Top
	what := top.Name + "-caused device idle"
	switch top.Name {
	case "host":
		what = "device idle caused by other host work (dispatch, launches, Python, runtime)"
	case "stalled":
		what = "device idle with the work that ended it already queued (stalled on a dependency, not on the host)"
	}
	why := fmt.Sprintf("%s is %s of the window (threshold %s)", what, human.Share(top.Share), human.Share(top.Threshold))
	return why + loadClause(top.Name, d.Slow, d.Background, d.Input, d.Busy)
}

// loadClause says how loading compares with compute where that decided
// between sequential and data-bound.
func loadClause(cause string, slow, background bool, input, busy int64) string {
	l, c := human.Duration(input), human.Duration(busy)
	switch {
	case cause == "sync" && slow:
		return fmt.Sprintf(", and the input it exposes (%s) takes longer than the device's compute (%s), so removing the sync would not hide it", l, c)
	case cause == "input" && background:
		// L is then the loop's wait on the workers, not their time per batch.
		return fmt.Sprintf(", and the loader already runs in background workers: the loop still waits on their queue (%s against compute %s), so they deliver batches more slowly than compute", l, c)
	case cause == "input" && slow:
		return fmt.Sprintf(", and loading (%s) takes longer than the device's compute (%s)", l, c)
	case cause == "input":
		return fmt.Sprintf(", and loading (%s) is faster than the device's compute (%s) but runs inline, not overlapped with it", l, c)
	}
	return ""
}
