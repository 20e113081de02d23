package render

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/untrusted"
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
	// fineLevel is how much finer than the first view the data embedded
	// for the page's script is: zoomed in that far, a block is still
	// about a pixel wide.
	fineLevel = 64
	// fineCap bounds the blocks of one row at the fine level; a row with
	// more is embedded coarser, so that a huge trace's page stays a few MB.
	fineCap = 30000
	// fineLine breaks the fine level's blocks into lines, so that a diff
	// of two reports shows what moved.
	fineLine = 100
	// fineScale is the fine level's coordinates per SVG unit: integers
	// of a hundredth of a unit.
	fineScale = 100
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

// fine converts a duration to the fine level's integer coordinates.
func (a axis) fine(d int64) int64 { return int64(float64(d)/a.unit*fineScale + 0.5) }

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
		m.title = fmt.Sprintf("%d %s, %s in %s", len(run), noun, human.Duration(m.busy), human.Duration(m.end-m.start))
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
			fmt.Fprintf(b, "><title>%s</title></rect>\n", tipText(m.title))
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
// Its gaps are the indexes of its gaps in res.Gaps.
func deviceSVG(res *analyze.Result, d *analyze.Device, gaps []int, a axis) string {
	var busy, gapMarks, host []mark
	for _, iv := range d.Intervals {
		busy = append(busy, mark{start: iv.Start, end: iv.End, color: busyColor, busy: iv.End - iv.Start})
	}
	for _, i := range gaps {
		g := &res.Gaps[i]
		gapMarks = append(gapMarks, mark{start: g.Start, end: g.Start + g.Dur, color: causeColor[g.Cause%analyze.NumCauses], busy: g.Dur,
			title: gapTitle(res, g)})
		for s := range res.Segments(g) {
			host = append(host, mark{start: s.Start, end: s.Start + s.Dur, color: causeColor[s.Cause%analyze.NumCauses], busy: s.Dur,
				title: fmt.Sprintf("%s for %s:%s", s.Cause, human.Duration(s.Dur), tipStack(res.Stack(s.Stack)))})
		}
	}
	rows := []tlRow{
		{marks: busy, y: rowDevice, h: rowDeviceH},
		{marks: gapMarks, y: rowDevice, h: rowDeviceH, class: "g", noun: "gaps"},
		{marks: host, y: rowHost, h: rowHostH, noun: "host stretches"},
	}
	var b strings.Builder
	openTimeline(&b, a, "tl", deviceSVGH, rows)
	fmt.Fprintf(&b, `<rect x="%s" y="%d" width="%s" height="%d" fill="#f4f4f4"/>`+"\n", a.x(d.Start), rowDevice, a.w(d.End-d.Start), rowDeviceH)
	drawRows(&b, a, rows)
	outside(&b, res, a, deviceSVGH)
	b.WriteString("</svg>")
	return b.String()
}

// tlRow is one row of marks on a timeline.
type tlRow struct {
	marks []mark
	y, h  int
	// class is "g" on gaps, which zoom to themselves when clicked.
	class string
	// noun names merged items in tooltips.
	noun string
}

// openTimeline opens the SVG of a timeline h units high. Its rows are also
// embedded at the fine level in data-fine, for the page's script to draw
// when zoomed in: a JSON list of rows {y, h, c: class, n: noun, p: colours,
// m: blocks}, each block four integers: its start as the distance from the
// previous block's start and its width, both in hundredths of an SVG unit,
// its colour's index in p, and its opacity in percent.
func openTimeline(b *strings.Builder, a axis, class string, h int, rows []tlRow) {
	fmt.Fprintf(b, `<svg class="%s" data-h="%d"`, class, h)
	if len(rows) > 0 {
		b.WriteString(` data-fine='`)
		fineJSON(b, a, rows)
		b.WriteString(`'`)
	}
	fmt.Fprintf(b, ` viewBox="0 0 %d %d" preserveAspectRatio="none" height="%d">`+"\n", timelineUnits, h, h*2)
}

// drawRows draws rows at the first view's resolution, in the group the
// script hides when it draws the fine level instead.
func drawRows(b *strings.Builder, a axis, rows []tlRow) {
	b.WriteString(`<g class="coarse">` + "\n")
	for _, r := range rows {
		svgRow(b, a, coalesce(r.marks, a.quantum(), r.noun), r.y, r.h, r.class)
	}
	b.WriteString("</g>\n")
}

// fineJSON writes rows at the fine level (see openTimeline).
func fineJSON(b *strings.Builder, a axis, rows []tlRow) {
	b.WriteByte('[')
	for i, r := range rows {
		q := max(1, a.quantum()/fineLevel)
		ms := coalesce(r.marks, q, "")
		for len(ms) > fineCap {
			q *= 2
			ms = coalesce(r.marks, q, "")
		}
		var colors []string
		index := map[string]int{}
		for _, m := range ms {
			if _, ok := index[m.color]; !ok {
				index[m.color] = len(colors)
				colors = append(colors, m.color)
			}
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `{"y":%d,"h":%d,"c":%q,"n":%q,"p":[`, r.y, r.h, r.class, r.noun)
		for j, c := range colors {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%q", c)
		}
		b.WriteString(`],"m":[`)
		prev := int64(0)
		for j, m := range ms {
			x := a.fine(m.start - a.t0)
			op := 100
			if ext := m.end - m.start; ext > 0 && m.busy < ext {
				op = max(35, int(m.busy*100/ext))
			}
			if j > 0 {
				b.WriteByte(',')
			}
			if j%fineLine == 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(b, "%d,%d,%d,%d", x-prev, max(1, a.fine(m.end-m.start)), index[m.color], op)
			prev = x
		}
		b.WriteString("]}")
	}
	b.WriteByte(']')
}

// Tooltip stacks keep the innermost tipFrames frames, each clipped: Python
// stacks run 40 frames deep, and every segment of the timeline carries one.
const (
	tipFrames     = 8
	tipFrameWidth = 100
)

// tipText escapes a tooltip for HTML, its line breaks as character
// references: a line of the document never starts inside a tooltip, so
// that nothing in one reads as a line of its own to a log showing the file.
func tipText(s string) string { return strings.ReplaceAll(html.EscapeString(s), "\n", "&#10;") }

// gapTitle is a gap's tooltip: its length, start and cause, the thread
// it waited for and what that thread was mostly in, and for a runtime gap
// the other thread's work it waited on, as the text report says.
func gapTitle(res *analyze.Result, g *analyze.Gap) string {
	t := fmt.Sprintf("gap %s at %s: %s\nwaited for %s, mostly in:%s", human.Duration(g.Dur), msTime(g.Start), g.Cause, untrusted.Terminal(g.Thread), tipStack(HostStack(res, g)))
	if call := waitedCall(res, g); call != "" && g.Cause == analyze.Runtime {
		t += "\n  waiting on " + untrusted.Clip(call, tipFrameWidth, untrusted.Terminal)
	}
	return t
}

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
		// Escaped visibly, so that a newline in a name starts no line of
		// the tooltip or of the file; the title is escaped for HTML as
		// a whole.
		b.WriteString("\n  " + untrusted.Clip(f, tipFrameWidth, untrusted.Terminal))
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

// stepsSVG draws the first n steps as a band; clicking a step zooms to
// it. The page's script labels the steps wide enough to hold a label.
func stepsSVG(res *analyze.Result, n int, a axis) string {
	var b strings.Builder
	openTimeline(&b, a, "tl steps", stepsSVGH, nil)
	for i, s := range res.Steps[:n] {
		fill := stepColor
		if i%2 == 1 {
			fill = stepColorAlt
		}
		fmt.Fprintf(&b, `<rect class="s" data-i="%d" x="%s" y="1" width="%s" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
			i, a.x(s.Start), a.w(s.Dur), stepsSVGH-2, fill,
			tipText(fmt.Sprintf("%s: %s, device busy %s, %s (click to zoom)", untrusted.Terminal(stepName(res, i)), human.Duration(s.Dur), human.Duration(s.DeviceBusy), s.Verdict)))
	}
	outside(&b, res, a, stepsSVGH)
	b.WriteString("</svg>")
	return b.String()
}
