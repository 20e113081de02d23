package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// The call sites, the per-op host table, the copies and the per-step
// timeline in the text and Markdown reports; JSON has every row.

// insightRows is how many rows of call sites and ops the text and
// Markdown reports show.
const insightRows = 5

// timelineWidth is the width of a step's bar in the timeline.
const timelineWidth = 40

func sitesTable(res *analyze.Result) *table {
	tb := newTable("llrrrr", "call site", "call", "cause", "calls", "idle", "share").clip(60, 50)
	for i, s := range res.CallSites {
		if i == insightRows {
			break
		}
		site := siteText(s)
		tb.add(site, s.Call, causeWord(s.Cause), strconv.Itoa(s.Count), human.Duration(s.Idle), human.Share(share(s.Idle, res.Window.Dur())))
	}
	return tb
}

// siteText writes a call site's cell: its line of user code and the
// library frame it called through, else the program the device waited on
// and where its code is ("jit_step (train.py:23)"), else "-".
func siteText(s analyze.CallSite) string {
	site := s.Where()
	if p := s.Program; s.Frame.IsZero() && !p.IsZero() {
		site = strings.TrimSpace(programText(p) + " " + site)
	}
	if site == "" {
		site = "-"
	}
	return site
}

// programText writes a program and its line: "jit_step (train.py:23)",
// the file by its base name.
func programText(p analyze.ProgramLine) string {
	return p.Name + " (" + p.File[strings.LastIndexByte(p.File, '/')+1:] + ":" + strconv.Itoa(p.Line) + ")"
}

// programSiteNote says what a call site that names a program means. It
// holds no text from the trace, so it needs no escaping in any report.
const programSiteNote = "A call site shown as PROGRAM (FILE:LINE) has no line of your code around its call: it names the program the device waited on and the line of your code most of that program's ops come from (its HLO metadata), which is where the waited-on code is, not the blocking call."

// programNote says what a call site that names a program means; "" when
// no shown site names one.
func programNote(res *analyze.Result) string {
	for i, s := range res.CallSites {
		if i == insightRows {
			break
		}
		if s.Frame.IsZero() && !s.Program.IsZero() {
			return programSiteNote
		}
	}
	return ""
}

// sitesNotes are the lines under the call sites table: what the rows left
// out hold, the idle in no call site and what a program's site means.
func sitesNotes(res *analyze.Result) []string {
	var out []string
	for _, n := range []string{moreSitesNote(res), unsitedNote(res), programNote(res)} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// moreSitesNote says what the call sites past the table's rows hold, by
// cause, so that with the rows and unsitedNote each cause's idle is
// accounted for; "" when the table shows them all.
func moreSitesNote(res *analyze.Result) string {
	rest := res.CallSites[min(insightRows, len(res.CallSites)):]
	if len(rest) == 0 {
		return ""
	}
	var by [analyze.NumCauses]int64
	for _, s := range rest {
		by[s.Cause] += s.Idle
	}
	var parts []string
	for _, c := range analyze.Causes() {
		if by[c] > 0 {
			parts = append(parts, causeWord(c)+" "+human.Duration(by[c]))
		}
	}
	return fmt.Sprintf("%s, not shown (the JSON report lists every one): %s.", counted(len(rest), "more call site"), strings.Join(parts, ", "))
}

// unsitedNote says, by cause, the idle the call sites leave out (see
// Result.Unsited), so that their totals read against the idle by cause;
// "" when they leave out none.
func unsitedNote(res *analyze.Result) string {
	u := res.Unsited()
	var parts []string
	for _, c := range analyze.Causes() {
		if u[c] > 0 {
			parts = append(parts, causeWord(c)+" "+human.Duration(u[c]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Idle with no traced call to blame, in no call site: " + strings.Join(parts, ", ") + "."
}

func opsTable(res *analyze.Result) *table {
	tb := newTable("lrrrrrl", "op", "calls", "per call", "launches/call", "idle", "share", "setting").clip(60)
	// Where no op launched anything, the trace does not link device work
	// to host calls (JAX, XPlane on TPU): the launches are unknown, not 0.
	linked := slices.ContainsFunc(res.Ops, func(o analyze.OpCost) bool { return o.Launches > 0 })
	for i, o := range res.Ops {
		if i == insightRows {
			break
		}
		per, lpc := "-", "-"
		if o.Calls > 0 {
			per = human.Duration(o.Host / int64(o.Calls))
		}
		if o.Calls > 0 && linked {
			lpc = strconv.FormatFloat(float64(o.Launches)/float64(o.Calls), 'f', 1, 64)
		}
		set := ""
		if o.Setting != nil {
			set = o.Setting.Name + "=" + o.Setting.Value
		}
		tb.add(o.Name, strconv.Itoa(o.Calls), per, lpc, human.Duration(o.Idle), human.Share(share(o.Idle, res.Window.Dur())), set)
	}
	return tb
}

func copiesTable(res *analyze.Result) *table {
	// The last cell ends in a frame from the trace: it is cut to about 50
	// columns of frame after the sizes and times before it.
	tb := newTable("lrrrrrl", "copy", "count", "bytes", "device", "host blocked", "idle", "blocks longest").
		clip(0, 0, 0, 0, 0, 0, 80)
	for _, c := range res.Copies {
		top := ""
		if t := c.Top; t.Count > 0 {
			top = fmt.Sprintf("%s x%d, %s", human.Bytes(t.Bytes), t.Count, human.Duration(t.HostBlocked))
			if !t.Frame.IsZero() {
				top += " at " + t.Frame.String()
			}
		}
		tb.add(c.Kind(), strconv.Itoa(c.Count), human.Bytes(c.Bytes), human.Duration(c.Device), human.Duration(c.HostBlocked), human.Duration(c.Idle), top)
	}
	return tb
}

// timelineLegend explains the bar's letters: busy, each cause's mark (from
// the cause table), idle below the minimum gap and, in a job (jr set), the
// job's rest (job.Rest).
func timelineLegend(jr *job.Result) string {
	parts := []string{"# busy"}
	for _, c := range analyze.Causes() {
		parts = append(parts, string(c.Mark())+" "+c.String())
	}
	parts = append(parts, ". idle below min-gap")
	if jr != nil {
		parts = append(parts, "w collective wait with no idle cause (the straggler computing or late)",
			"- outside the rank's own step (a job's step runs from the first rank's start to the last rank's end)")
	}
	return strings.Join(parts, ", ")
}

// stepBar draws one step as a bar of timelineWidth letters, each part as
// long as its share of the step: busy first, then each cause in order,
// then a job's rest (job.Rest; zero for a single run).
func stepBar(s *analyze.Step, rest job.Rest) string {
	type barPart struct {
		mark byte
		ns   int64
	}
	parts := []barPart{{'#', s.DeviceBusy}}
	for _, c := range analyze.Causes() {
		parts = append(parts, barPart{c.Mark(), s.Idle.Of(c)})
	}
	parts = append(parts, barPart{'.', s.Idle.BelowMinGap}, barPart{'w', rest.Compute + rest.Late}, barPart{'-', rest.Outside})
	var b strings.Builder
	var sum int64
	last := byte(' ')
	for _, p := range parts {
		// Each part ends where the running total ends, so the parts
		// round without drifting and the bar is always full.
		from := int(sum * timelineWidth / max(s.Dur, 1))
		sum += p.ns
		to := min(int(sum*timelineWidth/max(s.Dur, 1)), timelineWidth)
		b.WriteString(strings.Repeat(string(p.mark), max(to-from, 0)))
		if to > from {
			last = p.mark
		}
	}
	if 2*(s.Dur-sum)*timelineWidth >= s.Dur {
		last = ' ' // more than half a cell unaccounted for: left blank
	}
	return b.String() + strings.Repeat(string(last), max(timelineWidth-b.Len(), 0))
}

// stepSharesHeading heads the step bars: each is the step's shares, busy
// then idle by cause, not its course in time (the longest gaps and the
// HTML report's timeline give that).
const stepSharesHeading = "Step shares (busy, then idle by cause; not in time order)"

// timelineName is the width of the step timeline's name column.
const timelineName = 18

// timelineLines returns one line per step, at most limit, each step's name
// escaped by esc and cut to its column.
func timelineLines(res *analyze.Result, limit int, esc func(string) string, jr *job.Result) []string {
	var out []string
	for i := range res.Steps {
		if i == limit {
			break
		}
		s := &res.Steps[i]
		name := untrusted.Pad(untrusted.Clip(stepName(res, i), timelineName, esc), timelineName)
		out = append(out, fmt.Sprintf("%s |%s| %s", name, stepBar(s, stepRest(jr, i)), human.Duration(s.Dur)))
	}
	return out
}

// insights writes the text report's call sites, op table, copies and
// timeline.
func (t *textWriter) insights(res *analyze.Result, limit int) {
	if len(res.CallSites) > 0 {
		t.heading("Call sites (where the idle was caused)")
		t.table(sitesTable(res))
		for _, n := range sitesNotes(res) {
			t.printf("  %s\n", n)
		}
		if res.StackHint != "" {
			t.printf("  %s\n", res.StackHint)
		}
	}
	if len(res.Ops) > 0 {
		t.heading("Host ops holding the device idle")
		t.table(opsTable(res))
	}
	if len(res.Copies) > 0 {
		t.heading("Copies")
		t.table(copiesTable(res))
	}
	if lines := timelineLines(res, limit, untrusted.Terminal, t.opt.job); len(lines) > 0 {
		t.heading(stepSharesHeading)
		for _, l := range lines {
			t.printf("  %s\n", styled(l))
		}
		t.printf("  %s\n", timelineLegend(t.opt.job))
	}
}

// mdInsights writes the same sections folded in the Markdown report.
func (t *textWriter) mdInsights(res *analyze.Result, limit int) {
	sections := []struct {
		title string
		tb    *table
		show  bool
	}{
		{"Call sites", sitesTable(res), len(res.CallSites) > 0},
		{"Host ops holding the device idle", opsTable(res), len(res.Ops) > 0},
		{"Copies", copiesTable(res), len(res.Copies) > 0},
	}
	for _, s := range sections {
		if !s.show {
			continue
		}
		t.printf("\n<details><summary>%s</summary>\n\n", s.title)
		t.mdTable(s.tb)
		if s.title == "Call sites" {
			for _, n := range sitesNotes(res) {
				t.printf("\n%s\n", n)
			}
		}
		if s.title == "Call sites" && res.StackHint != "" {
			t.printf("\n%s\n", mdEscape(res.StackHint))
		}
		t.printf("\n</details>\n")
	}
	// In a code block nothing renders as markup, but a control character
	// would still reach whoever reads the Markdown source.
	if lines := timelineLines(res, limit, untrusted.Terminal, t.opt.job); len(lines) > 0 {
		t.printf("\n<details><summary>%s</summary>\n\n```\n", stepSharesHeading)
		for _, l := range lines {
			t.printf("%s\n", strings.ReplaceAll(l, "`", "'"))
		}
		t.printf("%s\n```\n\n</details>\n", timelineLegend(t.opt.job))
	}
}
