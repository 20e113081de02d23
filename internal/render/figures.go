package render

import (
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/report"
)

// The run's headline figures (docs/reports.md defines each once) are
// formatted here for the text, Markdown and HTML reports, and put in the
// JSON report's figures object, from analyze's definitions: every report
// then shows the same numbers with the same rounding.

func jsonFigures(res *analyze.Result) report.Figures {
	f := report.Figures{
		WindowUtilization:   round4(res.Utilization()),
		AttributedIdleShare: round4(share(res.Idle.Attributed(), res.Window.Dur())),
		WindowGaps:          len(res.Gaps),
	}
	f.StepNs, _ = res.StepTime()
	_, f.BusyPerStepNs, _ = res.PerStep()
	f.WindowBusyNs = res.WindowBusy()
	return f
}

// figuresLine gives the run's headline figures in a line: "step time
// 124 ms (device busy 110 ms), utilization 89.3%, attributed idle 9.1% in
// 1,234 gaps of 20 us or more".
func figuresLine(res *analyze.Result) string {
	var parts []string
	if st, ok := res.StepTime(); ok {
		_, busy, _ := res.PerStep()
		parts = append(parts, "step time "+human.Duration(st)+" (device busy "+human.Duration(busy)+")")
	}
	parts = append(parts, "utilization "+human.Share(res.Utilization()),
		"attributed idle "+human.Share(share(res.Idle.Attributed(), res.Window.Dur()))+
			" in "+counted(len(res.Gaps), "gap")+" of "+shortDuration(res.Options.MinGap)+" or more")
	return strings.Join(parts, ", ")
}

// outsideLine says what of the trace the window leaves out: "outside it:
// 152 ms before, 23.1 ms after the last device work"; empty when the
// trace's extent is unknown.
func outsideLine(w analyze.Window) string {
	if w.TraceEnd <= 0 {
		return ""
	}
	return "outside it: " + human.Duration(w.Lead()) + " before, " + human.Duration(w.Tail()) + " after the last device work"
}
