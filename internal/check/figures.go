package check

import "github.com/tracegap/tracegap/internal/analyze"

// FiguresVersion is the version of Figures' JSON layout. Stored Figures of
// another version are not evaluated: their figures may not mean the same.
const FiguresVersion = 1

// Figures are what the rules read of a run. A front end that keeps runs
// (the service) stores them beside the run's reports, as JSON, and
// evaluates rules on them later without the trace: the outcomes are those
// of the Result they were taken from.
type Figures struct {
	// Version is FiguresVersion when the Figures were taken.
	Version    int                `json:"version"`
	Verdict    analyze.Verdict    `json:"verdict"`
	Confidence analyze.Confidence `json:"confidence"`
	// WindowNs is the steady-state window's length and Steps the steady
	// steps in it.
	WindowNs int64 `json:"window_ns"`
	Steps    int   `json:"steps"`
	// Truncated is set when the trace was cut short.
	Truncated bool `json:"truncated"`
	// IdleNs is the attributed idle, SyncIdleNs its in-sync and
	// after-sync part, InputIdleNs its input part.
	IdleNs      int64 `json:"idle_ns"`
	SyncIdleNs  int64 `json:"sync_idle_ns"`
	InputIdleNs int64 `json:"input_idle_ns"`
	// Devices are the devices in the result's order, with their busy time
	// in the window.
	Devices []DeviceBusy `json:"devices"`
	// Findings are the result's findings by kind; absent in figures
	// stored before they were kept, which then meet no finding rule.
	Findings []FindingFigure `json:"findings,omitempty"`
}

// DeviceBusy is one device's busy time in the window.
type DeviceBusy struct {
	ID     string `json:"id"`
	BusyNs int64  `json:"busy_ns"`
}

// FiguresOf takes the figures the rules read from res.
func FiguresOf(res *analyze.Result) Figures {
	f := Figures{
		Version:     FiguresVersion,
		Verdict:     res.Verdict,
		Confidence:  res.Confidence,
		Truncated:   res.Source.Truncated,
		WindowNs:    res.Window.Dur(),
		Steps:       res.Window.Steps,
		IdleNs:      res.Idle.Attributed(),
		SyncIdleNs:  res.Idle.Sync(),
		InputIdleNs: res.Idle.Of(analyze.Input),
		Devices:     make([]DeviceBusy, len(res.Devices)),
		Findings:    findingFigures(res.Findings),
	}
	for i, d := range res.Devices {
		f.Devices[i] = DeviceBusy{ID: d.ID, BusyNs: d.WindowBusy}
	}
	return f
}
