package render

import (
	"fmt"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// The HTML report's step chart: a bar per step of the window, as tall as
// the step's time and stacked as the text report's step shares are (busy,
// then each cause's idle, then idle below min-gap), so that one picture
// shows what each step was spent on and how the step time moves across
// the steps; a line marks the median step.

const (
	stepChartW   = 800 // the chart's width and height in SVG units
	stepChartH   = 160
	stepChartPad = 2 // between bars, when they are wide enough
)

// stepChartSVG draws the first n steps of res.
func stepChartSVG(res *analyze.Result, n int) string {
	steps := res.Steps[:n]
	var longest int64
	for i := range steps {
		longest = max(longest, steps[i].Dur)
	}
	if n == 0 || longest <= 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="stepchart" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="step time and its shares, step by step">`+"\n", stepChartW, stepChartH)
	bw := float64(stepChartW) / float64(n)
	pad := 0.0
	if bw > 4*stepChartPad {
		pad = stepChartPad
	}
	scale := float64(stepChartH) / float64(longest)
	for i := range steps {
		s := &steps[i]
		x := float64(i) * bw
		y := float64(stepChartH)
		name := untrusted.Terminal(stepName(res, i))
		part := func(ns int64, fill, what string) {
			if ns <= 0 {
				return
			}
			h := float64(ns) * scale
			y -= h
			fmt.Fprintf(&b, `<rect class="sc" data-step="%d" x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s</title></rect>`+"\n",
				i, x, y, bw-pad, h, fill, tipText(fmt.Sprintf("%s: %s %s of %s", name, what, human.Duration(ns), human.Duration(s.Dur))))
		}
		part(s.DeviceBusy, busyColor, "busy")
		for _, c := range analyze.Causes() {
			part(s.Idle.Of(c), causeColor[c], c.String())
		}
		part(s.Idle.BelowMinGap, neutralGrey, "idle below min-gap")
	}
	if st := res.Stability(); st.Median > 0 {
		y := float64(stepChartH) - float64(st.Median)*scale
		fmt.Fprintf(&b, `<line class="median" x1="0" x2="%d" y1="%.2f" y2="%.2f" stroke="#222" stroke-dasharray="4 3"><title>%s</title></line>`+"\n",
			stepChartW, y, y, tipText("median step "+human.Duration(st.Median)))
	}
	b.WriteString("</svg>")
	return b.String()
}
