package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tracegap/tracegap/analyze"
)

// CompareSchema names the version of the comparison's JSON document.
const CompareSchema = "tracegap/compare/v1"

// WriteComparison renders a comparison of two runs as text, JSON or
// Markdown. Text and Markdown leave out the rows that are zero in both runs.
func WriteComparison(w io.Writer, c *analyze.Comparison, f Format) error {
	if c == nil {
		return fmt.Errorf("report: comparison is nil")
	}
	bw := bufio.NewWriter(w)
	var err error
	switch f {
	case Text:
		err = compareText(bw, c)
	case JSON:
		err = compareJSON(bw, c)
	case Markdown:
		err = compareMarkdown(bw, c)
	default:
		return fmt.Errorf("report: a comparison cannot be written as %q: expected text, json or markdown", f)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

func compareText(w io.Writer, c *analyze.Comparison) error {
	fmt.Fprintf(w, "base  %s\nnew   %s\n", cmpRunLine(&c.Base), cmpRunLine(&c.New))
	fmt.Fprintf(w, "verdict: %s\n\n", cmpVerdictChange(c))
	rows := cmpShownRows(c)
	// The metric names read left-aligned, the figures right-aligned:
	// pad the names to one width and let tabwriter align the rest.
	width := len("metric")
	for _, r := range rows {
		width = max(width, len(r.Metric))
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tbase\tnew\tchange\tratio\t\n", width, "metric")
	for _, r := range rows {
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t\n", width, r.Metric, cmpValue(&r, r.Base), cmpValue(&r, r.New), cmpDiff(&r), cmpRatio(r.Ratio))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s := c.Synthetic; s != nil {
		fmt.Fprintf(w, "\nsynthetic-data test (%s):\n", cmpSyntheticWhy(s))
		fmt.Fprintf(w, "  target step %s (base); base compute %s per step\n", Duration(s.Target), Duration(s.BaseCompute))
		fmt.Fprintf(w, "  new step %s; new input %s per step\n", Duration(s.NewStep), Duration(s.NewInput))
		fmt.Fprintf(w, "  %s\n", s.Conclusion)
		for _, site := range s.Syncs {
			fmt.Fprintf(w, "  sync %s in %s: %s\n", Duration(site.Time), cmpGaps(site.Gaps), stackString(site.Stack))
		}
	}
	if c.Limit > 0 {
		fmt.Fprintf(w, "\nregressions (limit %s): %s\n", percent(c.Limit), cmpRegressions(c, "; "))
	}
	return nil
}

func cmpGaps(n int) string {
	if n == 1 {
		return "1 gap"
	}
	return count(n) + " gaps"
}

func cmpRunLine(s *analyze.Summary) string {
	steps := fmt.Sprintf("%d steps", s.Steps)
	if s.PerWindow {
		steps = "no steps (figures per window)"
	}
	return fmt.Sprintf("%s (%s): %s, %s confidence, %s", s.Path, s.Format, s.Verdict, s.Confidence, steps)
}

func cmpVerdictChange(c *analyze.Comparison) string {
	if c.Base.Verdict == c.New.Verdict {
		return fmt.Sprintf("%s (unchanged)", c.New.Verdict)
	}
	return fmt.Sprintf("%s -> %s", c.Base.Verdict, c.New.Verdict)
}

func cmpSyntheticWhy(s *analyze.Synthetic) string {
	if s.Forced {
		return "base taken as fed with synthetic data"
	}
	return "base has no input-pipeline time: read as fed with synthetic data"
}

func cmpRegressions(c *analyze.Comparison, sep string) string {
	if len(c.Regressions) == 0 {
		return "none"
	}
	msgs := make([]string, len(c.Regressions))
	for i, r := range c.Regressions {
		msgs[i] = r.Message
	}
	return strings.Join(msgs, sep)
}

func cmpShownRows(c *analyze.Comparison) []analyze.Row {
	var rows []analyze.Row
	for _, r := range c.Rows {
		if r.Base != 0 || r.New != 0 {
			rows = append(rows, r)
		}
	}
	return rows
}

func cmpValue(r *analyze.Row, v float64) string {
	if r.Unit == analyze.UnitShare {
		return percent(v)
	}
	return Duration(int64(math.Round(v)))
}

func cmpDiff(r *analyze.Row) string {
	sign := ""
	if r.Diff > 0 {
		sign = "+"
	}
	if r.Unit == analyze.UnitShare {
		return sign + strconv.FormatFloat(r.Diff*100, 'f', 1, 64) + " pt"
	}
	return sign + Duration(int64(math.Round(r.Diff)))
}

func cmpRatio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + "x"
}

func compareMarkdown(w io.Writer, c *analyze.Comparison) error {
	fmt.Fprintf(w, "## tracegap compare: %s\n\n", cmpVerdictChange(c))
	fmt.Fprintf(w, "- base: `%s` (%s): **%s**, %s confidence, %d steps\n", c.Base.Path, c.Base.Format, c.Base.Verdict, c.Base.Confidence, c.Base.Steps)
	fmt.Fprintf(w, "- new: `%s` (%s): **%s**, %s confidence, %d steps\n\n", c.New.Path, c.New.Format, c.New.Verdict, c.New.Confidence, c.New.Steps)
	fmt.Fprintln(w, "| metric | base | new | change | ratio |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range cmpShownRows(c) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Metric, cmpValue(&r, r.Base), cmpValue(&r, r.New), cmpDiff(&r), cmpRatio(r.Ratio))
	}
	if s := c.Synthetic; s != nil {
		fmt.Fprintf(w, "\n### Synthetic-data test\n\n%s. Target step %s, base compute %s per step; new step %s, new input %s per step.\n\n%s\n",
			mdEscape(cmpSyntheticWhy(s)), Duration(s.Target), Duration(s.BaseCompute), Duration(s.NewStep), Duration(s.NewInput), mdEscape(s.Conclusion))
		for _, site := range s.Syncs {
			fmt.Fprintf(w, "- `%s`: %s in %s\n", stackString(site.Stack), Duration(site.Time), cmpGaps(site.Gaps))
		}
	}
	if c.Limit > 0 {
		fmt.Fprintf(w, "\n**Regressions** (limit %s): %s\n", percent(c.Limit), mdEscape(cmpRegressions(c, "; ")))
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
	InputFits   bool          `json:"input_fits"`
	Slower      bool          `json:"slower"`
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

func compareJSON(w io.Writer, c *analyze.Comparison) error {
	doc := cmpJSON{
		Schema:      CompareSchema,
		Base:        cmpSummaryJSON(&c.Base),
		New:         cmpSummaryJSON(&c.New),
		Changed:     c.Base.Verdict != c.New.Verdict,
		Rows:        make([]cmpJSONRow, len(c.Rows)),
		Regressions: []cmpJSONRegression{},
	}
	for i, r := range c.Rows {
		doc.Rows[i] = cmpJSONRow{Metric: r.Metric, Unit: string(r.Unit), Base: r.Base, New: r.New, Diff: r.Diff}
		if !math.IsNaN(r.Ratio) && !math.IsInf(r.Ratio, 0) {
			doc.Rows[i].Ratio = &r.Ratio
		}
	}
	if s := c.Synthetic; s != nil {
		js := &cmpJSONSynthetic{Forced: s.Forced, TargetNs: s.Target, BaseCompute: s.BaseCompute, NewStep: s.NewStep,
			NewInput: s.NewInput, InputFits: s.InputFits, Slower: s.Slower, Syncs: []cmpJSONSync{}, Conclusion: s.Conclusion}
		for _, site := range s.Syncs {
			js.Syncs = append(js.Syncs, cmpJSONSync{Name: site.Name, Stack: site.Stack, Ns: site.Time, Gaps: site.Gaps})
		}
		doc.Synthetic = js
	}
	if c.Limit > 0 {
		doc.Limit = &c.Limit
	}
	for _, r := range c.Regressions {
		doc.Regressions = append(doc.Regressions, cmpJSONRegression{r.Metric, r.Base, r.New, r.Change, r.Limit, r.Message})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func cmpSummaryJSON(s *analyze.Summary) cmpJSONSummary {
	j := cmpJSONSummary{
		Path: s.Path, Format: s.Format, Verdict: string(s.Verdict), Confidence: string(s.Confidence),
		Steps: s.Steps, PerWindow: s.PerWindow, StepNs: s.StepTime, DeviceBusy: s.DeviceBusy,
		Input: s.Input, Sync: s.Sync, Utilization: s.Utilization, IdleShare: s.IdleShare,
		IdlePerStep: map[string]int64{"below_min_gap": s.IdlePerStep.BelowMinGap},
		IdleShares:  map[string]float64{"below_min_gap": s.IdleShares[analyze.NumCauses]},
	}
	for c := range analyze.NumCauses {
		key := strings.ReplaceAll(c.String(), "-", "_")
		j.IdlePerStep[key] = s.IdlePerStep.Of(c)
		j.IdleShares[key] = s.IdleShares[c]
	}
	return j
}
