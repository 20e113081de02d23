package serve

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
)

// RunFigures are one run's comparable figures, read back from its stored v1
// JSON report: per step where the run has steps, else over the window taken
// as one step.
type RunFigures struct {
	Verdict    string `json:"verdict"`
	Confidence string `json:"confidence"`
	Steps      int    `json:"steps"`
	PerWindow  bool   `json:"per_window"`
	// StepNs, DeviceBusyNs, InputNs and SyncNs are means per step.
	StepNs       int64 `json:"step_ns"`
	DeviceBusyNs int64 `json:"device_busy_ns"`
	InputNs      int64 `json:"input_ns"`
	SyncNs       int64 `json:"sync_ns"`
	// Utilization is the window's device busy share, averaged over
	// devices; the shares split the window's idle by cause.
	Utilization float64 `json:"utilization"`
	IdleShare   float64 `json:"idle_share"`
	SyncShare   float64 `json:"sync_share"`
	InputShare  float64 `json:"input_share"`
	HostShare   float64 `json:"host_share"`
}

// Delta is one figure of both runs side by side.
type Delta struct {
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"` // "ns" or "share"
	Base   float64 `json:"base"`
	New    float64 `json:"new"`
	// Diff is New - Base; Ratio is New / Base, absent when Base is 0.
	Diff  float64  `json:"diff"`
	Ratio *float64 `json:"ratio,omitempty"`
}

// CompareSide is one run of a comparison.
type CompareSide struct {
	Record  Record          `json:"trace"`
	Figures RunFigures      `json:"figures"`
	Report  json.RawMessage `json:"report"`
}

// Comparison is the GET /api/v1/compare answer.
type Comparison struct {
	Base           CompareSide `json:"base"`
	New            CompareSide `json:"new"`
	VerdictChanged bool        `json:"verdict_changed"`
	Deltas         []Delta     `json:"deltas"`
}

// v1Report is the part of the tracegap/report/v1 document a comparison reads.
type v1Report struct {
	Verdict    string `json:"verdict"`
	Confidence string `json:"confidence"`
	Window     struct {
		DurNs int64 `json:"dur_ns"`
	} `json:"window"`
	Devices []struct {
		WindowBusyNs int64 `json:"window_busy_ns"`
	} `json:"devices"`
	Idle struct {
		IdleShare  float64 `json:"idle_share"`
		SyncShare  float64 `json:"sync_share"`
		InputShare float64 `json:"input_share"`
		HostShare  float64 `json:"host_share"`
	} `json:"idle_breakdown"`
	Steps []struct {
		DurNs        int64 `json:"dur_ns"`
		DeviceBusyNs int64 `json:"device_busy_ns"`
		InputNs      int64 `json:"input_ns"`
		SyncNs       int64 `json:"sync_ns"`
	} `json:"steps"`
}

// Figures reads a run's comparable figures from its v1 JSON report.
func Figures(report []byte) (RunFigures, error) {
	var r v1Report
	if err := json.Unmarshal(report, &r); err != nil {
		return RunFigures{}, fmt.Errorf("reading stored report: %w", err)
	}
	f := RunFigures{Verdict: r.Verdict, Confidence: r.Confidence, Steps: len(r.Steps),
		IdleShare: r.Idle.IdleShare, SyncShare: r.Idle.SyncShare, InputShare: r.Idle.InputShare, HostShare: r.Idle.HostShare}
	var busy int64
	for _, d := range r.Devices {
		busy += d.WindowBusyNs
	}
	if n := int64(len(r.Devices)); n > 0 && r.Window.DurNs > 0 {
		f.Utilization = float64(busy/n) / float64(r.Window.DurNs)
	}
	if len(r.Steps) == 0 {
		f.PerWindow, f.StepNs = true, r.Window.DurNs
		if n := int64(len(r.Devices)); n > 0 {
			f.DeviceBusyNs = busy / n
		}
		return f, nil
	}
	for _, s := range r.Steps {
		f.StepNs += s.DurNs
		f.DeviceBusyNs += s.DeviceBusyNs
		f.InputNs += s.InputNs
		f.SyncNs += s.SyncNs
	}
	n := int64(len(r.Steps))
	f.StepNs, f.DeviceBusyNs, f.InputNs, f.SyncNs = f.StepNs/n, f.DeviceBusyNs/n, f.InputNs/n, f.SyncNs/n
	return f, nil
}

// deltas lines up the figures of two runs.
func deltas(b, n RunFigures) []Delta {
	rows := []Delta{
		delta("step_time", "ns", float64(b.StepNs), float64(n.StepNs)),
		delta("device_busy", "ns", float64(b.DeviceBusyNs), float64(n.DeviceBusyNs)),
		delta("input", "ns", float64(b.InputNs), float64(n.InputNs)),
		delta("sync", "ns", float64(b.SyncNs), float64(n.SyncNs)),
		delta("utilization", "share", b.Utilization, n.Utilization),
		delta("idle", "share", b.IdleShare, n.IdleShare),
		delta("idle_sync", "share", b.SyncShare, n.SyncShare),
		delta("idle_input", "share", b.InputShare, n.InputShare),
		delta("idle_host", "share", b.HostShare, n.HostShare),
	}
	return rows
}

func delta(metric, unit string, b, n float64) Delta {
	d := Delta{Metric: metric, Unit: unit, Base: b, New: n, Diff: n - b}
	if b != 0 {
		r := n / b
		if !math.IsInf(r, 0) && !math.IsNaN(r) {
			d.Ratio = &r
		}
	}
	return d
}

// compare builds the comparison of ?base= and ?new=.
func (s *Server) compare(r *http.Request) (*Comparison, error) {
	ids := [2]string{r.URL.Query().Get("base"), r.URL.Query().Get("new")}
	if ids[0] == "" || ids[1] == "" {
		return nil, errorf(http.StatusBadRequest, "compare needs two traces: ?base=ID&new=ID")
	}
	var sides [2]CompareSide
	for i, id := range ids {
		rec, err := s.store.Get(r.Context(), id)
		if err != nil {
			return nil, notFound(err, id)
		}
		rep, err := s.store.JSON(r.Context(), id)
		if err != nil {
			return nil, notFound(err, id)
		}
		fig, err := Figures(rep)
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", id, err)
		}
		sides[i] = CompareSide{Record: rec, Figures: fig, Report: rep}
	}
	return &Comparison{
		Base:           sides[0],
		New:            sides[1],
		VerdictChanged: sides[0].Figures.Verdict != sides[1].Figures.Verdict,
		Deltas:         deltas(sides[0].Figures, sides[1].Figures),
	}, nil
}
