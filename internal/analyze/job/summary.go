package job

import (
	"cmp"
	"math"
	"slices"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/trace"
)

// A job is analysed in two phases: each rank's trace is summarized on its
// own (Summarize), where the trace is, and the summaries are merged
// (Merge). A summary holds what the merge asks of a rank and nothing that
// depends on the other ranks: the merge's only link between ranks is the
// collectives' waits, which it works out from the ranks' collective times
// and their offsets on the job's clock. Every question the merge asks of a
// rank is over an interval the rank alone fixes (its window, its steps,
// the stretch before each of its collectives), except the device's busy
// time with waits taken out, which is known once the waits are: for that a
// summary holds the device's other work inside its collectives, where a
// wait can fall, and its other work's busy time over the rank's own
// intervals. Analysing traces together (Analyze) is the same two phases
// in one process, so the two ways give the same result.

// SummaryFormat and SummaryVersion identify a rank summary; a summary of
// another version is refused rather than misread.
const (
	SummaryFormat  = "tracegap-rank-summary"
	SummaryVersion = 2 // 2: segments as tables, not named one by one
)

// Summary is one rank's part of a job analysis: the analysis of its trace
// alone and what the job analysis needs from the trace, in a form that
// does not depend on the other ranks. Its size follows the rank's Result
// (which the job's report embeds) and its collectives, not its events.
// Times are ns on the rank's own timeline, as in its Result.
type Summary struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Path names the rank's trace.
	Path string `json:"path"`
	// File is the summary file the summary was read from, if any: what
	// the merge's errors about the summary name, as the file to fix or
	// make again (Path names the trace it was made from).
	File string `json:"-"`
	// Meta holds the trace's "rank" and "world_size", when it says.
	Meta map[string]string `json:"meta,omitempty"`
	// StartNs is the trace's start on its own clock (trace.Trace.StartNs).
	StartNs int64 `json:"start_ns"`
	// LoaderInBackground completes the rank's verdict rule
	// (analyze.Rule) with Result.Options.
	LoaderInBackground bool `json:"loader_in_background"`
	// Steps are the rank's step markers, warm-up included.
	Steps []analyze.StepMarker `json:"steps"`
	// Input and Sync are the launching threads' time in the input
	// pipeline and in blocking calls over the window.
	Input int64 `json:"input_ns"`
	Sync  int64 `json:"sync_ns"`
	// Names are the collectives' names, which Coll.Name indexes.
	Names []string `json:"names"`
	// Devices are indexed as Result.Devices.
	Devices []DeviceSummary `json:"devices"`
	// Result is the analysis of the rank's trace alone.
	Result *analyze.Result `json:"result"`
}

// DeviceSummary is what the job analysis needs of one device. "Other
// work" is the device's work that is not a collective, merged into
// intervals.
type DeviceSummary struct {
	// Colls are the device's collectives in start order.
	Colls []Coll `json:"colls"`
	// WindowBusy is the other work's busy time inside the window;
	// StepBusy inside each of Result.Steps' host spans (from its start to
	// the next step's).
	WindowBusy int64   `json:"window_busy_ns"`
	StepBusy   []int64 `json:"step_busy_ns"`
	// Overlap is the other work inside the collectives' spans, sorted and
	// disjoint: where a collective's wait may fall on busy time.
	Overlap []analyze.Interval `json:"overlap"`
}

// Coll is one collective on one device, with the stretch before it that a
// wait in it is explained by.
type Coll struct {
	Name  int   `json:"name"`
	Start int64 `json:"start_ns"`
	End   int64 `json:"end_ns"`
	// StepIdx indexes Summary.Steps: the step whose marker holds the
	// collective's launch; -1 when none does.
	StepIdx int `json:"step"`
	// Seg is the stretch before the collective: from the end of the
	// device's previous collective, or else its step's start, or else
	// the device's first work, to the collective's start.
	Seg analyze.Interval `json:"seg"`
	// SegBusy is the other work's busy time in Seg; SegIdle and
	// SegIdleTotal explain the device's idle in Seg by cause
	// (analyze.Analysis.ExplainIdle).
	SegBusy      int64             `json:"seg_busy_ns"`
	SegIdle      analyze.Breakdown `json:"seg_idle"`
	SegIdleTotal int64             `json:"seg_idle_ns"`
}

// Summarize analyses one rank's trace and summarizes it for the job
// analysis; the trace is not needed afterwards.
func Summarize(t *trace.Trace, opt analyze.Options) (*Summary, error) {
	a, err := analyze.New(t, opt)
	if err != nil {
		return nil, err
	}
	return summarize(t, a), nil
}

func summarize(t *trace.Trace, a *analyze.Analysis) *Summary {
	res := a.Result()
	advice.Add(res) // the summary keeps the rank's findings, not their facts
	s := &Summary{
		Format: SummaryFormat, Version: SummaryVersion, Path: t.Path, StartNs: t.StartNs,
		LoaderInBackground: a.Rule().LoaderInBackground, Steps: a.StepMarkers(), Result: res,
	}
	for _, k := range []string{"rank", "world_size"} {
		if v, ok := t.Meta[k]; ok {
			if s.Meta == nil {
				s.Meta = map[string]string{}
			}
			s.Meta[k] = v
		}
	}
	s.Input, s.Sync = res.Loading, res.Blocking
	names := &nameTable{t: t, index: map[trace.StrID]int{}, isColl: make([]int8, len(t.Strings))}
	for dev := range res.Devices {
		s.Devices = append(s.Devices, summarizeDevice(a, dev, s.Steps, names))
	}
	s.Names = names.names
	return s
}

// nameTable numbers the collectives' names and classifies each name once.
type nameTable struct {
	t      *trace.Trace
	index  map[trace.StrID]int
	names  []string
	isColl []int8
}

// collective reports whether work named id is a collective.
func (n *nameTable) collective(id trace.StrID) bool {
	if int(id) >= len(n.isColl) {
		return false
	}
	if n.isColl[id] == 0 {
		n.isColl[id] = -1
		if isCollective(n.t.Str(id)) {
			n.isColl[id] = 1
		}
	}
	return n.isColl[id] == 1
}

func (n *nameTable) number(id trace.StrID) int {
	i, ok := n.index[id]
	if !ok {
		i = len(n.names)
		n.index[id], n.names = i, append(n.names, n.t.Str(id))
	}
	return i
}

// summarizeDevice finds device dev's collectives, each with the step its
// launch falls in, and its other work's busy time over every interval the
// merge asks about.
func summarizeDevice(a *analyze.Analysis, dev int, steps []analyze.StepMarker, names *nameTable) DeviceSummary {
	var d DeviceSummary
	var other []analyze.Interval
	for _, e := range a.Work(dev) {
		if !names.collective(e.Name) {
			other = append(other, analyze.Interval{Start: e.Start, End: e.End()})
			continue
		}
		d.Colls = append(d.Colls, Coll{Name: names.number(e.Name), Start: e.Start, End: e.End(), StepIdx: stepOf(a, steps, e)})
	}
	slices.SortStableFunc(d.Colls, func(x, y Coll) int { return cmp.Compare(x.Start, y.Start) })
	other = mergeIntervals(other)
	res := a.Result()
	d.WindowBusy = analyze.Covered(other, windowOf(res))
	for i := range res.Steps {
		d.StepBusy = append(d.StepBusy, analyze.Covered(other, stepSpan(res, i)))
	}
	spans := make([]analyze.Interval, len(d.Colls))
	first := int64(0)
	if ivs := res.Devices[dev].Intervals; len(ivs) > 0 {
		first = ivs[0].Start
	}
	for i := range d.Colls {
		c := &d.Colls[i]
		spans[i] = analyze.Interval{Start: c.Start, End: c.End}
		c.Seg = segment(d.Colls, i, steps, first)
		c.SegBusy = analyze.Covered(other, c.Seg)
		if c.Seg.End > c.Seg.Start {
			c.SegIdle, c.SegIdleTotal = a.ExplainIdle(dev, c.Seg)
		}
	}
	d.Overlap = clip(other, mergeIntervals(spans))
	return d
}

// stepOf returns the index in steps of the step whose marker holds the
// launch of device work e (e's start when no launch is linked), -1 when
// none does.
func stepOf(a *analyze.Analysis, steps []analyze.StepMarker, e *trace.Event) int {
	at, linked := e.Start, false
	if s, ok := a.Launch(e); ok {
		at, linked = s, true
	}
	i, _ := slices.BinarySearchFunc(steps, at, func(s analyze.StepMarker, t int64) int { return cmp.Compare(s.Start, t+1) })
	i--
	if i < 0 || (i == len(steps)-1 && linked && at >= steps[i].End) {
		return -1
	}
	return i
}

// segment returns the stretch before collective i of a device that a wait
// in it is explained by: from the end of the device's previous
// collective, or else the start of the collective's step, or else the
// device's first work (first).
func segment(colls []Coll, i int, steps []analyze.StepMarker, first int64) analyze.Interval {
	c := &colls[i]
	start := first
	switch {
	case i > 0:
		start = colls[i-1].End
	case c.StepIdx >= 0:
		start = steps[c.StepIdx].Start
	}
	return analyze.Interval{Start: min(start, c.Start), End: c.Start}
}

// windowOf returns the result's window as an interval.
func windowOf(res *analyze.Result) analyze.Interval {
	return analyze.Interval{Start: res.Window.Start, End: res.Window.End}
}

// stepSpan returns the host span of res.Steps[i]: from its start to the
// next step's start, or its end for the last.
func stepSpan(res *analyze.Result, i int) analyze.Interval {
	s := &res.Steps[i]
	sw := analyze.Interval{Start: s.Start, End: s.Start + s.Dur}
	if i+1 < len(res.Steps) {
		sw.End = res.Steps[i+1].Start
	}
	return sw
}

// mergeIntervals sorts intervals and merges those that overlap or touch.
func mergeIntervals(ivs []analyze.Interval) []analyze.Interval {
	slices.SortFunc(ivs, func(x, y analyze.Interval) int { return cmp.Compare(x.Start, y.Start) })
	var out []analyze.Interval
	for _, iv := range ivs {
		if n := len(out); n > 0 && iv.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, iv.End)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// clip returns the parts of the sorted, disjoint intervals a inside the
// sorted, disjoint intervals b.
func clip(a, b []analyze.Interval) []analyze.Interval {
	var out []analyze.Interval
	for i, k := 0, 0; i < len(a) && k < len(b); {
		if s, e := max(a[i].Start, b[k].Start), min(a[i].End, b[k].End); s < e {
			out = append(out, analyze.Interval{Start: s, End: e})
		}
		if a[i].End < b[k].End {
			i++
		} else {
			k++
		}
	}
	return out
}

// noStep is the step number of a collective in no step.
const noStep = math.MinInt64
