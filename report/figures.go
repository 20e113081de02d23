package report

import (
	"strings"

	"github.com/tracegap/tracegap/analyze"
)

// The run's headline figures (docs/reports.md defines each once) are
// formatted here for the text, Markdown and HTML reports, and put in the
// JSON report's figures object, from analyze's definitions: every report
// then shows the same numbers with the same rounding.

// Figures are the run's headline figures in the JSON report.
type Figures struct {
	// StepNs is the step time (analyze.Result.StepTime); 0 without steps.
	StepNs int64 `json:"step_ns"`
	// BusyPerStepNs is the device busy time of a typical step, averaged
	// over devices (analyze.Result.PerStep); 0 without steps.
	BusyPerStepNs int64 `json:"busy_per_step_ns"`
	// WindowBusyNs is the devices' busy time in the window, averaged over
	// devices.
	WindowBusyNs int64 `json:"window_busy_ns"`
	// WindowUtilization is WindowBusyNs over the window
	// (analyze.Result.Utilization), rounded to 4 decimals.
	WindowUtilization float64 `json:"window_utilization"`
	// AttributedIdleShare is the idle in gaps of at least the minimum gap
	// over the window: what check's max-idle and compare's idle share
	// hold.
	AttributedIdleShare float64 `json:"attributed_idle_share"`
	// WindowGaps counts the gaps of at least the minimum gap in the
	// window, over every device.
	WindowGaps int `json:"window_gaps"`
}

func jsonFigures(res *analyze.Result) Figures {
	f := Figures{
		WindowUtilization:   round4(res.Utilization()),
		AttributedIdleShare: round4(share(res.Idle.Attributed(), res.Window.Dur())),
		WindowGaps:          len(res.Gaps),
	}
	f.StepNs, _ = res.StepTime()
	_, f.BusyPerStepNs, _ = res.PerStep()
	if n := int64(len(res.Devices)); n > 0 {
		for i := range res.Devices {
			f.WindowBusyNs += res.Devices[i].WindowBusy
		}
		f.WindowBusyNs /= n
	}
	return f
}

// figuresLine gives the run's headline figures in a line: "step time
// 124 ms (device busy 110 ms), utilization 89.3%, attributed idle 9.1% in
// 1,234 gaps of 20 us or more".
func figuresLine(res *analyze.Result) string {
	var parts []string
	if st, ok := res.StepTime(); ok {
		_, busy, _ := res.PerStep()
		parts = append(parts, "step time "+Duration(st)+" (device busy "+Duration(busy)+")")
	}
	parts = append(parts, "utilization "+percent(res.Utilization()),
		"attributed idle "+percent(share(res.Idle.Attributed(), res.Window.Dur()))+
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
	return "outside it: " + Duration(w.Lead()) + " before, " + Duration(w.Tail()) + " after the last device work"
}
