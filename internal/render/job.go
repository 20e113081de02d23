package render

import (
	"bufio"
	"bytes"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/report"
)

// WriteJob renders a distributed job in format f: the job seen as one run,
// rendered as Write renders a result (its verdict, breakdown, devices of
// every rank, gaps, steps and findings), followed by the job's own
// sections: every rank's figures, the straggler of each step and the
// collectives' wait and transfer. JSON is the v1 report of the job with
// "job" and "ranks" added (JobReport).
func WriteJob(w io.Writer, jr *job.Result, f Format, opt Options) error {
	if jr == nil {
		return fmt.Errorf("report: job result is nil")
	}
	d := lookup(f)
	if d == nil || d.job == nil {
		return writerError(f, OfJob)
	}
	opt.job = jr
	bw := bufio.NewWriter(w)
	if err := d.job(bw, jr, opt); err != nil {
		return err
	}
	return bw.Flush()
}

// writeJobText writes the job as one run, then its own sections.
func writeJobText(w io.Writer, jr *job.Result, opt Options) error {
	w, flush := wrapped(w, opt.Width)
	if err := writeResults(w, []*analyze.Result{&jr.Overall}, opt); err != nil {
		return err
	}
	t := &textWriter{w: w, opt: opt, terminal: true}
	if t.jobText(jr); t.err != nil {
		return t.err
	}
	return flush()
}

// writeJobMarkdown writes the job as one run, then its own sections.
func writeJobMarkdown(w io.Writer, jr *job.Result, opt Options) error {
	if err := writeMarkdown(w, []*analyze.Result{&jr.Overall}, opt); err != nil {
		return err
	}
	t := &textWriter{w: w, opt: Options{Top: opt.Top, MaxSteps: opt.MaxSteps, AllSteps: opt.AllSteps, job: jr}}
	t.jobMarkdown(jr)
	return t.err
}

// JobSummary is the one-line verdict of a job: the run's summary sentence
// and the straggler, if any.
func JobSummary(jr *job.Result) string {
	s := fmt.Sprintf("job of %d ranks: %s", len(jr.Ranks), Summary(&jr.Overall))
	if r, n := mainStraggler(jr); r >= 0 {
		s += fmt.Sprintf("; straggler rank %d (%d of %s)", jr.Ranks[r].Rank, n, human.Count(len(jr.Steps), "step"))
	}
	return s
}

// mainStraggler returns the index of the rank that was the straggler in
// most steps and in how many, or -1.
func mainStraggler(jr *job.Result) (int, int) {
	best, n := -1, 0
	for i, r := range jr.Ranks {
		if r.Straggles > n {
			best, n = i, r.Straggles
		}
	}
	return best, n
}

func jsonRest(r job.Rest) report.RestV1 {
	return report.RestV1{ComputeNs: r.Compute, LateNs: r.Late, OutsideNs: r.Outside}
}

// JobJSONReport builds the JSON report of a job.
func JobJSONReport(jr *job.Result) *report.JobReport {
	r := jobJSONHead(jr)
	for i := range jr.Ranks {
		r.Ranks = append(r.Ranks, jsonRank(&jr.Ranks[i]))
	}
	return r
}

// writeJobJSON writes JobJSONReport(jr) as encoding/json writes it, one
// rank at a time: each rank embeds its whole report, a job of a thousand
// ranks has a report of about a gigabyte, and encoding it whole held it
// several times over in memory.
func writeJobJSON(w io.Writer, jr *job.Result) error {
	var buf bytes.Buffer
	enc := jsonEncoder(&buf)
	if err := enc.Encode(jobJSONHead(jr)); err != nil {
		return err
	}
	const empty = "\"ranks\": []\n}\n"
	head, ok := bytes.CutSuffix(buf.Bytes(), []byte(empty))
	switch {
	case len(jr.Ranks) == 0:
		_, err := w.Write(buf.Bytes())
		return err
	case !ok: // "ranks" is no longer the last field: encode it all at once
		return jsonEncoder(w).Encode(JobJSONReport(jr))
	}
	if _, err := w.Write(append(head, "\"ranks\": [\n"...)); err != nil {
		return err
	}
	enc.SetIndent("    ", "  ") // an element of "ranks", two levels in
	for i := range jr.Ranks {
		buf.Reset()
		buf.WriteString("    ")
		if err := enc.Encode(jsonRank(&jr.Ranks[i])); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		if i < len(jr.Ranks)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "  ]\n}\n")
	return err
}

// jobJSONHead is the JSON report of a job without its ranks.
func jobJSONHead(jr *job.Result) *report.JobReport {
	r := &report.JobReport{Report: *JSONReport(&jr.Overall), Ranks: []report.RankReport{}}
	r.Summary = JobSummary(jr)
	rank := func(i int) int {
		if i < 0 {
			return -1
		}
		return jr.Ranks[i].Rank
	}
	r.Job = report.JobSection{
		Ranks: len(jr.Ranks), WorldSize: jr.WorldSize, Clock: jr.Clock,
		Collectives: jr.Collectives, TransferNs: jr.Transfer, Wait: jsonWait(&jr.Wait), Rest: jsonRest(jr.Rest), Steps: []report.JobStep{},
	}
	for _, s := range jr.Steps {
		js := report.JobStep{Num: s.Num, Name: s.Name, StartNs: s.Start, EndNs: s.End, DurNs: s.Dur,
			Straggler: rank(s.Straggler), Doing: s.Doing, WaitNs: s.Wait, Rest: jsonRest(s.Rest), Collectives: []report.CollectiveV1{}}
		for _, c := range s.Collectives {
			js.Collectives = append(js.Collectives, report.CollectiveV1{Index: c.Index, Name: c.Name, Straggler: rank(c.Straggler),
				StartNs: c.Start, SpreadNs: c.Spread, WaitNs: c.Waits, TransferNs: c.Transfers, Split: jsonWait(&c.Split)})
		}
		r.Job.Steps = append(r.Job.Steps, js)
	}
	return r
}

// jsonRank is the entry of rank k in a job's JSON report.
func jsonRank(k *job.Rank) report.RankReport {
	return report.RankReport{
		Rank: k.Rank, Path: k.Result.Source.Path, OffsetNs: k.Offset, StepTimeNs: k.StepTime, BusyNs: k.Busy,
		Idle: jsonBreakdown(&k.Idle, k.Result.Window.Dur()), Wait: jsonWait(&k.Wait), TransferNs: k.Transfer,
		InputNs: k.Input, SyncNs: k.Sync, Verdict: string(k.Verdict), VerdictAlone: string(k.Result.Verdict),
		Straggles: k.Straggles, Report: JSONReport(k.Result),
	}
}

func jsonWait(w *job.WaitSplit) report.WaitSplitV1 {
	return report.WaitSplitV1{Ns: w.Idle.ByCause, ComputeNs: w.Compute, LateNs: w.Late, TotalNs: w.Total(), Doing: w.Doing()}
}

// jobHeader says how many ranks there are and how their clocks were
// aligned.
func jobHeader(jr *job.Result) string {
	return fmt.Sprintf("Job of %d ranks (world size %d); %s.", len(jr.Ranks), jr.WorldSize, jr.Clock)
}

// waitLine sums up the collectives' time: the waiting by what held the
// straggler back, and the transfer.
func waitLine(jr *job.Result) string {
	w := &jr.Wait
	if w.Total()+jr.Transfer == 0 {
		return "No collective was matched across the ranks."
	}
	var parts []string
	for _, p := range w.Parts() {
		if p.Ns > 0 {
			parts = append(parts, p.Name+" "+human.Duration(p.Ns))
		}
	}
	s := fmt.Sprintf("In collectives, summed over ranks: %s waiting for the slowest rank", human.Duration(w.Total()))
	if len(parts) > 0 {
		s += " (while it was in: " + strings.Join(parts, ", ") + ")"
	}
	return s + ", " + human.Duration(jr.Transfer) + " transferring."
}

func (t *textWriter) jobText(jr *job.Result) {
	t.printf("\n%s\n", strings.Repeat("=", 72))
	t.printf("\n%s\n%s\n", t.style(jobHeader(jr), ansiBold), waitLine(jr))
	t.heading("Ranks (window figures; collective waits counted as idle, by what held the straggler back)")
	t.table(jobRanksTable(jr))
	if len(jr.Steps) == 0 {
		return
	}
	n := t.opt.stepRows(textMaxSteps)
	t.heading("Stragglers by step")
	t.table(jobStepsTable(jr, n))
	t.heading("Collectives (wait and transfer summed over ranks)")
	t.table(jobCollectivesTable(jr, n))
}

func (t *textWriter) jobMarkdown(jr *job.Result) {
	n := t.opt.stepRows(markdownMaxSteps)
	t.printf("\n#### Job\n\n%s %s\n\n", mdEscape(jobHeader(jr)), mdEscape(waitLine(jr)))
	t.mdTable(jobRanksTable(jr))
	if len(jr.Steps) == 0 {
		return
	}
	t.printf("\n**Stragglers by step**\n\n")
	t.mdTable(jobStepsTable(jr, n))
	t.printf("\n<details><summary>Collectives</summary>\n\n")
	t.mdTable(jobCollectivesTable(jr, n))
	t.printf("\n</details>\n")
}

// jobRanksTable has a row per rank: its pace, busy share, waits and
// transfer, idle shares by cause with the waits, host time in input and
// syncs, and its verdicts alone and in the job.
func jobRanksTable(jr *job.Result) *table {
	tb := newTable("rrrrrrrrrrllr", "rank", "step time", "busy w/o waits", "waiting", "transfer", "input idle", "sync idle", "host idle",
		"in input", "in syncs", "alone", "in the job", "straggler in").cutAt(10, cutNever).cutAt(11, cutNever)
	for _, r := range jr.Ranks {
		win := r.Result.Window.Dur()
		tb.add(strconv.Itoa(r.Rank), human.Duration(r.StepTime), human.Share(share(r.Busy, win)), human.Duration(r.Wait.Total()), human.Duration(r.Transfer),
			human.Share(share(r.Idle.Of(analyze.Input), win)), human.Share(share(r.Idle.Sync(), win)), human.Share(share(r.Idle.Of(analyze.Host), win)),
			human.Duration(r.Input), human.Duration(r.Sync), string(r.Result.Verdict), string(r.Verdict),
			fmt.Sprintf("%d/%d", r.Straggles, len(jr.Steps)))
	}
	return tb
}

// jobStepsTable has a row per step, at most n: the ranks' step lengths,
// the straggler and what held it back, and the wait it caused.
func jobStepsTable(jr *job.Result, n int) *table {
	tb := newTable("lrrlrr", "step", "shortest", "longest", "straggler", "others waited", "collectives")
	for i, s := range jr.Steps {
		if i == n {
			tb.add(fmt.Sprintf("(%d more)", len(jr.Steps)-n), "", "", "", "", "")
			break
		}
		lo, hi := durRange(s.Dur)
		who := "-"
		if s.Straggler >= 0 {
			who = fmt.Sprintf("rank %d (%s)", jr.Ranks[s.Straggler].Rank, s.Doing)
		}
		tb.add(s.Name, human.Duration(lo), human.Duration(hi), who, human.Duration(s.Wait), strconv.Itoa(len(s.Collectives)))
	}
	return tb
}

func durRange(ds []int64) (lo, hi int64) {
	first := true
	for _, d := range ds {
		if d == 0 {
			continue
		}
		if first || d < lo {
			lo = d
		}
		hi = max(hi, d)
		first = false
	}
	return lo, hi
}

// jobCollectivesTable has a row per collective of the first n steps.
func jobCollectivesTable(jr *job.Result, n int) *table {
	tb := newTable("lrlrrrrl", "step", "#", "collective", "last to start", "spread", "waited", "transfer", "straggler was in").
		clip(0, 0, 60)
	for i, s := range jr.Steps {
		if i == n {
			break
		}
		for _, c := range s.Collectives {
			var wait, transfer int64
			for k := range c.Waits {
				wait += c.Waits[k]
				transfer += c.Transfers[k]
			}
			tb.add(s.Name, strconv.Itoa(c.Index+1), c.Name, "rank "+strconv.Itoa(jr.Ranks[c.Straggler].Rank),
				human.Duration(c.Spread), human.Duration(wait), human.Duration(transfer), c.Split.Doing())
		}
	}
	return tb
}

// htmlJob is a job's own part of its page: the job's tables, shown
// before the findings, and the colour of collective waits for the
// timeline's legend.
type htmlJob struct {
	Header, Waits             string
	Ranks, Steps, Collectives *table
	WaitColor                 string
}

// htmlRankRow is a rank's timeline row: the stretches its devices waited
// in collectives for the slowest rank.
type htmlRankRow struct {
	Rank              int
	Waiting, Transfer string
	SVG               template.HTML
}

// writeJobHTML renders the job as one run's page with the job's sections
// filled in: a timeline row per rank under the rank's device rows, and the
// job's tables.
func writeJobHTML(w io.Writer, jr *job.Result, opt Options) error {
	page := newHTMLPage([]*analyze.Result{&jr.Overall}, opt)
	run := &page.Runs[0]
	run.Job = newHTMLJob(jr)
	// analyze/job puts each rank's devices in Overall.Devices in turn,
	// ranks in order, ranks without device work left out.
	a := newAxis(&jr.Overall)
	last := -1
	for i := range jr.Ranks {
		n := len(jr.Ranks[i].Result.Devices)
		last += n
		if n > 0 && last < len(run.Devices) {
			run.Devices[last].Rank = rankRow(&jr.Ranks[i], a)
		}
	}
	return executeHTML(htmlTemplate, w, page)
}

// newHTMLJob lays out the job's tables, every step in them.
func newHTMLJob(jr *job.Result) *htmlJob {
	j := &htmlJob{Header: jobHeader(jr), Waits: waitLine(jr), Ranks: jobRanksTable(jr), WaitColor: waitColor}
	if len(jr.Steps) > 0 {
		j.Steps = jobStepsTable(jr, len(jr.Steps))
		j.Collectives = jobCollectivesTable(jr, len(jr.Steps))
	}
	return j
}

// rankRow draws rank r's collective waits on the page's axis a, so that
// zooming moves them with the devices' rows.
func rankRow(r *job.Rank, a axis) *htmlRankRow {
	const h = 16
	var marks []mark
	for _, iv := range r.Waits {
		marks = append(marks, mark{start: iv.Start + r.Offset, end: iv.End + r.Offset, color: waitColor, busy: iv.End - iv.Start,
			title: fmt.Sprintf("rank %d waited %s in a collective for the slowest rank", r.Rank, human.Duration(iv.End-iv.Start))})
	}
	rows := []tlRow{{marks: marks, y: 2, h: h - 4, noun: "waits"}}
	var b strings.Builder
	openTimeline(&b, a, "tl", h, rows)
	drawRows(&b, a, rows)
	b.WriteString("</svg>")
	return &htmlRankRow{Rank: r.Rank, Waiting: human.Duration(r.Wait.Total()), Transfer: human.Duration(r.Transfer), SVG: template.HTML(b.String())}
}
