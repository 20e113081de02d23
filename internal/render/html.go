package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// The page is one file with no network access: CSS and script are inline.
//
//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

// htmlPage is what the template renders.
type htmlPage struct {
	Title string
	Runs  []htmlRun
	// Legend lists the colours of each cause.
	Legend []htmlLegend
	// Busy and Wait are the colours of device work and of collective
	// waits; VerdictCSS colours the verdict badges.
	Busy, Wait string
	VerdictCSS template.CSS
}

type htmlLegend struct{ Name, Color string }

// htmlRun is one result on the page.
type htmlRun struct {
	ID         string
	Name, Path string
	Verdict    string
	Confidence string
	Summary    string
	Secondary  string
	Reasons    []string
	Facts      string
	Window     string
	Figures    string
	Stability  string
	Thresholds string
	Check      string
	// T0 and Unit convert SVG units back to trace time for the axis.
	T0   int64
	Unit float64
	// WinA and WinB are the window in SVG units.
	WinA, WinB string
	Steps      []htmlStep
	StepsSVG   template.HTML
	// StepChart is the step chart (see stepChartSVG); Sites, Ops and
	// Copies the tables the text report has, with the sites' notes.
	StepChart          template.HTML
	Sites, Ops, Copies *table
	SiteNotes          []string
	Devices            []htmlDevice
	Breakdown          *table
	DeviceRows         *table
	Gaps               *table
	StepRows           *table
	// Omitted says what the page leaves out (see listMax), or is empty.
	Omitted  string
	Findings []analyze.Finding
	Warnings []string
	// Job holds a job's own sections; nil for a single run.
	Job *htmlJob
}

// htmlStep is a step in the zoom selector: A and B are its extent in SVG
// units and Num its number, which labels it on the step band and names it
// in a link: #step=Num opens the page zoomed to it.
type htmlStep struct {
	Name, A, B string
	Num        int64
}

type htmlDevice struct {
	ID, Facts string
	SVG       template.HTML
	// Rank is the timeline row of the job's rank whose last device this
	// is; nil for a single run.
	Rank *htmlRankRow
}

// gapsByDevice returns the indexes in res.Gaps of each device's gaps, so
// that drawing every device's timeline reads the gaps once.
func gapsByDevice(res *analyze.Result) map[string][]int {
	by := map[string][]int{}
	for i := range res.Gaps {
		by[res.Gaps[i].Device] = append(by[res.Gaps[i].Device], i)
	}
	return by
}

func writeHTML(w io.Writer, results []*analyze.Result, opt Options) error {
	return executeHTML(htmlTemplate, w, newHTMLPage(results, opt))
}

// executeHTML executes t to w with the control characters of untrusted
// text (file and trace names) escaped visibly, which the HTML escaping
// leaves as they are: a report is also read in a terminal.
func executeHTML(t *template.Template, w io.Writer, data any) error {
	return t.Execute(untrusted.MarkupWriter(w), data)
}

// newHTMLPage lays out the page of results.
func newHTMLPage(results []*analyze.Result, opt Options) htmlPage {
	page := htmlPage{Busy: busyColor, Wait: waitColor, VerdictCSS: template.CSS(VerdictCSS())}
	for c := analyze.Cause(0); c < analyze.NumCauses; c++ {
		page.Legend = append(page.Legend, htmlLegend{c.String(), causeColor[c]})
	}
	var titles []string
	for i, res := range results {
		run := newHTMLRun(res, i, opt)
		page.Runs = append(page.Runs, run)
		titles = append(titles, run.Name+": "+run.Verdict)
	}
	page.Title = "tracegap: " + strings.Join(titles, ", ")
	return page
}

func newHTMLRun(res *analyze.Result, i int, opt Options) htmlRun {
	s := &res.Source
	line := summarize(res)
	r := htmlRun{
		ID: "run" + strconv.Itoa(i), Name: filepath.Base(s.Path), Path: s.Path,
		Verdict: string(line.Verdict), Confidence: string(res.Confidence),
		Summary: line.afterBadge(), Reasons: otherReasons(res, line), Facts: sourceFacts(s, res.Framework),
		Thresholds: thresholdsLine(&res.Options), Findings: res.Findings, Warnings: s.Warnings,
	}
	if s.Path == "" {
		r.Name = "(stdin)"
	}
	var sec []string
	for _, v := range res.Secondary {
		sec = append(sec, string(v))
	}
	r.Secondary = strings.Join(sec, ", ")
	if res.Verdict == analyze.NoDevice || len(res.Devices) == 0 {
		return r
	}
	a := newAxis(res)
	r.T0, r.Unit = a.t0, a.unit
	r.WinA, r.WinB = a.x(res.Window.Start), a.x(res.Window.End)
	r.Window = windowLine(res.Window)
	r.Figures = figuresLine(res)
	r.Stability = stabilityLine(res)
	r.Check = thresholdCheck(res)
	ns := opt.listed(len(res.Steps))
	for j, st := range res.Steps[:ns] {
		num := st.Num
		if num < 0 { // a step without a number is known by its place
			num = int64(j)
		}
		r.Steps = append(r.Steps, htmlStep{Name: stepName(res, j), A: a.x(st.Start), B: a.x(st.Start + st.Dur), Num: num})
	}
	if len(res.Steps) > 0 {
		r.StepsSVG = template.HTML(stepsSVG(res, ns, a))
	}
	drawn := len(res.Devices)
	if !opt.AllSteps {
		drawn = min(drawn, htmlMaxTimelines)
	}
	gaps := gapsByDevice(res)
	for j := range res.Devices[:drawn] {
		d := &res.Devices[j]
		r.Devices = append(r.Devices, htmlDevice{
			ID:    d.ID,
			Facts: human.Share(d.Utilization) + " busy over " + human.Duration(d.End-d.Start),
			SVG:   template.HTML(deviceSVG(res, d, gaps[d.ID], a)),
		})
	}
	r.Breakdown = breakdownTable(res, opt.job)
	nd := opt.listed(len(res.Devices))
	r.DeviceRows = devicesTable(res, nd, opt.job)
	if ns < len(res.Steps) || nd < len(res.Devices) || drawn < len(res.Devices) {
		r.Omitted = fmt.Sprintf("Listed: %d of %d steps, %d of %d devices, timelines of %d devices; all of them with --all-steps.",
			ns, len(res.Steps), nd, len(res.Devices), drawn)
	}
	if gs := topGaps(res, opt.Top); len(gs) > 0 {
		r.Gaps = gapsTable(res, gs, 60, 200)
	}
	if len(res.Steps) > 0 {
		r.StepRows, _ = stepsTable(res, ns, opt.job)
		r.StepChart = template.HTML(stepChartSVG(res, ns))
	}
	if len(res.CallSites) > 0 {
		r.Sites = sitesTable(res)
		r.SiteNotes = sitesNotes(res)
		if res.StackHint != "" {
			r.SiteNotes = append(r.SiteNotes, res.StackHint)
		}
	}
	if len(res.Ops) > 0 {
		r.Ops = opsTable(res)
	}
	if len(res.Copies) > 0 {
		r.Copies = copiesTable(res)
	}
	return r
}
