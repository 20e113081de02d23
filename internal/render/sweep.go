package render

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
)

// SweepSchema names the version of the sweep's JSON document.
const SweepSchema = "tracegap/sweep/v1"

// WriteSweep renders a sweep as text, Markdown, JSON or HTML: one row per
// run, the knee and the recommendation.
func WriteSweep(w io.Writer, s *compare.Sweep, f Format, opt Options) error {
	if s == nil {
		return fmt.Errorf("report: sweep is nil")
	}
	d := lookup(f)
	if d == nil || d.sweep == nil {
		return writerError(f, OfSweep)
	}
	bw := bufio.NewWriter(w)
	if err := d.sweep(bw, s, opt); err != nil {
		return err
	}
	return bw.Flush()
}

// sweepTable is the runs' table; labels and verdicts come from the user
// and the traces: callers escape the cells for their medium.
func sweepTable(s *compare.Sweep) *table {
	name := s.Setting
	if name == "" {
		name = "run"
	}
	head := []string{name, "step time", "median", "p90", "stability", "device busy", "input wait/step"}
	align := "lrrrlrr"
	for _, c := range analyze.Causes() {
		head, align = append(head, "idle "+c.String()), align+"r"
	}
	head, align = append(head, "verdict"), align+"l"
	tb := newTable(align, head...).cutAt(len(head)-1, cutNever)
	for i := range s.Runs {
		r := &s.Runs[i]
		sm := &r.Summary
		label := r.Label
		if i == s.Knee {
			label += " (knee)"
		}
		cells := []string{label, human.Duration(sm.StepTime), human.Duration(sm.StepMedian), human.Duration(sm.StepP90), sm.Stability,
			human.Share(sm.Utilization), human.Duration(sm.Input)}
		for _, c := range analyze.Causes() {
			cells = append(cells, human.Share(sm.IdleOf(c.String()).Share))
		}
		tb.add(append(cells, string(sm.Verdict))...)
	}
	return tb
}

// sweepText writes the sweep for a terminal: its table fitted to
// opt.Width (the long cause names over two lines first), the
// recommendation wrapped and, in colour, bold.
func sweepText(w io.Writer, s *compare.Sweep, opt Options) error {
	w, flush := wrapped(w, opt.Width)
	t := &textWriter{w: w, opt: opt, terminal: true}
	t.printf("%s\n\n", t.style(fmt.Sprintf("Sweep over %d runs", len(s.Runs)), ansiBold))
	t.table(sweepTable(s))
	t.printf("\n%s\n", t.style(s.Recommendation, ansiBold))
	if t.err != nil {
		return t.err
	}
	return flush()
}

func sweepMarkdown(w io.Writer, s *compare.Sweep) error {
	if _, err := fmt.Fprintf(w, "### Sweep over %d runs\n\n", len(s.Runs)); err != nil {
		return err
	}
	if err := sweepTable(s).renderMarkdown(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", mdEscape(s.Recommendation))
	return err
}

var sweepPage = template.Must(template.New("sweep").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>tracegap sweep</title>
<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}</style>
</head><body>
<h1>Sweep over {{len .Rows}} runs</h1>
{{.Chart}}
<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p>{{.Recommendation}}</p>
</body></html>
`))

func sweepHTML(w io.Writer, s *compare.Sweep) error {
	tb := sweepTable(s)
	return executeHTML(sweepPage, w, struct {
		Head           []string
		Rows           [][]string
		Chart          template.HTML
		Recommendation string
	}{tb.header, tb.rows, sweepChart(s), s.Recommendation})
}

// sweepChart draws each run's step time as a bar split into device busy
// and idle by cause (input, sync, other), setting on the x axis. Labels
// are escaped: they come from the user or the traces.
func sweepChart(s *compare.Sweep) template.HTML {
	const w, h, pad = 480, 200, 30
	var top int64 = 1
	for _, r := range s.Runs {
		top = max(top, r.Summary.StepTime)
	}
	bw := (w - 2*pad) / max(len(s.Runs), 1)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="step time by setting">`, w, h+40)
	for i, r := range s.Runs {
		sm := &r.Summary
		x := pad + i*bw
		y := float64(h)
		parts := []struct {
			share float64
			color string
		}{
			{sm.Utilization, busyColor},
			{sm.IdleOf(analyze.Input.String()).Share, causeColor[analyze.Input]},
			{sm.IdleOf(analyze.InSync.String()).Share + sm.IdleOf(analyze.AfterSync.String()).Share, causeColor[analyze.InSync]},
			{1 - sm.Utilization - sm.IdleOf(analyze.Input.String()).Share - sm.IdleOf(analyze.InSync.String()).Share - sm.IdleOf(analyze.AfterSync.String()).Share, neutralGrey},
		}
		full := float64(h-10) * float64(sm.StepTime) / float64(top)
		for _, p := range parts {
			ph := full * max(p.share, 0)
			y -= ph
			fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"/>`, x+4, y, bw-8, ph, p.color)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`, x+bw/2, h+15, template.HTMLEscapeString(r.Label))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" text-anchor="middle">%s</text>`, x+bw/2, h+30, template.HTMLEscapeString(human.Duration(sm.StepTime)))
	}
	fmt.Fprintf(&b, `<text x="4" y="12" font-size="11">step time: <tspan fill="%s">device busy</tspan>, <tspan fill="%s">idle on input</tspan>, <tspan fill="%s">syncs</tspan>, <tspan fill="%s">other</tspan> (the report's colours)</text></svg>`,
		busyColor, causeColor[analyze.Input], causeColor[analyze.InSync], neutralGrey)
	return template.HTML(b.String())
}

// CompareChart draws the two runs of a comparison as the sweep draws its
// runs: a bar each, as tall as its step time, stacked busy, idle on input,
// syncs and other idle, in the report's colours.
func CompareChart(c *compare.Comparison) template.HTML {
	return sweepChart(&compare.Sweep{Runs: []compare.SweepRun{{Label: "base", Summary: c.Base}, {Label: "new", Summary: c.New}}})
}
