package report

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/analyze"
)

// The timeline's coordinate system: the run's whole device span maps to
// timelineUnits SVG units; the browser stretches the viewBox to the page
// width, and zooming narrows the viewBox.
const (
	timelineUnits = 10000
	// timelineBuckets is the finest resolution drawn item by item over the
	// whole span: narrower items are merged per bucket, which keeps the
	// file small for huge traces and is still finer than a pixel when
	// zoomed into a step of a typical run.
	timelineBuckets = 6000
)

// Cause colours, shared by the SVG, the legend and the tables.
var causeColor = [analyze.NumCauses]string{
	analyze.InSync: "#d62728", analyze.AfterSync: "#ff9896", analyze.Input: "#ff7f0e",
	analyze.Runtime: "#9467bd", analyze.Host: "#e7ba52", analyze.Untraced: "#a5a5a5",
}

const (
	busyColor = "#4e79a7"
	stepColor = "#dfe6ee"
)

// axis maps trace time to SVG units.
type axis struct {
	t0, t1 int64   // the span drawn, ns
	unit   float64 // ns per SVG unit
}

func newAxis(res *analyze.Result) axis {
	a := axis{t0: res.Window.Start, t1: res.Window.End}
	for _, d := range res.Devices {
		a.t0 = min(a.t0, d.Start)
		a.t1 = max(a.t1, d.End)
	}
	if a.t1 <= a.t0 {
		a.t1 = a.t0 + 1
	}
	a.unit = float64(a.t1-a.t0) / timelineUnits
	return a
}

// x writes the SVG coordinate of time t, to a tenth of a unit.
func (a axis) x(t int64) string { return num(float64(t-a.t0) / a.unit) }

// w writes the SVG width of a duration; at least a tenth of a unit so that
// every drawn item shows when zoomed in.
func (a axis) w(d int64) string { return num(max(float64(d)/a.unit, 0.1)) }

func num(f float64) string { return strconv.FormatFloat(float64(int64(f*10+0.5))/10, 'f', -1, 64) }

// quantum is the width in ns under which items are merged per bucket.
func (a axis) quantum() int64 { return max(1, (a.t1-a.t0)/timelineBuckets) }

// mark is one thing to draw on a timeline row.
type mark struct {
	start, end int64
	color      string
	title      string
	// busy is the covered time inside [start, end); below 1 the mark is
	// drawn translucent.
	busy int64
}

// coalesce merges consecutive marks narrower than q that fall into the same
// bucket of width q; a merged mark takes the colour that covers the most
// time and a title that counts what it holds (noun names the items; no
// title when it is empty).
func coalesce(marks []mark, q int64, noun string) []mark {
	var out []mark
	var run []mark
	flush := func() {
		if len(run) == 1 {
			out = append(out, run[0])
		} else if len(run) > 1 {
			out = append(out, merge(run, noun))
		}
		run = run[:0]
	}
	for _, m := range marks {
		if m.end-m.start >= q {
			flush()
			out = append(out, m)
			continue
		}
		if len(run) > 0 && m.start-run[0].start >= q {
			flush()
		}
		run = append(run, m)
	}
	flush()
	return out
}

func merge(run []mark, noun string) mark {
	by := map[string]int64{}
	m := mark{start: run[0].start, end: run[len(run)-1].end}
	for _, r := range run {
		by[r.color] += r.busy
		m.busy += r.busy
		m.end = max(m.end, r.end)
	}
	for _, r := range run { // the first colour wins ties, so output is stable
		if m.color == "" || by[r.color] > by[m.color] {
			m.color = r.color
		}
	}
	if noun != "" {
		m.title = fmt.Sprintf("%d %s, %s in %s", len(run), noun, Duration(m.busy), Duration(m.end-m.start))
	}
	return m
}

// svgRow writes marks as rects at height y..y+h. Every SVG element of a
// timeline ends its line, so that a diff of two reports shows what moved.
func svgRow(b *strings.Builder, a axis, marks []mark, y, h int, class string) {
	for _, m := range marks {
		b.WriteString("<rect")
		if class != "" {
			fmt.Fprintf(b, ` class="%s"`, class)
		}
		fmt.Fprintf(b, ` x="%s" y="%d" width="%s" height="%d" fill="%s"`, a.x(m.start), y, a.w(m.end-m.start), h, m.color)
		if ext := m.end - m.start; ext > 0 && m.busy < ext {
			fmt.Fprintf(b, ` fill-opacity="%.2f"`, max(0.35, float64(m.busy)/float64(ext)))
		}
		if m.title != "" {
			fmt.Fprintf(b, "><title>%s</title></rect>\n", html.EscapeString(m.title))
		} else {
			b.WriteString("/>\n")
		}
	}
}

// Timeline rows, in SVG units of height.
const (
	rowDevice    = 4
	rowDeviceH   = 26
	rowHost      = 34
	rowHostH     = 14
	deviceSVGH   = 50
	stepsSVGH    = 16
	outsideColor = "#000"
)

// deviceSVG draws one device: its busy time, every gap coloured by cause,
// and beneath, what the waited-for host thread did during each gap.
// deviceSVG draws device d's timeline; gaps are the indexes of its gaps in
// res.Gaps.
func deviceSVG(res *analyze.Result, d *analyze.Device, gaps []int, a axis) string {
	q := a.quantum()
	var busy, gapMarks, host []mark
	for _, iv := range d.Intervals {
		busy = append(busy, mark{start: iv.Start, end: iv.End, color: busyColor, busy: iv.End - iv.Start})
	}
	for _, i := range gaps {
		g := &res.Gaps[i]
		gapMarks = append(gapMarks, mark{start: g.Start, end: g.Start + g.Dur, color: causeColor[g.Cause%analyze.NumCauses], busy: g.Dur,
			title: fmt.Sprintf("gap %s at %s: %s\nwaited for %s, mostly in:%s", Duration(g.Dur), msTime(g.Start), g.Cause, g.Thread, tipStack(HostStack(g)))})
		for _, s := range g.Segments {
			host = append(host, mark{start: s.Start, end: s.Start + s.Dur, color: causeColor[s.Cause%analyze.NumCauses], busy: s.Dur,
				title: fmt.Sprintf("%s for %s:%s", s.Cause, Duration(s.Dur), tipStack(s.Stack))})
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="tl" data-h="%d" viewBox="0 0 %d %d" preserveAspectRatio="none" height="%d">`+"\n",
		deviceSVGH, timelineUnits, deviceSVGH, deviceSVGH*2)
	fmt.Fprintf(&b, `<rect x="%s" y="%d" width="%s" height="%d" fill="#f4f4f4"/>`+"\n", a.x(d.Start), rowDevice, a.w(d.End-d.Start), rowDeviceH)
	svgRow(&b, a, coalesce(busy, q, ""), rowDevice, rowDeviceH, "")
	svgRow(&b, a, coalesce(gapMarks, q, "gaps"), rowDevice, rowDeviceH, "g")
	svgRow(&b, a, coalesce(host, q, "host stretches"), rowHost, rowHostH, "")
	outside(&b, res, a, deviceSVGH)
	b.WriteString("</svg>")
	return b.String()
}

// Tooltip stacks keep the innermost tipFrames frames, each clipped: Python
// stacks run 40 frames deep, and every segment of the timeline carries one.
const (
	tipFrames     = 8
	tipFrameWidth = 100
)

// tipStack writes a stack for a tooltip, one frame per line, outermost
// first, each line starting with a newline.
func tipStack(stack []string) string {
	if len(stack) == 0 {
		return "\n  " + stackString(nil)
	}
	var b strings.Builder
	if n := len(stack) - tipFrames; n > 0 {
		fmt.Fprintf(&b, "\n  (%d outer frames)", n)
		stack = stack[n:]
	}
	for _, f := range stack {
		b.WriteString("\n  " + clip(f, tipFrameWidth))
	}
	return b.String()
}

// outside dims the parts of the span outside the window.
func outside(b *strings.Builder, res *analyze.Result, a axis, h int) {
	w := res.Window
	if w.Start > a.t0 {
		fmt.Fprintf(b, `<rect x="0" y="0" width="%s" height="%d" fill="%s" fill-opacity="0.12"><title>outside the window</title></rect>`+"\n",
			a.w(w.Start-a.t0), h, outsideColor)
	}
	if w.End < a.t1 && w.End > a.t0 {
		fmt.Fprintf(b, `<rect x="%s" y="0" width="%s" height="%d" fill="%s" fill-opacity="0.12"><title>outside the window</title></rect>`+"\n",
			a.x(w.End), a.w(a.t1-w.End), h, outsideColor)
	}
}

// stepsSVG draws the steps as a band; clicking a step zooms to it.
// stepsSVG draws the first n steps.
func stepsSVG(res *analyze.Result, n int, a axis) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="tl steps" data-h="%d" viewBox="0 0 %d %d" preserveAspectRatio="none" height="%d">`+"\n",
		stepsSVGH, timelineUnits, stepsSVGH, stepsSVGH*2)
	for i, s := range res.Steps[:n] {
		fill := stepColor
		if i%2 == 1 {
			fill = "#c5d2e0"
		}
		fmt.Fprintf(&b, `<rect class="s" data-a="%s" data-b="%s" x="%s" y="1" width="%s" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
			a.x(s.Start), a.x(s.Start+s.Dur), a.x(s.Start), a.w(s.Dur), stepsSVGH-2, fill,
			html.EscapeString(fmt.Sprintf("%s: %s, device busy %s, %s (click to zoom)", stepName(res, i), Duration(s.Dur), Duration(s.DeviceBusy), s.Verdict)))
	}
	outside(&b, res, a, stepsSVGH)
	b.WriteString("</svg>")
	return b.String()
}
