package render

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// CompareSchema names the version of the comparison's JSON document.
const CompareSchema = "tracegap/compare/v1"

// WriteComparison renders a comparison of two runs as text, JSON or
// Markdown. Text and Markdown leave out the rows that are zero in both runs.
// The JSON document is the one the upload service answers too. Text takes
// opt's Color and Width, as a run's report does.
func WriteComparison(w io.Writer, c *compare.Comparison, f Format, opt Options) error {
	if c == nil {
		return fmt.Errorf("report: comparison is nil")
	}
	d := lookup(f)
	if d == nil || d.compare == nil {
		return writerError(f, OfComparison)
	}
	bw := bufio.NewWriter(w)
	if err := d.compare(bw, c, opt); err != nil {
		return err
	}
	return bw.Flush()
}

// ComparisonRows returns the rows of a comparison that are not zero in both
// runs, formatted for people: metric, base, new, change and ratio. Text,
// Markdown and the service's page show these cells.
func ComparisonRows(c *compare.Comparison) [][5]string {
	var out [][5]string
	for i := range c.Rows {
		r := &c.Rows[i]
		if r.Base != 0 || r.New != 0 {
			out = append(out, [5]string{r.Metric, cmpValue(r, r.Base), cmpValue(r, r.New), cmpDiff(r), cmpRatio(r.Ratio)})
		}
	}
	return out
}

// SyntheticConclusion says in a sentence or two what the synthetic-data test
// shows. Names of blocking calls come from the trace: escape them for the
// medium.
func SyntheticConclusion(s *compare.Synthetic) string {
	if s.Outcome == compare.InputUnseen {
		return unseenConclusion(s)
	}
	if s.InputUnseen != "" {
		return fmt.Sprintf("the new run's step (%s) reaches the target (%s): it keeps up, though its input time cannot be seen: %s.",
			human.Duration(s.NewStep), human.Duration(s.Target), s.InputUnseen)
	}
	fits := "is longer than"
	if s.InputFits {
		fits = "fits inside"
	}
	in := fmt.Sprintf("the new run's input (%s per step) %s the synthetic run's compute (%s per step)",
		human.Duration(s.NewInput), fits, human.Duration(s.BaseCompute))
	slower := fmt.Sprintf(", yet its step (%s) is %s slower than the target (%s)",
		human.Duration(s.NewStep), human.Share(float64(s.NewStep)/float64(max(s.Target, 1))-1), human.Duration(s.Target))
	switch {
	case s.Outcome == compare.InputBound && !s.InputFits:
		return in + ": the input pipeline is the bottleneck; add loader workers, prefetch, or preprocess offline."
	case s.Outcome == compare.InputBound || s.Outcome == compare.InlineInput:
		return in + slower + inputWait(s)
	case s.Outcome == compare.KeepsUp:
		return in + fmt.Sprintf(" and its step (%s) reaches the target (%s): the input pipeline keeps up.",
			human.Duration(s.NewStep), human.Duration(s.Target))
	}
	msg := in + slower + ": the input pipeline is not the bottleneck, and a forced synchronization is the likely cause"
	if len(s.Syncs) == 0 {
		if s.NewSync > 0 || s.NewAfterSync > 0 {
			return msg + fmt.Sprintf(": the new run spends %s per step in blocking calls, and its device idles %s per step right after they return.",
				human.Duration(s.NewSync), human.Duration(s.NewAfterSync))
		}
		return msg + "; no blocking call was found in the new run, so look at the host work in its gaps."
	}
	names := make([]string, 0, 3)
	for _, site := range s.Syncs[:min(3, len(s.Syncs))] {
		names = append(names, fmt.Sprintf("%s (%s in %s)", site.Name, human.Duration(site.Time), counted(site.Gaps, "gap")))
	}
	return msg + ": " + strings.Join(names, ", ") + "."
}

// inputWait says why input that fits inside compute still holds the new
// run back, from its analysis's finding (the verdict rule): an inline
// loader not overlapped with compute, or background workers the loop waits
// on.
func inputWait(s *compare.Synthetic) string {
	var f compare.InputFinding
	if s.InputFinding != nil {
		f = *s.InputFinding
	}
	loader := "its loader"
	if f.Loader != "" {
		loader = fmt.Sprintf("its loader (%s)", f.Loader)
	}
	why := fmt.Sprintf("%s runs inline on the loop, fast enough but not overlapped with compute, so the input pipeline, not a sync, is the cause.", loader)
	if s.Outcome == compare.InputBound {
		why = fmt.Sprintf("the loop waits on the background workers of %s, so the input pipeline is the bottleneck.", loader)
	}
	if f.Fix != "" {
		why += " " + f.Fix
	}
	return fmt.Sprintf(", and its device idles %s per step waiting on input (%s on syncs): %s",
		human.Duration(s.NewInputIdle), human.Duration(s.NewSyncIdle), why)
}

// unseenConclusion says why the test does not conclude: the new run's
// input time cannot be seen.
func unseenConclusion(s *compare.Synthetic) string {
	msg := fmt.Sprintf("the new run's input time cannot be seen: %s", s.InputUnseen)
	if !s.Forced {
		msg += "; with neither run showing input, the base may not be synthetic either (say so with --synthetic-base if it is)"
	}
	if s.Slower {
		msg += fmt.Sprintf(". Its step (%s) is %s slower than the target (%s), from input or a sync the test cannot tell apart",
			human.Duration(s.NewStep), human.Share(float64(s.NewStep)/float64(max(s.Target, 1))-1), human.Duration(s.Target))
	}
	return msg + "."
}

// RegressionMessage says in one line how a figure grew past its limit.
func RegressionMessage(r compare.Regression) string {
	if r.Metric == compare.MetricStepTime {
		return fmt.Sprintf("step time grew %s (%s -> %s), limit %s",
			human.Share(r.Change), human.Duration(int64(r.Base)), human.Duration(int64(r.New)), human.Share(r.Limit))
	}
	return fmt.Sprintf("attributed %s grew %.1f points (%s -> %s), limit %.1f points",
		r.Metric, r.Change*100, human.Share(r.Base), human.Share(r.New), r.Limit*100)
}

func compareText(w io.Writer, c *compare.Comparison, opt Options) error {
	w, flush := wrapped(w, opt.Width)
	t := &textWriter{w: w, opt: opt, terminal: true}
	t.printf("base  %s\nnew   %s\n", untrusted.Terminal(cmpRunLine(&c.Base)), untrusted.Terminal(cmpRunLine(&c.New)))
	t.printf("verdict: %s\n\n", t.style(cmpVerdictChange(c), ansiBold+verdictColor(c.New.Verdict)))
	if t.err != nil {
		return t.err
	}
	rows := ComparisonRows(c)
	// The metric names read left-aligned, the figures right-aligned:
	// pad the names to one width and let tabwriter align the rest.
	width := len("metric")
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tbase\tnew\tchange\tratio\t\n", width, "metric")
	for _, r := range rows {
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t\n", width, r[0], r[1], r[2], r[3], r[4])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeRaw(w, table.String()); err != nil {
		return err
	}
	if s := c.Synthetic; s != nil {
		fmt.Fprintf(w, "\nsynthetic-data test (%s):\n", cmpSyntheticWhy(s))
		fmt.Fprintf(w, "  target step %s (base); base compute %s per step\n", human.Duration(s.Target), human.Duration(s.BaseCompute))
		fmt.Fprintf(w, "  new step %s; new input %s per step\n", human.Duration(s.NewStep), human.Duration(s.NewInput))
		fmt.Fprintf(w, "  %s\n", untrusted.Terminal(SyntheticConclusion(s)))
		for _, site := range s.Syncs {
			fmt.Fprintf(w, "  sync %s in %s: %s\n", human.Duration(site.Time), counted(site.Gaps, "gap"), untrusted.Terminal(stackString(site.Stack)))
		}
	}
	if c.Limit > 0 {
		color := ansiGreen
		if len(c.Regressions) > 0 {
			color = ansiRed
		}
		fmt.Fprintf(w, "\nregressions (limit %s): %s\n", human.Share(c.Limit), t.style(cmpRegressions(c, "; "), color))
	}
	return flush()
}

func cmpRunLine(s *compare.Summary) string {
	steps := counted(s.Steps, "step")
	if s.PerWindow {
		steps = "no steps (figures per window)"
	}
	return fmt.Sprintf("%s (%s): %s, %s confidence, %s", s.Path, s.Format, s.Verdict, s.Confidence, steps)
}

func cmpVerdictChange(c *compare.Comparison) string {
	if c.Base.Verdict == c.New.Verdict {
		return fmt.Sprintf("%s (unchanged)", c.New.Verdict)
	}
	return fmt.Sprintf("%s -> %s", c.Base.Verdict, c.New.Verdict)
}

func cmpSyntheticWhy(s *compare.Synthetic) string {
	if s.Forced {
		return "base taken as fed with synthetic data"
	}
	return "base has no input-pipeline time: read as fed with synthetic data"
}

func cmpRegressions(c *compare.Comparison, sep string) string {
	if len(c.Regressions) == 0 {
		return "none"
	}
	msgs := make([]string, len(c.Regressions))
	for i, r := range c.Regressions {
		msgs[i] = RegressionMessage(r)
	}
	return strings.Join(msgs, sep)
}

func cmpValue(r *compare.Row, v float64) string {
	if r.Unit == compare.UnitShare {
		return human.Share(v)
	}
	return human.Duration(int64(math.Round(v)))
}

func cmpDiff(r *compare.Row) string {
	sign := ""
	if r.Diff > 0 {
		sign = "+"
	}
	if r.Unit == compare.UnitShare {
		return sign + strconv.FormatFloat(r.Diff*100, 'f', 1, 64) + " pt"
	}
	return sign + human.Duration(int64(math.Round(r.Diff)))
}

func cmpRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + "x"
}

func compareMarkdown(w io.Writer, c *compare.Comparison) error {
	fmt.Fprintf(w, "## tracegap compare: %s\n\n", cmpVerdictChange(c))
	for _, side := range []struct {
		name string
		s    *compare.Summary
	}{{"base", &c.Base}, {"new", &c.New}} {
		fmt.Fprintf(w, "- %s: %s (%s): **%s**, %s confidence, %s\n", side.name, untrusted.MarkdownCode(side.s.Path),
			mdEscape(side.s.Format), side.s.Verdict, side.s.Confidence, human.Count(side.s.Steps, "step"))
	}
	fmt.Fprintln(w, "\n| metric | base | new | change | ratio |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range ComparisonRows(c) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3], r[4])
	}
	if s := c.Synthetic; s != nil {
		fmt.Fprintf(w, "\n### Synthetic-data test\n\n%s. Target step %s, base compute %s per step; new step %s, new input %s per step.\n\n%s\n",
			mdEscape(cmpSyntheticWhy(s)), human.Duration(s.Target), human.Duration(s.BaseCompute), human.Duration(s.NewStep), human.Duration(s.NewInput), mdEscape(untrusted.Terminal(SyntheticConclusion(s))))
		for _, site := range s.Syncs {
			fmt.Fprintf(w, "- %s: %s in %s\n", untrusted.MarkdownCode(stackString(site.Stack)), human.Duration(site.Time), counted(site.Gaps, "gap"))
		}
	}
	if c.Limit > 0 {
		fmt.Fprintf(w, "\n**Regressions** (limit %s): %s\n", human.Share(c.Limit), mdEscape(cmpRegressions(c, "; ")))
	}
	return nil
}

type cmpJSON struct {
	Schema      string              `json:"schema"`
	Base        cmpJSONSummary      `json:"base"`
	New         cmpJSONSummary      `json:"new"`
	Changed     bool                `json:"verdict_changed"`
	Rows        []cmpJSONRow        `json:"rows"`
	Synthetic   *cmpJSONSynthetic   `json:"synthetic"`
	Limit       *float64            `json:"regression_limit"`
	Regressions []cmpJSONRegression `json:"regressions"`
}

type cmpJSONSummary struct {
	Path        string             `json:"path"`
	Format      string             `json:"format"`
	Verdict     string             `json:"verdict"`
	Confidence  string             `json:"confidence"`
	Steps       int                `json:"steps"`
	PerWindow   bool               `json:"per_window"`
	StepNs      int64              `json:"step_ns"`
	DeviceBusy  int64              `json:"device_busy_ns"`
	Input       int64              `json:"input_ns"`
	Sync        int64              `json:"sync_ns"`
	Utilization float64            `json:"utilization"`
	IdleShare   float64            `json:"idle_share"`
	IdlePerStep map[string]int64   `json:"idle_per_step_ns"`
	IdleShares  map[string]float64 `json:"idle_shares"`
}

type cmpJSONRow struct {
	Metric string   `json:"metric"`
	Unit   string   `json:"unit"`
	Base   float64  `json:"base"`
	New    float64  `json:"new"`
	Diff   float64  `json:"diff"`
	Ratio  *float64 `json:"ratio"`
}

type cmpJSONSynthetic struct {
	Forced      bool          `json:"forced"`
	TargetNs    int64         `json:"target_step_ns"`
	BaseCompute int64         `json:"base_compute_ns"`
	NewStep     int64         `json:"new_step_ns"`
	NewInput    int64         `json:"new_input_ns"`
	InputIdle   int64         `json:"new_input_idle_ns"`
	SyncIdle    int64         `json:"new_sync_idle_ns"`
	InputFits   bool          `json:"input_fits"`
	InputUnseen string        `json:"input_unseen"`
	Slower      bool          `json:"slower"`
	Outcome     string        `json:"outcome"`
	Syncs       []cmpJSONSync `json:"syncs"`
	Conclusion  string        `json:"conclusion"`
}

type cmpJSONSync struct {
	Name  string   `json:"name"`
	Stack []string `json:"stack"`
	Ns    int64    `json:"ns"`
	Gaps  int      `json:"gaps"`
}

type cmpJSONRegression struct {
	Metric  string  `json:"metric"`
	Base    float64 `json:"base"`
	New     float64 `json:"new"`
	Change  float64 `json:"change"`
	Limit   float64 `json:"limit"`
	Message string  `json:"message"`
}

func compareJSON(w io.Writer, c *compare.Comparison) error {
	doc := cmpJSON{
		Schema:      CompareSchema,
		Base:        cmpSummaryJSON(&c.Base),
		New:         cmpSummaryJSON(&c.New),
		Changed:     c.Base.Verdict != c.New.Verdict,
		Rows:        make([]cmpJSONRow, len(c.Rows)),
		Synthetic:   cmpSyntheticJSON(c.Synthetic),
		Regressions: []cmpJSONRegression{},
	}
	for i, r := range c.Rows {
		doc.Rows[i] = cmpJSONRow{Metric: r.Metric, Unit: string(r.Unit), Base: r.Base, New: r.New, Diff: r.Diff}
		if !math.IsNaN(r.Ratio) && !math.IsInf(r.Ratio, 0) {
			doc.Rows[i].Ratio = &r.Ratio
		}
	}
	if c.Limit > 0 {
		doc.Limit = &c.Limit
	}
	for _, r := range c.Regressions {
		doc.Regressions = append(doc.Regressions, cmpJSONRegression{r.Metric, r.Base, r.New, r.Change, r.Limit, RegressionMessage(r)})
	}
	enc := json.NewEncoder(untrusted.JSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func cmpSyntheticJSON(s *compare.Synthetic) *cmpJSONSynthetic {
	if s == nil {
		return nil
	}
	js := &cmpJSONSynthetic{Forced: s.Forced, TargetNs: s.Target, BaseCompute: s.BaseCompute, NewStep: s.NewStep,
		NewInput: s.NewInput, InputIdle: s.NewInputIdle, SyncIdle: s.NewSyncIdle, InputFits: s.InputFits, InputUnseen: s.InputUnseen, Slower: s.Slower, Outcome: string(s.Outcome),
		Syncs: []cmpJSONSync{}, Conclusion: SyntheticConclusion(s)}
	for _, site := range s.Syncs {
		js.Syncs = append(js.Syncs, cmpJSONSync{Name: site.Name, Stack: site.Stack, Ns: site.Time, Gaps: site.Gaps})
	}
	return js
}

func cmpSummaryJSON(s *compare.Summary) cmpJSONSummary {
	j := cmpJSONSummary{
		Path: s.Path, Format: s.Format, Verdict: string(s.Verdict), Confidence: string(s.Confidence),
		Steps: s.Steps, PerWindow: s.PerWindow, StepNs: s.StepTime, DeviceBusy: s.DeviceBusy,
		Input: s.Input, Sync: s.Sync, Utilization: s.Utilization, IdleShare: s.IdleShare,
		IdlePerStep: map[string]int64{}, IdleShares: map[string]float64{},
	}
	for _, ci := range s.Idle {
		key := strings.ReplaceAll(ci.Cause, "-", "_")
		j.IdlePerStep[key] = ci.PerStep
		j.IdleShares[key] = ci.Share
	}
	return j
}
