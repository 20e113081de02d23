package render

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// ANSI styles for text output with Options.Color.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// textWriter renders one result as text or Markdown; it remembers the
// first write error so that the sections read straight.
type textWriter struct {
	w   io.Writer
	opt Options
	err error
	// terminal says the output is text for a terminal or a CI log: every
	// string argument of printf is escaped for it (names from the trace,
	// file names, messages that quote them), and every table cell. The
	// Markdown writer escapes with mdEscape instead.
	terminal bool
}

// styled is text that the writer has escaped and styled itself; printf
// writes it as it is.
type styled string

func (t *textWriter) printf(format string, args ...any) {
	if t.err != nil {
		return
	}
	if t.terminal {
		for i, a := range args {
			if s, ok := a.(string); ok {
				args[i] = untrusted.Terminal(s)
			}
		}
	}
	_, t.err = fmt.Fprintf(t.w, format, args...)
}

// style escapes s for the terminal and wraps it in the ANSI style code
// when the output is in colour.
func (t *textWriter) style(s, code string) styled {
	s = untrusted.Terminal(s)
	if !t.opt.Color || code == "" {
		return styled(s)
	}
	return styled(code + s + ansiReset)
}

func (t *textWriter) heading(s string) { t.printf("\n%s\n", t.style(s, ansiBold)) }

func (t *textWriter) table(tb *table) {
	if t.err != nil {
		return
	}
	if t.opt.Width <= 0 {
		t.err = tb.renderText(t.w, untrusted.Terminal)
		return
	}
	var s string
	if s, t.err = fitTable(tb, t.opt.Width, untrusted.Terminal); t.err != nil {
		return
	}
	t.err = writeRaw(t.w, s)
}

func writeText(w io.Writer, results []*analyze.Result, opt Options) error {
	w, flush := wrapped(w, opt.Width)
	if err := writeResults(w, results, opt); err != nil {
		return err
	}
	return flush()
}

// writeResults writes the results' text reports to w, which wraps at
// opt.Width already when that is set.
func writeResults(w io.Writer, results []*analyze.Result, opt Options) error {
	for i, res := range results {
		t := &textWriter{w: w, opt: opt, terminal: true}
		if i > 0 {
			t.printf("\n%s\n\n", strings.Repeat("=", min(72, cmp.Or(opt.Width, 72))))
		}
		t.result(res)
		if t.err != nil {
			return t.err
		}
	}
	return nil
}

// wrapped returns w wrapping its lines at width columns (a wrapWriter)
// when width is set, else w, and the flush to call once all is written.
func wrapped(w io.Writer, width int) (io.Writer, func() error) {
	if width <= 0 {
		return w, func() error { return nil }
	}
	ww := &wrapWriter{w: w, width: width}
	return ww, ww.Flush
}

func (t *textWriter) result(res *analyze.Result) {
	t.source(&res.Source, res.Framework)
	t.verdict(res)
	if res.Verdict != analyze.NoDevice && len(res.Devices) > 0 {
		t.devices(res)
		t.breakdown(res)
		t.gaps(res)
		t.steps(res)
		t.insights(res, cmp.Or(max(t.opt.MaxSteps, 0), textMaxSteps))
	}
	t.findings(res.Findings)
	t.thresholds(&res.Options)
	t.warnings(&res.Source)
}

func (t *textWriter) source(s *analyze.Source, fw analyze.Framework) {
	path := s.Path
	if path == "" {
		path = "(stdin)"
	}
	t.printf("%s  %s\n", t.style(path, ansiBold), sourceFacts(s, fw))
}

// sourceFacts describes the input in a few words, with the framework that
// recorded it when known: "(chrome, PyTorch, 12.3 MB, 210,345 events,
// truncated)".
func sourceFacts(s *analyze.Source, fw analyze.Framework) string {
	facts := []string{}
	if s.Format != "" {
		facts = append(facts, s.Format)
	}
	if fw != analyze.UnknownFramework {
		facts = append(facts, string(fw))
	}
	if s.Bytes > 0 {
		facts = append(facts, human.Bytes(s.Bytes))
	}
	facts = append(facts, counted(s.Events, "event"))
	if s.Truncated {
		facts = append(facts, "truncated: only the part before the cut was read")
	}
	if s.Invalid {
		facts = append(facts, "invalid data part-way: only the part before it was read")
	}
	return "(" + strings.Join(facts, ", ") + ")"
}

func verdictColor(v analyze.Verdict) string {
	switch v {
	case analyze.Parallel:
		return ansiGreen
	case analyze.NoDevice:
		return ansiCyan
	}
	return ansiRed
}

func (t *textWriter) verdict(res *analyze.Result) {
	line := summarize(res)
	v := string(t.style(string(line.Verdict), ansiBold+verdictColor(line.Verdict)))
	t.printf("\n%s%s\n", styled(v), line.withVerdict(""))
	if len(res.Secondary) > 0 {
		s := make([]string, len(res.Secondary))
		for i, v := range res.Secondary {
			s[i] = string(v)
		}
		t.printf("  also over its threshold: %s\n", strings.Join(s, ", "))
	}
	for _, r := range otherReasons(res, line) {
		t.printf("  - %s\n", r)
	}
}

func (t *textWriter) devices(res *analyze.Result) {
	t.heading("Devices (busy, idle and gaps over each device's span, first to last work)")
	n := t.opt.stepRows(textMaxSteps)
	t.table(devicesTable(res, n, t.opt.job))
	if more := len(res.Devices) - n; more > 0 {
		t.printf("  ... %d more devices (all of them with --all-steps)\n", more)
	}
}

// devicesTable lists the first n devices. Busy, idle and busy/span are the
// device's own; in a job (jr set) busy/window is over the job's window with
// the device's collective waits taken out, as the job's utilization is.
func devicesTable(res *analyze.Result, n int, jr *job.Result) *table {
	last := "busy/window"
	if jr != nil {
		last = "busy w/o waits/window"
	}
	tb := newTable("lrrrrrr", "device", "span", "busy", "idle", "busy/span", "gaps in span", last).cutAt(0, cutMiddle)
	for _, d := range res.Devices[:min(n, len(res.Devices))] {
		tb.add(d.ID, human.Duration(d.End-d.Start), human.Duration(d.Busy), human.Duration(d.Idle),
			human.Share(d.Utilization), count(d.Gaps), human.Share(share(d.WindowBusy, res.Window.Dur())))
	}
	return tb
}

// windowLine describes the window and what of the trace it leaves out: "9
// steps (ProfilerStep), 1.21 s, warm-up step dropped; outside it: 152 ms
// before, 23.1 ms after the last device work".
func windowLine(w analyze.Window) string {
	var parts []string
	switch {
	case w.Steps == 1:
		parts = append(parts, "1 step")
	case w.Steps > 1:
		parts = append(parts, strconv.Itoa(w.Steps)+" steps")
	default:
		parts = append(parts, "no steps found, the devices' span")
	}
	if w.StepSource != "" {
		parts[0] += " (" + w.StepSource + ")"
	}
	parts = append(parts, human.Duration(w.Dur()))
	if w.WarmupDropped {
		parts = append(parts, "warm-up step dropped")
	}
	line := strings.Join(parts, ", ")
	if out := outsideLine(w); out != "" {
		line += "; " + out
	}
	return line
}

func (t *textWriter) breakdown(res *analyze.Result) {
	t.heading("Idle in the window: " + windowLine(res.Window))
	t.printf("  %s\n", figuresLine(res))
	if line := stabilityLine(res); line != "" {
		t.printf("  %s\n", line)
	}
	t.table(breakdownTable(res, t.opt.job))
	t.printf("  %s\n", thresholdCheck(res))
}

// breakdownTable lists idle by cause over the window. In a job (jr set)
// rows follow for the rest of the window (job.Rest) and the busy time, so
// that the shares add up to the window.
func breakdownTable(res *analyze.Result, jr *job.Result) *table {
	b, win := &res.Idle, res.Window.Dur()
	tb := newTable("lrrl", "cause", "idle", "share", "the host thread the device waited for was")
	type row struct {
		name string
		ns   int64
		what string
	}
	var rows []row
	for _, c := range analyze.Causes() {
		rows = append(rows, row{c.String(), b.Of(c), c.About()})
	}
	rows = append(rows, row{"below min-gap", b.BelowMinGap, "(gaps shorter than " + shortDuration(res.Options.MinGap) + ", not attributed)"})
	total := int64(0)
	for _, r := range rows {
		total += r.ns
		tb.add(r.name, human.Duration(r.ns), human.Share(share(r.ns, win)), r.what)
	}
	tb.add("all idle", human.Duration(total), human.Share(share(total, win)), "(attributed and below min-gap)")
	if jr != nil {
		for _, r := range restRows(jr.Rest, "window") {
			tb.add(r.name, human.Duration(r.ns), human.Share(share(r.ns, win)), r.what)
		}
		busy := int64(res.Utilization()*float64(win) + 0.5)
		tb.add("busy", human.Duration(busy), human.Share(share(busy, win)), "(device busy, collective waits taken out: the utilization)")
	}
	return tb
}

// restRow is one part of a job's rest (job.Rest) in a table.
type restRow struct {
	name, what string
	ns         int64
}

// restRows names the parts of a job's rest of a stretch ("window",
// "step"), per rank.
func restRows(r job.Rest, stretch string) []restRow {
	return []restRow{
		{"wait: compute", "(collective waits for a straggler with more device work: no idle cause)", r.Compute},
		{"wait: late", "(collective waits for a straggler that entered late: the cause lies before)", r.Late},
		{"outside rank", "(the job's " + stretch + " before the rank's own began or after it ended)", r.Outside},
	}
}

// thresholdCheck holds each deciding share against its threshold: "sync
// 3.2% of 5% max, input 31.0% of 5% max (over), host 2.1% of 15% max".
func thresholdCheck(res *analyze.Result) string {
	b, o, win := &res.Idle, &res.Options, res.Window.Dur()
	item := func(name string, ns int64, thr float64) string {
		s := share(ns, win)
		out := fmt.Sprintf("%s %s (threshold %s)", name, human.Share(s), shortPercent(thr))
		if s > thr {
			out += " OVER"
		}
		return out
	}
	return "against the thresholds: " + strings.Join([]string{
		item("sync", b.Sync(), o.SyncThreshold),
		item("input", b.Of(analyze.Input), o.InputThreshold),
		item("host", b.HostWork(), o.HostThreshold),
		item("stalled", b.Of(analyze.Stall), o.StallThreshold),
	}, ", ")
}

func (t *textWriter) gaps(res *analyze.Result) {
	gs := topGaps(res, t.opt.Top)
	if len(gs) == 0 {
		t.heading(fmt.Sprintf("No gaps of %s or more in the window", shortDuration(res.Options.MinGap)))
		return
	}
	t.heading(fmt.Sprintf("Longest gaps (%d of %s)", len(gs), count(len(res.Gaps))))
	t.table(gapsTable(res, gs, 40, 100))
}

func gapsTable(res *analyze.Result, gs []*analyze.Gap, threadWidth, stackWidth int) *table {
	tb := newTable("rlrrllll", "#", "device", "start", "length", "cause", "step", "waited-for thread", "what it was doing (innermost last)").
		clip(0, 0, 0, 0, 0, 0, threadWidth, stackWidth).cutAt(1, cutMiddle).cutAt(5, cutMiddle).
		cutAt(7, cutStart) // the innermost event shows
	for i, g := range gs {
		what := describeStack(res, g, 3)
		if g.Cause == analyze.Stall && g.Waits != nil {
			// The thread did not hold the device: say what did.
			what = "queued, waiting " + dependencyWords(*g.Waits)
		}
		tb.add(strconv.Itoa(i+1), g.Device, msTime(g.Start), human.Duration(g.Dur), g.Cause.String(),
			stepName(res, g.Step), g.Thread, what)
	}
	return tb
}

// msTime writes a time since the trace's start in milliseconds with
// microsecond precision: "1234.567 ms".
func msTime(ns int64) string {
	return strconv.FormatFloat(float64(ns)/1e6, 'f', 3, 64) + " ms"
}

func stepName(res *analyze.Result, i int) string {
	if i < 0 || i >= len(res.Steps) {
		return "-"
	}
	if s := res.Steps[i]; s.Name != "" {
		return s.Name
	}
	return "#" + strconv.Itoa(i)
}

func (t *textWriter) steps(res *analyze.Result) {
	if len(res.Steps) == 0 {
		return
	}
	t.heading("Steps")
	tb, more := stepsTable(res, t.opt.stepRows(textMaxSteps), t.opt.job)
	t.table(tb)
	if more > 0 {
		t.printf("  ... %d more steps (all of them with --all-steps)\n", more)
	}
}

// stepsTable lists the first limit steps and a mean row; more is how many
// steps were left out. In a job (jr set) two columns add the step's rest
// (job.Rest): waits with no idle cause, and the step outside the rank's
// own; busy, idle and those add up to the duration.
func stepsTable(res *analyze.Result, limit int, jr *job.Result) (tb *table, more int) {
	head := []string{"step", "start", "duration", "device busy", "input", "sync", "idle", "verdict"}
	align := "lrrrrrrl"
	if jr != nil {
		head = slices.Insert(head, 7, "wait w/o cause", "outside rank")
		align = "lrrrrrrrrl"
	}
	tb = newTable(align, head...).cutAt(0, cutMiddle).cutAt(len(head)-1, cutNever)
	var mean analyze.Step
	var idle int64
	var rest job.Rest
	row := func(name, start string, dur, busy, input, sync, idle int64, r job.Rest, verdict string) {
		cells := []string{name, start, human.Duration(dur), human.Duration(busy), human.Duration(input), human.Duration(sync), human.Duration(idle)}
		if jr != nil {
			cells = append(cells, human.Duration(r.Compute+r.Late), human.Duration(r.Outside))
		}
		tb.add(append(cells, verdict)...)
	}
	for i, s := range res.Steps {
		r := stepRest(jr, i)
		mean.Dur += s.Dur
		mean.DeviceBusy += s.DeviceBusy
		mean.Input += s.Input
		mean.Sync += s.Sync
		idle += s.Idle.Attributed() + s.Idle.BelowMinGap
		rest = job.Rest{Compute: rest.Compute + r.Compute, Late: rest.Late + r.Late, Outside: rest.Outside + r.Outside}
		if i < limit {
			row(stepName(res, i), msTime(s.Start), s.Dur, s.DeviceBusy, s.Input, s.Sync, s.Idle.Attributed()+s.Idle.BelowMinGap, r, string(s.Verdict))
		}
	}
	if n := int64(len(res.Steps)); n > 1 {
		rest = job.Rest{Compute: rest.Compute / n, Late: rest.Late / n, Outside: rest.Outside / n}
		row("mean", "", mean.Dur/n, mean.DeviceBusy/n, mean.Input/n, mean.Sync/n, idle/n, rest, "")
	}
	return tb, max(0, len(res.Steps)-limit)
}

// stepRest returns the rest of the job's step i (job.Rest); zero for a
// single run.
func stepRest(jr *job.Result, i int) job.Rest {
	if jr == nil || i >= len(jr.Steps) {
		return job.Rest{}
	}
	return jr.Steps[i].Rest
}

func severityColor(s string) string {
	switch s {
	case "high":
		return ansiRed
	case "medium":
		return ansiYellow
	}
	return ansiDim
}

func (t *textWriter) findings(fs []analyze.Finding) {
	if len(fs) == 0 {
		return
	}
	t.heading("Findings")
	for _, f := range fs {
		t.printf("  %s %s: %s\n", t.style("["+f.Severity+"]", severityColor(f.Severity)), f.ID, f.Message)
		if f.Fix != "" {
			t.printf("    fix: %s\n", f.Fix)
		}
	}
}

// thresholdsLine lists the options the analysis ran with.
func thresholdsLine(o *analyze.Options) string {
	s := fmt.Sprintf("min-gap %s, sync-slack %s, sync %s, input %s, host %s, stall %s",
		shortDuration(o.MinGap), shortDuration(o.SyncSlack),
		shortPercent(o.SyncThreshold), shortPercent(o.InputThreshold), shortPercent(o.HostThreshold), shortPercent(o.StallThreshold))
	if o.StepRegex != "" {
		s += fmt.Sprintf(", step regex %q", o.StepRegex)
	}
	for _, p := range o.SyncPatterns {
		s += fmt.Sprintf(", sync pattern %q", p)
	}
	for _, p := range o.InputPatterns {
		s += fmt.Sprintf(", input pattern %q", p)
	}
	return s
}

func (t *textWriter) thresholds(o *analyze.Options) {
	t.printf("\nThresholds: %s\n", thresholdsLine(o))
}

// maxWarnings caps the warnings a text or Markdown report lists.
const maxWarnings = 10

func (t *textWriter) warnings(s *analyze.Source) {
	if len(s.Warnings) == 0 {
		return
	}
	t.printf("%s\n", t.style(fmt.Sprintf("Warnings (%d):", len(s.Warnings)), ansiYellow))
	for i, w := range s.Warnings {
		if i == maxWarnings {
			t.printf("  ... %d more\n", len(s.Warnings)-maxWarnings)
			break
		}
		t.printf("  - %s\n", w)
	}
}
