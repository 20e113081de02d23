package render

import (
	"cmp"
	"encoding/json"
	"io"
	"math"
	"slices"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/untrusted"
	"github.com/tracegap/tracegap/report"
)

// maxGapStacks caps GapV1.Stacks: a gap in a Python input pipeline passes
// through thousands of short host ops.
const maxGapStacks = 5

// JSONReport builds the v1 document for res, with the default bounds on
// the steps and devices listed.
func JSONReport(res *analyze.Result) *report.Report { return JSONReportWith(res, Options{}) }

// JSONReportWith builds the v1 document for res; opt.AllSteps lists every
// step and device.
func JSONReportWith(res *analyze.Result, opt Options) *report.Report {
	o := &res.Options
	r := &report.Report{
		Schema:     report.Schema,
		Source:     jsonSource(&res.Source, res.Framework),
		Verdict:    string(res.Verdict),
		Confidence: string(res.Confidence),
		Summary:    Summary(res),
		Reasons:    nonNil(res.Reasons),
		Secondary:  []string{},
		Thresholds: report.Thresholds{
			MinGapNs: o.MinGap, SyncSlackNs: o.SyncSlack,
			Sync: o.SyncThreshold, Input: o.InputThreshold, Host: o.HostThreshold, Stall: o.StallThreshold,
			StepRegex: o.StepRegex, SyncPatterns: nonNil(o.SyncPatterns),
			InputPatterns: nonNil(o.InputPatterns), TopGaps: o.TopGaps,
		},
		Window: report.WindowV1{
			StartNs: res.Window.Start, EndNs: res.Window.End, DurNs: res.Window.Dur(),
			Steps: res.Window.Steps, StepSource: res.Window.StepSource,
			WarmupDropped: res.Window.WarmupDropped,
			TraceEndNs:    res.Window.TraceEnd, TailNs: res.Window.Tail(),
		},
		Figures:       jsonFigures(res),
		Devices:       []report.DeviceV1{},
		IdleBreakdown: jsonBreakdown(&res.Idle, res.Window.Dur()),
		Steps:         []report.StepV1{},
		TopGaps:       []report.GapV1{},
		Findings:      []report.FindingV1{},
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
		r.Omitted = &report.OmittedV1{Steps: len(res.Steps) - ns, Devices: len(res.Devices) - nd, StepDurationNs: stepDurations(res.Steps)}
	}
	for _, g := range topGaps(res, 0) {
		r.TopGaps = append(r.TopGaps, JSONGap(res, g))
	}
	for i := range res.Findings {
		r.Findings = append(r.Findings, jsonFinding(&res.Findings[i], res.Window.Dur()))
	}
	return r
}

func jsonStalled(res *analyze.Result) report.StalledV1 {
	out := report.StalledV1{InSyncNs: res.StalledInSync, Dependencies: []report.DependencyV1{}}
	for _, d := range res.Dependencies {
		out.Dependencies = append(out.Dependencies, report.DependencyV1{
			Kind: d.Kind, Call: d.Call, Stream: d.Stream, IdleNs: d.Idle,
			Share: round4(share(d.Idle, res.Window.Dur())), Gaps: d.Gaps,
		})
	}
	return out
}

func jsonSource(s *analyze.Source, fw analyze.Framework) report.SourceV1 {
	return report.SourceV1{
		Path: s.Path, Format: s.Format, Framework: string(fw), Bytes: s.Bytes, Events: s.Events,
		Tracks: s.Tracks, Warnings: nonNil(s.Warnings), Truncated: s.Truncated, Invalid: s.Invalid,
		ClockOffsetNs: s.ClockOffsetNs,
	}
}

func jsonDevice(d *analyze.Device, win int64) report.DeviceV1 {
	return report.DeviceV1{
		ID: d.ID, StartNs: d.Start, EndNs: d.End, SpanNs: d.End - d.Start,
		BusyNs: d.Busy, IdleNs: d.Idle, Utilization: round4(d.Utilization),
		Gaps: d.Gaps, WindowBusyNs: d.WindowBusy, WindowIdle: jsonBreakdown(&d.WindowIdle, win),
	}
}

func jsonStep(s *analyze.Step) report.StepV1 {
	return report.StepV1{
		Name: s.Name, Num: s.Num, StartNs: s.Start, DurNs: s.Dur,
		DeviceBusyNs: s.DeviceBusy, InputNs: s.Input, SyncNs: s.Sync,
		Idle: jsonBreakdown(&s.Idle, s.Dur), Verdict: string(s.Verdict),
	}
}

// JSONGap returns the v1 JSON form of one gap of res (as in
// Report.TopGaps).
func JSONGap(res *analyze.Result, g *analyze.Gap) report.GapV1 {
	return report.GapV1{
		Device: g.Device, StartNs: g.Start, DurNs: g.Dur, ClockStartNs: res.Source.ClockNs(g.Start), Cause: g.Cause.String(),
		Step: g.Step, StepNum: stepNum(res, g.Step), Thread: g.Thread, HostStack: HostStack(res, g),
		Split: jsonBreakdown(&g.Split, g.Dur), Stacks: gapStacks(res, g, maxGapStacks), Waits: jsonWaited(g.Waits),
	}
}

func jsonWaited(w *analyze.Waited) *report.WaitedV1 {
	if w == nil {
		return nil
	}
	return &report.WaitedV1{Kind: w.Kind, Call: w.Call, Stream: w.Stream}
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
func gapStacks(res *analyze.Result, g *analyze.Gap, n int) []report.StackTime {
	out := []report.StackTime{}
	at := map[stackOf]int{}
	for s := range res.Segments(g) {
		key := stackOf{s.Cause, s.Stack}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, report.StackTime{Stack: res.Stack(s.Stack), Cause: s.Cause.String()})
		}
		out[i].DurNs += s.Dur
		out[i].Segments++
	}
	slices.SortStableFunc(out, func(a, b report.StackTime) int { return cmp.Compare(b.DurNs, a.DurNs) })
	return out[:min(n, len(out))]
}

// stackOf is a stack of host events under a cause: a gap's segments are
// summed by it.
type stackOf struct {
	cause analyze.Cause
	stack analyze.StackID
}

func jsonBreakdown(b *analyze.Breakdown, of int64) report.BreakdownV1 {
	sh := func(ns int64) float64 { return round4(share(ns, of)) }
	out := report.BreakdownV1{
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
func stepDurations(steps []analyze.Step) report.Distribution {
	if len(steps) == 0 {
		return report.Distribution{}
	}
	d := make([]int64, len(steps))
	var sum int64
	for i := range steps {
		d[i] = steps[i].Dur
		sum += d[i]
	}
	slices.Sort(d)
	at := func(q float64) int64 { return d[int(q*float64(len(d)-1))] }
	return report.Distribution{Min: d[0], P50: at(0.5), P90: at(0.9), Max: d[len(d)-1], Mean: sum / int64(len(d))}
}

func writeJSON(w io.Writer, results []*analyze.Result, opt Options) error {
	enc := jsonEncoder(w)
	if len(results) == 1 && !opt.Array {
		return enc.Encode(JSONReportWith(results[0], opt))
	}
	all := make([]*report.Report, len(results))
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
