package report

import (
	"cmp"
	"encoding/json"
	"io"
	"math"
	"slices"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// Schema identifies the JSON report's version. Fields are only ever added
// within a version; a change of meaning or a removal makes a new version.
const Schema = "tracegap/report/v1"

// Report is the JSON report, schema tracegap/report/v1, documented field by
// field in docs/report-v1.md. Times are integer nanoseconds relative to the
// trace's start; shares are fractions from 0 to 1 rounded to 4 decimals.
// Lists are never null. The parts whose names analyze gives to its model
// (source, window, device, step, gap, finding, breakdown) are named with a
// V1 suffix: they are the wire form, analyze's types the model.
type Report struct {
	Schema     string   `json:"schema"`
	Source     SourceV1 `json:"source"`
	Verdict    string   `json:"verdict"`
	Confidence string   `json:"confidence"`
	Summary    string   `json:"summary"`
	Reasons    []string `json:"reasons"`
	// Secondary lists the verdicts of the other causes over their
	// thresholds.
	Secondary  []string   `json:"secondary"`
	Thresholds Thresholds `json:"thresholds"`
	Window     WindowV1   `json:"window"`
	// Figures are the run's headline figures, each defined once
	// (docs/reports.md).
	Figures       Figures     `json:"figures"`
	Devices       []DeviceV1  `json:"devices"`
	IdleBreakdown BreakdownV1 `json:"idle_breakdown"`
	Steps         []StepV1    `json:"steps"`
	// Omitted, when set, says what the report leaves out: beyond
	// listMax steps and devices, only the first are listed unless asked
	// for all (--all-steps).
	Omitted  *OmittedV1  `json:"omitted,omitempty"`
	TopGaps  []GapV1     `json:"top_gaps"`
	Findings []FindingV1 `json:"findings"`
	// Stability is the steps' time distribution; Loader the loader's
	// workers as the trace shows them, with the estimate.
	Stability StabilityV1 `json:"stability"`
	Loader    LoaderV1    `json:"loader"`
	// CallSites, Ops and Copies are the call sites, the per-op host table
	// and the copies by kind (see insight.go); StackHint says how to
	// record Python stacks when the trace has none.
	CallSites []CallSiteV1 `json:"call_sites"`
	StackHint string       `json:"stack_hint"`
	Ops       []OpV1       `json:"ops"`
	Copies    []CopyV1     `json:"copies"`
	// Stalled says what the stalled idle waited on (added within v1).
	Stalled StalledV1 `json:"stalled"`
}

// StalledV1 is what the device waited on while it had work queued.
type StalledV1 struct {
	// InSyncNs is stalled idle during which the launching thread was
	// inside a blocking call: a sync that waited on a stalled device.
	InSyncNs int64 `json:"in_sync_ns"`
	// Dependencies are what the stalled idle waited on, most first.
	Dependencies []DependencyV1 `json:"dependencies"`
}

// DependencyV1 is one dependency of stalled idle (analyze.Dependency).
type DependencyV1 struct {
	Kind   string  `json:"kind"`
	Call   string  `json:"call"`
	Stream string  `json:"stream"`
	IdleNs int64   `json:"idle_ns"`
	Share  float64 `json:"share"`
	Gaps   int     `json:"gaps"`
}

// SourceV1 describes the input file.
type SourceV1 struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	// Framework is the ML framework that recorded the trace
	// (analyze.Result.Framework); "" when the trace does not say.
	Framework string   `json:"framework"`
	Bytes     int64    `json:"bytes"`
	Events    int      `json:"events"`
	Tracks    int      `json:"tracks"`
	Warnings  []string `json:"warnings"`
	Truncated bool     `json:"truncated"`
	// ClockOffsetNs is the time on the trace's own clock of time 0 (see
	// analyze.Source.ClockOffsetNs).
	ClockOffsetNs int64 `json:"clock_offset_ns"`
}

// Thresholds are the options the analysis ran with.
type Thresholds struct {
	MinGapNs      int64    `json:"min_gap_ns"`
	SyncSlackNs   int64    `json:"sync_slack_ns"`
	Sync          float64  `json:"sync"`
	Input         float64  `json:"input"`
	Host          float64  `json:"host"`
	Stall         float64  `json:"stall"`
	StepRegex     string   `json:"step_regex"`
	SyncPatterns  []string `json:"sync_patterns"`
	InputPatterns []string `json:"input_patterns"`
	TopGaps       int      `json:"top_gaps"`
}

// WindowV1 is the steady-state stretch the verdict is about.
type WindowV1 struct {
	StartNs       int64  `json:"start_ns"`
	EndNs         int64  `json:"end_ns"`
	DurNs         int64  `json:"dur_ns"`
	Steps         int    `json:"steps"`
	StepSource    string `json:"step_source"`
	WarmupDropped bool   `json:"warmup_dropped"`
	// TraceEndNs is the end of the trace's last host or device event;
	// TailNs is the time from EndNs to it, left out of every figure (the
	// time before, from 0 to StartNs, is left out too).
	TraceEndNs int64 `json:"trace_end_ns"`
	TailNs     int64 `json:"tail_ns"`
}

// DeviceV1 holds one device's figures over its whole span (first to last
// work), plus its busy and idle time inside the window.
type DeviceV1 struct {
	ID           string      `json:"id"`
	StartNs      int64       `json:"start_ns"`
	EndNs        int64       `json:"end_ns"`
	SpanNs       int64       `json:"span_ns"`
	BusyNs       int64       `json:"busy_ns"`
	IdleNs       int64       `json:"idle_ns"`
	Utilization  float64     `json:"utilization"`
	Gaps         int         `json:"gaps"`
	WindowBusyNs int64       `json:"window_busy_ns"`
	WindowIdle   BreakdownV1 `json:"window_idle"`
}

// BreakdownV1 splits idle time by cause, in ns and as shares of a reference
// duration (the window for the run and devices, the step for steps). In
// JSON it is one flat object with "<cause>_ns" and "<cause>_share" for every
// cause (see analyze.Cause.Key), written by MarshalJSON in breakdown.go.
type BreakdownV1 struct {
	// Ns and Share are indexed by analyze.Cause.
	Ns               [analyze.NumCauses]int64
	Share            [analyze.NumCauses]float64
	BelowMinGapNs    int64
	IdleNs           int64
	SyncShare        float64
	BelowMinGapShare float64
	IdleShare        float64
}

// OmittedV1 counts the steps and devices a report does not list, and
// summarises the durations of all steps.
type OmittedV1 struct {
	Steps   int `json:"steps"`
	Devices int `json:"devices"`
	// StepDurationNs is the distribution of every step's duration.
	StepDurationNs Distribution `json:"step_duration_ns"`
}

// Distribution summarises values: the least, the median, the 90th
// percentile, the greatest and the mean.
type Distribution struct {
	Min  int64 `json:"min"`
	P50  int64 `json:"p50"`
	P90  int64 `json:"p90"`
	Max  int64 `json:"max"`
	Mean int64 `json:"mean"`
}

// StepV1 holds one steady-state step's figures.
type StepV1 struct {
	Name         string      `json:"name"`
	Num          int64       `json:"num"`
	StartNs      int64       `json:"start_ns"`
	DurNs        int64       `json:"dur_ns"`
	DeviceBusyNs int64       `json:"device_busy_ns"`
	InputNs      int64       `json:"input_ns"`
	SyncNs       int64       `json:"sync_ns"`
	Idle         BreakdownV1 `json:"idle"`
	Verdict      string      `json:"verdict"`
}

// GapV1 is one of the longest idle intervals.
type GapV1 struct {
	Device  string `json:"device"`
	StartNs int64  `json:"start_ns"`
	DurNs   int64  `json:"dur_ns"`
	// ClockStartNs is StartNs on the trace's own clock (ns), the time a
	// viewer of the source's timestamps shows.
	ClockStartNs int64  `json:"clock_start_ns"`
	Cause        string `json:"cause"`
	// Step indexes Report.Steps; -1 when the gap is in no step.
	Step int `json:"step"`
	// StepNum is that step's number (ProfilerStep#7: 7), which a gap
	// exported without the steps (tracegap gaps), an annotated trace and
	// a profile's labels share; -1 when the gap is in no step.
	StepNum int64  `json:"step_num"`
	Thread  string `json:"thread"`
	// HostStack is the stack that took the most of the gap (see
	// HostStack), outermost first.
	HostStack []string `json:"host_stack"`
	// Split is the gap's time by cause, as a share of the gap.
	Split BreakdownV1 `json:"split"`
	// Stacks are the host stacks that took the most of the gap, longest
	// first, at most maxGapStacks of them.
	Stacks []StackTime `json:"stacks"`
	// Waits is what the gap's stalled part waited on; left out when none
	// of it is stalled (added within v1).
	Waits *WaitedV1 `json:"waits,omitempty"`
}

// WaitedV1 is what stalled idle waited on (analyze.Waited).
type WaitedV1 struct {
	Kind   string `json:"kind"`
	Call   string `json:"call"`
	Stream string `json:"stream"`
}

// StackTime is the time a gap spent with one host stack.
type StackTime struct {
	Stack []string `json:"stack"`
	Cause string   `json:"cause"`
	DurNs int64    `json:"dur_ns"`
	// Segments counts the stretches of the gap with this stack.
	Segments int `json:"segments"`
}

// maxGapStacks caps GapV1.Stacks: a gap in a Python input pipeline passes
// through thousands of short host ops.
const maxGapStacks = 5

// FindingV1 is one conclusion and its fix, with its figures as fields.
type FindingV1 struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
	// IdleNs and Share are the idle the finding is about; Calls, Sites
	// and Settings the calls it names, their call sites and the
	// settings its fix recommends.
	IdleNs   int64        `json:"idle_ns"`
	Share    float64      `json:"share"`
	Calls    []string     `json:"calls"`
	Sites    []CallSiteV1 `json:"sites"`
	Settings []SettingV1  `json:"settings"`
}

// JSONReport builds the v1 document for res, with the default bounds on
// the steps and devices listed.
func JSONReport(res *analyze.Result) *Report { return JSONReportWith(res, Options{}) }

// JSONReportWith builds the v1 document for res; opt.AllSteps lists every
// step and device.
func JSONReportWith(res *analyze.Result, opt Options) *Report {
	o := &res.Options
	r := &Report{
		Schema:     Schema,
		Source:     jsonSource(&res.Source, res.Framework),
		Verdict:    string(res.Verdict),
		Confidence: string(res.Confidence),
		Summary:    Summary(res),
		Reasons:    nonNil(res.Reasons),
		Secondary:  []string{},
		Thresholds: Thresholds{
			MinGapNs: o.MinGap, SyncSlackNs: o.SyncSlack,
			Sync: o.SyncThreshold, Input: o.InputThreshold, Host: o.HostThreshold, Stall: o.StallThreshold,
			StepRegex: o.StepRegex, SyncPatterns: nonNil(o.SyncPatterns),
			InputPatterns: nonNil(o.InputPatterns), TopGaps: o.TopGaps,
		},
		Window: WindowV1{
			StartNs: res.Window.Start, EndNs: res.Window.End, DurNs: res.Window.Dur(),
			Steps: res.Window.Steps, StepSource: res.Window.StepSource,
			WarmupDropped: res.Window.WarmupDropped,
			TraceEndNs:    res.Window.TraceEnd, TailNs: res.Window.Tail(),
		},
		Figures:       jsonFigures(res),
		Devices:       []DeviceV1{},
		IdleBreakdown: jsonBreakdown(&res.Idle, res.Window.Dur()),
		Steps:         []StepV1{},
		TopGaps:       []GapV1{},
		Findings:      []FindingV1{},
		Stability:     jsonStability(res),
		Loader:        jsonLoader(res),
		CallSites:     jsonSites(res.CallSites, res.Window.Dur()),
		StackHint:     res.StackHint,
		Ops:           jsonOps(res.Ops, res.Window.Dur()),
		Copies:        jsonCopies(res.Copies, res.Window.Dur()),
		Stalled:       jsonStalled(res),
	}
	for _, v := range res.Secondary {
		r.Secondary = append(r.Secondary, string(v))
	}
	nd, ns := opt.listed(len(res.Devices)), opt.listed(len(res.Steps))
	for i := range nd {
		r.Devices = append(r.Devices, jsonDevice(&res.Devices[i], res.Window.Dur()))
	}
	for i := range ns {
		r.Steps = append(r.Steps, jsonStep(&res.Steps[i]))
	}
	if nd < len(res.Devices) || ns < len(res.Steps) {
		r.Omitted = &OmittedV1{Steps: len(res.Steps) - ns, Devices: len(res.Devices) - nd, StepDurationNs: stepDurations(res.Steps)}
	}
	for _, g := range topGaps(res, 0) {
		r.TopGaps = append(r.TopGaps, JSONGap(res, g))
	}
	for i := range res.Findings {
		r.Findings = append(r.Findings, jsonFinding(&res.Findings[i], res.Window.Dur()))
	}
	return r
}

func jsonStalled(res *analyze.Result) StalledV1 {
	out := StalledV1{InSyncNs: res.StalledInSync, Dependencies: []DependencyV1{}}
	for _, d := range res.Dependencies {
		out.Dependencies = append(out.Dependencies, DependencyV1{
			Kind: d.Kind, Call: d.Call, Stream: d.Stream, IdleNs: d.Idle,
			Share: round4(share(d.Idle, res.Window.Dur())), Gaps: d.Gaps,
		})
	}
	return out
}

func jsonSource(s *analyze.Source, fw analyze.Framework) SourceV1 {
	return SourceV1{
		Path: s.Path, Format: s.Format, Framework: string(fw), Bytes: s.Bytes, Events: s.Events,
		Tracks: s.Tracks, Warnings: nonNil(s.Warnings), Truncated: s.Truncated,
		ClockOffsetNs: s.ClockOffsetNs,
	}
}

func jsonDevice(d *analyze.Device, win int64) DeviceV1 {
	return DeviceV1{
		ID: d.ID, StartNs: d.Start, EndNs: d.End, SpanNs: d.End - d.Start,
		BusyNs: d.Busy, IdleNs: d.Idle, Utilization: round4(d.Utilization),
		Gaps: d.Gaps, WindowBusyNs: d.WindowBusy, WindowIdle: jsonBreakdown(&d.WindowIdle, win),
	}
}

func jsonStep(s *analyze.Step) StepV1 {
	return StepV1{
		Name: s.Name, Num: s.Num, StartNs: s.Start, DurNs: s.Dur,
		DeviceBusyNs: s.DeviceBusy, InputNs: s.Input, SyncNs: s.Sync,
		Idle: jsonBreakdown(&s.Idle, s.Dur), Verdict: string(s.Verdict),
	}
}

// JSONGap returns the v1 JSON form of one gap of res (as in
// Report.TopGaps).
func JSONGap(res *analyze.Result, g *analyze.Gap) GapV1 {
	return GapV1{
		Device: g.Device, StartNs: g.Start, DurNs: g.Dur, ClockStartNs: res.Source.ClockNs(g.Start), Cause: g.Cause.String(),
		Step: g.Step, StepNum: stepNum(res, g.Step), Thread: g.Thread, HostStack: HostStack(res, g),
		Split: jsonBreakdown(&g.Split, g.Dur), Stacks: gapStacks(res, g, maxGapStacks), Waits: jsonWaited(g.Waits),
	}
}

func jsonWaited(w *analyze.Waited) *WaitedV1 {
	if w == nil {
		return nil
	}
	return &WaitedV1{Kind: w.Kind, Call: w.Call, Stream: w.Stream}
}

// stepNum returns the number of step i of res, -1 for none.
func stepNum(res *analyze.Result, i int) int64 {
	if i < 0 || i >= len(res.Steps) {
		return -1
	}
	return res.Steps[i].Num
}

// HostStack returns what the waited-for thread was mostly doing during a
// gap: the host stack (outermost first) that took the most of the gap's
// time, summed over the gap's stretches; an empty list when the thread
// showed no event. Unlike analyze.Result.HostStack, which takes the single
// longest stretch, it is not fooled by a pipeline that passes through
// thousands of short ops under one call.
func HostStack(res *analyze.Result, g *analyze.Gap) []string {
	if st := gapStacks(res, g, 1); len(st) > 0 {
		return st[0].Stack
	}
	return []string{}
}

// gapStacks sums a gap's segments by cause and stack and returns the n
// that took longest (ties in time order).
func gapStacks(res *analyze.Result, g *analyze.Gap, n int) []StackTime {
	out := []StackTime{}
	at := map[stackOf]int{}
	for s := range res.Segments(g) {
		key := stackOf{s.Cause, s.Stack}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, StackTime{Stack: res.Stack(s.Stack), Cause: s.Cause.String()})
		}
		out[i].DurNs += s.Dur
		out[i].Segments++
	}
	slices.SortStableFunc(out, func(a, b StackTime) int { return cmp.Compare(b.DurNs, a.DurNs) })
	return out[:min(n, len(out))]
}

// stackOf is a stack of host events under a cause: a gap's segments are
// summed by it.
type stackOf struct {
	cause analyze.Cause
	stack analyze.StackID
}

func jsonBreakdown(b *analyze.Breakdown, of int64) BreakdownV1 {
	sh := func(ns int64) float64 { return round4(share(ns, of)) }
	out := BreakdownV1{
		BelowMinGapNs: b.BelowMinGap, IdleNs: b.Total(),
		SyncShare: sh(b.Sync()), BelowMinGapShare: sh(b.BelowMinGap), IdleShare: sh(b.Total()),
	}
	for _, c := range analyze.Causes() {
		out.Ns[c], out.Share[c] = b.Of(c), sh(b.Of(c))
	}
	return out
}

// round4 rounds a share to 4 decimals (0.01 percentage points), so that
// reports do not carry float noise; NaN and infinities become 0.
func round4(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*1e4) / 1e4
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// stepDurations returns the distribution of the steps' durations.
func stepDurations(steps []analyze.Step) Distribution {
	if len(steps) == 0 {
		return Distribution{}
	}
	d := make([]int64, len(steps))
	var sum int64
	for i := range steps {
		d[i] = steps[i].Dur
		sum += d[i]
	}
	slices.Sort(d)
	at := func(q float64) int64 { return d[int(q*float64(len(d)-1))] }
	return Distribution{Min: d[0], P50: at(0.5), P90: at(0.9), Max: d[len(d)-1], Mean: sum / int64(len(d))}
}

func writeJSON(w io.Writer, results []*analyze.Result, opt Options) error {
	enc := jsonEncoder(w)
	if len(results) == 1 {
		return enc.Encode(JSONReportWith(results[0], opt))
	}
	all := make([]*Report, len(results))
	for i, r := range results {
		all[i] = JSONReportWith(r, opt)
	}
	return enc.Encode(all)
}

// jsonEncoder returns the encoder of the JSON reports: indented by two
// spaces, with <, > and & as they are, since event names hold them
// (templates, "a > b") and should stay readable, and with the control
// characters encoding/json leaves raw (C1, DEL) escaped, since a report
// can reach a terminal.
func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(untrusted.JSONWriter(w))
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc
}
