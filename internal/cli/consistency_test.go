package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/report"
)

// figures are a run's headline figures as a report prints them: step time
// and device busy per step (Durations), utilization and attributed idle
// (percentages), the window's gap count, and each cause's idle share.
type figures struct {
	step, busy, util, attributed, gaps string
	shares                             map[string]string
	// sync is the sync share the text holds against its threshold.
	sync string
}

// TestFiguresAgree reads the headline figures of every real trace with
// device work from the text, JSON, Markdown and HTML reports, the gaps
// export, compare's Summary and check's outcomes, and requires them to be
// the same figures with the same rounding; and the steps to tile the
// window, each step's busy and idle adding up to its length.
func TestFiguresAgree(t *testing.T) {
	af := addAnalysisFlags(pflag.NewFlagSet("", pflag.ContinueOnError))
	for _, c := range realtraces.Sample(t) {
		if slices.Contains(c.Expect, "error") || slices.Contains(c.Expect, string(analyze.NoDevice)) {
			continue
		}
		t.Run(c.File, func(t *testing.T) {
			path := realtraces.Path(t, c.File)
			res, err := af.analyzeFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkTiling(t, res)
			text := rendered(t, res, render.Text)
			want := textFigures(t, text)
			for name, got := range map[string]figures{
				"markdown": markdownFigures(t, rendered(t, res, render.Markdown)),
				"html":     htmlFigures(t, rendered(t, res, render.HTML)),
				"json":     jsonFigures(t, res, rendered(t, res, render.JSON)),
				"compare":  summaryFigures(res),
			} {
				sameFigures(t, name, got, want)
			}
			checkOutcomes(t, res, want)
			if code, out, _ := tg("gaps", path); code != 0 || count(strings.Count(out, "\n")-1) != want.gaps {
				t.Errorf("tracegap gaps: exit %d, %d rows; the text report counts %s gaps", code, strings.Count(out, "\n")-1, want.gaps)
			}
			if c.File == workers4 && want.util != "89.3%" {
				// 522,481,000 ns of GPU work in a 584,782,000 ns
				// window: the profiler-stop tail is outside it.
				t.Errorf("utilization %s, want 89.3%%", want.util)
			}
		})
	}
}

// checkTiling checks that the steps tile the window and that each step's
// busy and idle time add up to its length.
func checkTiling(t *testing.T, res *analyze.Result) {
	t.Helper()
	var sum int64
	for i, s := range res.Steps {
		if i > 0 && s.Start != res.Steps[i-1].Start+res.Steps[i-1].Dur {
			t.Errorf("step %d starts at %d, not where step %d ends", i, s.Start, i-1)
		}
		if got := s.DeviceBusy + s.Idle.Total(); got != s.Dur {
			t.Errorf("step %d: busy %d + idle %d = %d ns, want its length %d", i, s.DeviceBusy, s.Idle.Total(), got, s.Dur)
		}
		sum += s.Dur
	}
	if len(res.Steps) > 0 && (sum != res.Window.Dur() || res.Steps[0].Start != res.Window.Start) {
		t.Errorf("steps from %d sum to %d ns; want the window, from %d for %d", res.Steps[0].Start, sum, res.Window.Start, res.Window.Dur())
	}
}

func rendered(t *testing.T, res *analyze.Result, f render.Format) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.Write(&b, res, f, render.Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// figuresLine matches the figures line of the text, Markdown and HTML
// reports.
var figuresLine = regexp.MustCompile(`(?:step time (.+?) \(device busy (.+?)\), )?utilization (\S+%), attributed idle (\S+%) in (\S+) gaps? of`)

// lineFigures reads the figures line of a report and, with row, each
// cause's share from its breakdown table.
func lineFigures(t *testing.T, doc string, row func(doc, cause string) string) figures {
	t.Helper()
	m := figuresLine.FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("no figures line in:\n%s", doc)
	}
	f := figures{step: m[1], busy: m[2], util: m[3], attributed: m[4], gaps: m[5], shares: map[string]string{}}
	for _, c := range analyze.Causes() {
		f.shares[c.String()] = row(doc, c.String())
	}
	return f
}

// textFigures reads the text report, where the steps table's mean row and
// the longest gaps' heading repeat the step time, busy and gap count.
func textFigures(t *testing.T, text string) figures {
	t.Helper()
	f := lineFigures(t, text, func(doc, cause string) string {
		_, after, _ := strings.Cut(doc, "Idle in the window")
		for line := range strings.Lines(after) {
			if fs := strings.Fields(line); len(fs) > 2 && fs[0] == cause {
				return firstPercent(fs)
			}
		}
		return ""
	})
	if m := regexp.MustCompile(`against the thresholds: sync (\S+%)`).FindStringSubmatch(text); m != nil {
		f.sync = m[1]
	}
	if m := regexp.MustCompile(`Longest gaps \(\d+ of (\S+)\)`).FindStringSubmatch(text); m != nil && m[1] != f.gaps {
		t.Errorf("text: longest gaps of %s, figures line %s gaps", m[1], f.gaps)
	}
	if m := regexp.MustCompile(`(?m)^  mean\s+(\S+ \S+)\s+(\S+ \S+)`).FindStringSubmatch(text); m != nil && (m[1] != f.step || m[2] != f.busy) {
		t.Errorf("text: steps' mean row %s, busy %s; figures line %s, busy %s", m[1], m[2], f.step, f.busy)
	}
	return f
}

func firstPercent(fs []string) string {
	for _, s := range fs {
		if strings.HasSuffix(s, "%") {
			return s
		}
	}
	return ""
}

func markdownFigures(t *testing.T, md string) figures {
	t.Helper()
	return lineFigures(t, md, func(doc, cause string) string {
		for line := range strings.Lines(doc) {
			cells := strings.Split(line, "|")
			if len(cells) > 3 && strings.TrimSpace(cells[1]) == cause {
				return strings.TrimSpace(cells[3])
			}
		}
		return ""
	})
}

func htmlFigures(t *testing.T, page string) figures {
	t.Helper()
	return lineFigures(t, html.UnescapeString(page), func(doc, cause string) string {
		re := regexp.MustCompile(`<td class="l">` + regexp.QuoteMeta(cause) + `</td><td class="r">[^<]*</td><td class="r">([^<]*)</td>`)
		if m := re.FindStringSubmatch(doc); m != nil {
			return m[1]
		}
		return ""
	})
}

// jsonFigures reads the JSON report: the figures in ns and shares rounded
// to 4 decimals, which must be the exact ratios of its ns, rounded.
func jsonFigures(t *testing.T, res *analyze.Result, doc string) figures {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal([]byte(doc), &r); err != nil {
		t.Fatal(err)
	}
	fg, win := r.Figures, r.Window.DurNs
	ratio := func(what string, ns int64, rounded float64) string {
		exact := float64(ns) / float64(win)
		if math.Round(exact*1e4)/1e4 != rounded {
			t.Errorf("json: %s %v, want %d / %d rounded to 4 decimals", what, rounded, ns, win)
		}
		return pct(exact)
	}
	f := figures{
		util:       ratio("window_utilization", fg.WindowBusyNs, fg.WindowUtilization),
		attributed: ratio("attributed_idle_share", r.IdleBreakdown.IdleNs-r.IdleBreakdown.BelowMinGapNs, fg.AttributedIdleShare),
		gaps:       count(fg.WindowGaps),
		shares:     map[string]string{},
	}
	if len(res.Steps) > 0 {
		f.step, f.busy = human.Duration(fg.StepNs), human.Duration(fg.BusyPerStepNs)
	}
	for _, c := range analyze.Causes() {
		f.shares[c.String()] = ratio(c.Key()+"_share", r.IdleBreakdown.Ns[c], r.IdleBreakdown.Share[c])
	}
	return f
}

// summaryFigures reads compare's Summary of the run.
func summaryFigures(res *analyze.Result) figures {
	s := compare.Summarize(res)
	f := figures{util: pct(s.Utilization), attributed: pct(s.IdleShare), shares: map[string]string{}}
	if !s.PerWindow {
		f.step, f.busy = human.Duration(s.StepTime), human.Duration(s.DeviceBusy)
	}
	for _, c := range analyze.Causes() {
		f.shares[c.String()] = pct(s.IdleOf(c.String()).Share)
	}
	return f
}

// sameFigures requires got to read as want; the Summary has no gap count.
func sameFigures(t *testing.T, name string, got, want figures) {
	t.Helper()
	if got.gaps == "" {
		got.gaps = want.gaps
	}
	if got.step != want.step || got.busy != want.busy || got.util != want.util || got.attributed != want.attributed || got.gaps != want.gaps {
		t.Errorf("%s: step %q, busy %q, utilization %s, attributed idle %s, %s gaps; text: %q, %q, %s, %s, %s",
			name, got.step, got.busy, got.util, got.attributed, got.gaps, want.step, want.busy, want.util, want.attributed, want.gaps)
	}
	for c, w := range want.shares {
		if got.shares[c] != w {
			t.Errorf("%s: %s share %q, text %q", name, c, got.shares[c], w)
		}
	}
}

// checkOutcomes requires check's figures, with every limit on, to be the
// reports': the idle shares, and the least busy device's busy share of
// the window as the text's devices table prints it.
func checkOutcomes(t *testing.T, res *analyze.Result, want figures) {
	t.Helper()
	on := check.Limit{Share: 1, On: true}
	rules := check.Rules{MaxIdle: on, MaxSyncIdle: on, MaxInputIdle: on, MinUtilization: check.Limit{On: true}}
	got := map[string]string{}
	for _, o := range rules.Evaluate(res) {
		got[o.Rule] = o.Figure
	}
	var low *analyze.Device
	for i := range res.Devices {
		if d := &res.Devices[i]; low == nil || d.WindowBusy < low.WindowBusy {
			low = d
		}
	}
	win := res.Window.Dur()
	for rule, w := range map[string]string{
		"max-idle":        want.attributed,
		"max-input-idle":  want.shares[analyze.Input.String()],
		"max-sync-idle":   want.sync,
		"min-utilization": pct(float64(low.WindowBusy)/float64(win)) + " (" + low.ID + ")",
	} {
		if got[rule] != w {
			t.Errorf("check %s measured %q, the reports %q", rule, got[rule], w)
		}
	}
	if len(res.Devices) == 1 && got["min-utilization"] != want.util+" ("+low.ID+")" {
		t.Errorf("check min-utilization %q, the run's utilization %s", got["min-utilization"], want.util)
	}
}

// pct formats a share as the reports do: a percentage with one decimal.
func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// count formats n as the reports do, with thousands separators.
func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestJobFiguresAgree does for a job (the eight DLRM ranks) what
// TestFiguresAgree does for one trace: the job's overall figures, with
// collective waits counted as idle, are the same in its text, JSON,
// Markdown and HTML reports and in check's outcomes.
func TestJobFiguresAgree(t *testing.T) {
	af := addAnalysisFlags(pflag.NewFlagSet("", pflag.ContinueOnError))
	ranks, err := filepath.Glob(filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks", "*.json.gz"))
	if err != nil || len(ranks) != 8 {
		t.Fatalf("%d DLRM ranks (%v), want 8", len(ranks), err)
	}
	jr, err := af.engine(2).AnalyzeJob(context.Background(), ranks)
	if err != nil {
		t.Fatal(err)
	}
	renderJob := func(f render.Format) string {
		var b bytes.Buffer
		if err := render.WriteJob(&b, jr, f, render.Options{}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	want := textFigures(t, renderJob(render.Text))
	for name, got := range map[string]figures{
		"markdown": markdownFigures(t, renderJob(render.Markdown)),
		"html":     htmlFigures(t, renderJob(render.HTML)),
		"json":     jsonFigures(t, &jr.Overall, renderJob(render.JSON)),
	} {
		sameFigures(t, name, got, want)
	}
	checkOutcomes(t, &jr.Overall, want)
}
