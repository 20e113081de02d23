// Package jobadvice writes a job's own findings (the straggler, the
// collectives' wait, step spread, load imbalance, clock alignment) from the
// plain data of a job analysis (job.Result and its Facts), as package
// advice writes a single run's.
package jobadvice

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/human"
)

// adviser writes the findings of one job.
type adviser struct {
	res *job.Result
}

// Add writes the job's clock sentence (Clock), its reasons and its
// findings, most severe first (Overall.Reasons, Overall.Findings), from its
// figures, its ranks' findings and reasons, and its Facts; and how to name
// call sites (Overall.StackHint), which a job's report has none of.
func Add(res *job.Result) {
	res.Clock = clockSentence(&res.Facts.Clock)
	reasons(res)
	(&adviser{res: res}).findings()
	ranks := make([]*analyze.Result, len(res.Ranks))
	for i := range res.Ranks {
		ranks[i] = res.Ranks[i].Result
	}
	res.Overall.StackHint = advice.JobStackHint(ranks)
}

// findings writes the job's conclusions, most severe first: the straggler,
// the collectives' wait and transfer, why step lengths differ across
// ranks, load imbalance, and how the clocks were aligned.
func (j *adviser) findings() {
	o := &j.res.Overall
	if o.Verdict == analyze.NoDevice {
		return
	}
	var fs []analyze.Finding
	for _, f := range []func() (analyze.Finding, bool){j.stragglerFinding, j.waitFinding, j.spreadFinding, j.imbalanceFinding} {
		if f, ok := f(); ok {
			fs = append(fs, f)
		}
	}
	// The straggler's finding carries the fix of the job's verdict when
	// its rank's cause gives that verdict (it is then high); else the
	// ranks' own finding for the verdict does.
	if !slices.ContainsFunc(fs, func(f analyze.Finding) bool { return f.Severity == "high" }) {
		if f, ok := j.verdictFinding(); ok {
			fs = append([]analyze.Finding{f}, fs...)
		}
	}
	if j.res.Facts.ClockFixed {
		fs = append(fs, analyze.Finding{
			ID: advice.FindClockAlignment, Severity: "info", Message: advice.Capitalize(j.res.Clock) + ".",
			Fix: "Nothing to fix: this is how the ranks' timelines were put side by side.",
		})
	}
	advice.SortFindings(fs)
	o.Findings = fs
}

// verdictFinding carries the finding and fix of the job's verdict from the
// ranks' own findings: of those that give the job's verdict, the one of the
// rank where it holds the most idle, with how many ranks share it. None
// when no rank has one (a parallel job, or a verdict only the collective
// waits gave).
func (j *adviser) verdictFinding() (analyze.Finding, bool) {
	v := j.res.Overall.Verdict
	var best *analyze.Finding
	bestRank, ranks := 0, 0
	active := j.active()
	for _, r := range active {
		for i := range r.Result.Findings {
			f := &r.Result.Findings[i]
			if advice.VerdictOf(f.ID) != v || f.Severity != "high" {
				continue
			}
			ranks++
			if best == nil || f.Idle > best.Idle {
				best, bestRank = f, r.Rank
			}
			break
		}
	}
	if best == nil {
		return analyze.Finding{}, false
	}
	f := *best
	f.Message = fmt.Sprintf("The job is %s, as the findings of %d of its %d ranks say. Rank %d, where it holds the most idle: %s",
		v, ranks, len(active), bestRank, best.Message)
	return f, true
}

// windowTime sums the ranks' window lengths: the time the job's shares are
// of when summed over ranks.
func (j *adviser) windowTime() int64 {
	var t int64
	for _, r := range j.active() {
		t += r.Result.Window.Dur()
	}
	return t
}

// stragglerFinding names the rank that made the others wait longest over
// the window's steps, and what held it back.
func (j *adviser) stragglerFinding() (analyze.Finding, bool) {
	imposed := make([]int64, len(j.res.Ranks))
	splits := make([]job.WaitSplit, len(j.res.Ranks))
	for _, js := range j.res.Steps {
		for _, c := range js.Collectives {
			imposed[c.Straggler] += c.Split.Total()
			splits[c.Straggler].Add(c.Split)
		}
	}
	best := 0
	for i := range imposed {
		if imposed[i] > imposed[best] {
			best = i
		}
	}
	if imposed[best] == 0 {
		return analyze.Finding{}, false
	}
	r := &j.res.Ranks[best]
	doing := splits[best].Doing()
	steps := len(j.res.Steps)
	msg := fmt.Sprintf("Rank %d holds the job back: it was the straggler in %d of %d step(s), and the other ranks waited for it %s in all in collectives (%s of the ranks' time)",
		r.Rank, j.res.Ranks[best].Straggles, steps, human.Duration(imposed[best]), human.Share(float64(imposed[best])/float64(max(j.windowTime(), 1))))
	msg += doingText(doing) + "."
	fix, id := doingFix(doing), doingFinding(doing)
	for _, f := range r.Result.Findings {
		if f.ID == id || id == advice.FindSlowInput && f.ID == advice.FindInlineInput {
			id = f.ID
			msg += fmt.Sprintf(" Rank %d alone: %s", r.Rank, f.Message)
			fix = f.Fix
			break
		}
	}
	sev := "medium"
	if advice.VerdictOf(id) == j.res.Overall.Verdict {
		sev = "high"
	}
	return analyze.Finding{ID: advice.FindStraggler, Severity: sev, Message: msg, Fix: fix}, true
}

// doingText says what the straggler did while the others waited.
func doingText(doing string) string {
	switch doing {
	case "input":
		return "; meanwhile its host was in the input pipeline"
	case "sync":
		return "; meanwhile its host was blocked on its own device (a forced synchronization)"
	case "host":
		return "; meanwhile its host was busy with other work (op dispatch, Python, CPU ops)"
	case "untraced":
		return "; meanwhile its launching host thread showed no traced event"
	case "compute":
		return "; meanwhile its device was still computing: it has more work per step than the others"
	case "late":
		return "; it was already behind when the stretch began (it entered the step, or left its previous collective, after the others), and the cause lies before what was traced"
	}
	return ""
}

// doingFinding is the ID of a rank's own finding about what held it back.
func doingFinding(doing string) string {
	switch doing {
	case "input":
		return advice.FindSlowInput
	case "sync":
		return advice.FindForcedSync
	case "host":
		return advice.FindDispatch
	case "untraced":
		return advice.FindUntracedThread
	}
	return ""
}

func doingFix(doing string) string {
	switch doing {
	case "input":
		return "Speed up the straggler's input pipeline: more loader workers, prefetching, or offline preprocessing."
	case "sync":
		return "Remove the straggler's forced synchronization from the step (.item(), print(loss), block_until_ready, blocking copies)."
	case "host":
		return "Cut the straggler's host overhead: CUDA graphs, compilation, fewer and larger ops."
	case "compute":
		return "Balance the work across ranks: shard embedding tables, batches and sequence lengths evenly, so that every rank's device has as much to do."
	case "late":
		return "Profile more steps, including the one before, to see what made the straggler late; make every rank do the same work before the step's first collective."
	}
	return "Profile the straggler with more activities (with_stack=True, user annotations) to see what it does."
}

// waitFinding splits the collectives' time into waiting and transfer.
func (j *adviser) waitFinding() (analyze.Finding, bool) {
	wait, transfer := j.res.Wait.Total(), j.res.Transfer
	if wait+transfer == 0 {
		return analyze.Finding{}, false
	}
	n := int64(len(j.active()))
	share := float64(wait) / float64(max(j.windowTime(), 1))
	sev := "info"
	if share > j.res.Overall.Options.InputThreshold {
		sev = "medium"
	}
	return analyze.Finding{
		ID: advice.FindCollectiveWait, Severity: sev,
		Message: fmt.Sprintf("Collectives took %s per rank over the window: %s (%s of their time) waiting for the slowest rank to arrive and %s transferring; the wait is %s of the ranks' time.",
			human.Duration((wait+transfer)/n), human.Duration(wait/n), human.Share(float64(wait)/float64(wait+transfer)), human.Duration(transfer/n), human.Share(share)),
		Fix: "The waiting part is not communication cost: it goes away when the straggler arrives on time. The transfer part is; overlap it with compute (DDP gradient buckets, FSDP prefetching).",
	}, true
}

// imbalanceFinding reports waits for ranks whose devices had more work.
func (j *adviser) imbalanceFinding() (analyze.Finding, bool) {
	c := j.res.Wait.Compute
	share := float64(c) / float64(max(j.windowTime(), 1))
	if c == 0 || share <= j.res.Overall.Options.InputThreshold {
		return analyze.Finding{}, false
	}
	return analyze.Finding{
		ID: advice.FindLoadImbalance, Severity: "medium",
		Message: fmt.Sprintf("Ranks waited %s in collectives (summed over ranks, %s of their time) for ranks whose devices had more work to do: the work is not spread evenly.", human.Duration(c), human.Share(share)),
		Fix:     doingFix("compute"),
	}, true
}

// spreadFinding explains why step lengths differ across ranks, for the
// step where they differ most: the ranks start it at different times and
// finish it together, because collectives make the early ones wait.
func (j *adviser) spreadFinding() (analyze.Finding, bool) {
	js, lo, hi := j.widestStep()
	if js == nil || js.Dur[hi] == 0 || float64(js.Dur[hi]-js.Dur[lo]) < 0.1*float64(js.Dur[hi]) {
		return analyze.Finding{}, false
	}
	if float64(js.Dur[hi]) > 1.1*float64(j.res.Ranks[hi].StepTime) {
		// The long rank's steps overlap: its host runs ahead and its step
		// markers measure queueing, not what the other ranks made it do.
		return analyze.Finding{}, false
	}
	rk := func(i int) int { return j.res.Ranks[i].Rank }
	var b strings.Builder
	fmt.Fprintf(&b, "Step lengths differ across ranks: %s takes %s on rank %d and %s on rank %d.",
		js.Name, human.Duration(js.Dur[lo]), rk(lo), human.Duration(js.Dur[hi]), rk(hi))
	first, last, startSpread, endSpread := j.stepSpread(js)
	fmt.Fprintf(&b, " The ranks entered it up to %s apart (rank %d first, rank %d last) and finished it within %s of each other",
		human.Duration(startSpread), rk(first), rk(last), human.Duration(endSpread))
	if endSpread < startSpread {
		b.WriteString(": collectives hold the ranks together, so a rank that starts early waits for the others.")
	} else {
		b.WriteString(".")
	}
	if w := waiters(js, 3); len(w) > 0 {
		b.WriteString(" Waiting in collectives: ")
		for k, i := range w {
			if k > 0 {
				b.WriteString("; ")
			}
			c := biggestWait(js, i)
			fmt.Fprintf(&b, "rank %d %s (%s in collective %d, %s, for rank %d)", rk(i), human.Duration(js.Waited(i)),
				human.Duration(c.Waits[i]), c.Index+1, shortKernel(c.Name), rk(c.Straggler))
		}
		b.WriteString(".")
	}
	if js.Straggler >= 0 {
		fmt.Fprintf(&b, " Rank %d, the straggler%s.", rk(js.Straggler), doingText(js.Doing))
	}
	return analyze.Finding{ID: advice.FindStepSpread, Severity: "medium", Message: b.String(), Fix: doingFix(js.Doing)}, true
}

// widestStep returns the job step whose rank lengths differ most, with the
// indexes of its shortest and longest rank.
func (j *adviser) widestStep() (*job.Step, int, int) {
	var best *job.Step
	var blo, bhi int
	for si := range j.res.Steps {
		js := &j.res.Steps[si]
		lo, hi := -1, -1
		for i, d := range js.Dur {
			if d == 0 {
				continue
			}
			if lo < 0 || d < js.Dur[lo] {
				lo = i
			}
			if hi < 0 || d > js.Dur[hi] {
				hi = i
			}
		}
		if lo >= 0 && (best == nil || js.Dur[hi]-js.Dur[lo] > best.Dur[bhi]-best.Dur[blo]) {
			best, blo, bhi = js, lo, hi
		}
	}
	return best, blo, bhi
}

// stepSpread returns the first and last rank to enter the step, and how far
// apart the ranks' starts and ends are on the job's timeline.
func (j *adviser) stepSpread(js *job.Step) (first, last int, starts, ends int64) {
	var s0, s1, e0, e1 int64
	seen := false
	for i := range j.res.Ranks {
		r := &j.res.Ranks[i]
		s := windowStep(r.Result, js.Num)
		if s == nil {
			continue
		}
		st, en := s.Start+r.Offset, s.Start+s.Dur+r.Offset
		if !seen || st < s0 {
			s0, first = st, i
		}
		if !seen || st > s1 {
			s1, last = st, i
		}
		if !seen || en < e0 {
			e0 = en
		}
		if !seen || en > e1 {
			e1 = en
		}
		seen = true
	}
	return first, last, s1 - s0, e1 - e0
}

// waiters returns the indexes of the n ranks that waited longest in the
// step's collectives, longest first.
func waiters(js *job.Step, n int) []int {
	var idx []int
	for i := range js.Dur {
		if js.Waited(i) > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(js.Waited(y), js.Waited(x)) })
	return idx[:min(n, len(idx))]
}

func biggestWait(js *job.Step, i int) *job.Collective {
	var best *job.Collective
	for k := range js.Collectives {
		if c := &js.Collectives[k]; best == nil || c.Waits[i] > best.Waits[i] {
			best = c
		}
	}
	return best
}

// shortKernel drops a kernel name's argument list.
func shortKernel(name string) string {
	if i := strings.IndexByte(name, '('); i > 0 {
		return name[:i]
	}
	return name
}

// active returns the ranks with device work (job.Facts.Active).
func (j *adviser) active() []*job.Rank {
	rs := make([]*job.Rank, 0, len(j.res.Facts.Active))
	for _, i := range j.res.Facts.Active {
		rs = append(rs, &j.res.Ranks[i])
	}
	return rs
}

// windowStep returns the step of res's window numbered num, nil when none.
func windowStep(res *analyze.Result, num int64) *analyze.Step {
	for i := range res.Steps {
		if res.Steps[i].Num == num {
			return &res.Steps[i]
		}
	}
	return nil
}
