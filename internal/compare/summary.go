// Package compare is the one comparison of analysed runs: what changed
// between a base and a new run, whether the new one regressed past a limit,
// and the synthetic-data test.
//
// A comparison works from two Summaries alone, so a run's Summary can be
// computed when it is analysed, stored (it is JSON), and compared later
// without the trace or its analysis.
package compare

import (
	"cmp"
	"math"
	"regexp"
	"slices"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
)

// SummaryVersion is the version of Summary's JSON layout. A stored Summary of
// another version is not compared: its figures may not mean the same.
// Version 2: sync sites' times are averaged over devices, not summed.
const SummaryVersion = 2

// BelowMinGap names, among the idle causes, the idle in gaps shorter than
// the analysis's minimum gap.
const BelowMinGap = "below-min-gap"

// Summary is one run's figures, per step where steps are known.
type Summary struct {
	// Version is SummaryVersion when the Summary was computed.
	Version    int                `json:"version"`
	Path       string             `json:"path"`
	Format     string             `json:"format"`
	Verdict    analyze.Verdict    `json:"verdict"`
	Confidence analyze.Confidence `json:"confidence"`
	// Steps is the number of steady steps the window's idle is divided
	// by.
	Steps int `json:"steps"`
	// PerWindow is set when the run has no steps: the "per step" figures
	// are then over the whole window, taken as one step.
	PerWindow bool `json:"per_window"`
	// StepTime is the run's pace (analyze.Result.StepTime); the window's
	// length divided by Steps when there are no steps.
	StepTime int64 `json:"step_ns"`
	// DeviceBusy, Input and Sync are per typical step (ns): device busy
	// time averaged over devices, input-pipeline time, and time in
	// blocking calls on the launching thread(s) (analyze.Result.PerStep
	// and SyncPerStep). Without steps, the window's busy time, and its
	// idle on input and on syncs, divided by Steps.
	DeviceBusy int64 `json:"device_busy_ns"`
	Input      int64 `json:"input_ns"`
	Sync       int64 `json:"sync_ns"`
	// Utilization is the device busy share of the window, averaged over
	// devices (analyze.Result.Utilization).
	Utilization float64 `json:"utilization"`
	// IdleShare is the attributed idle (gaps of at least the minimum
	// gap) as a share of the window.
	IdleShare float64 `json:"idle_share"`
	// Idle splits the window's idle by cause, in analyze.Cause order,
	// then BelowMinGap.
	Idle []CauseIdle `json:"idle"`
	// Syncs are the blocking calls the devices waited on in the run's
	// gaps, most time first.
	Syncs []SyncSite `json:"syncs"`
	// StepMedian and StepP90 are the median and p90 of the step times,
	// and Stability their label (analyze.Result.Stability); zero and
	// empty without steps.
	StepMedian int64  `json:"step_median_ns"`
	StepP90    int64  `json:"step_p90_ns"`
	Stability  string `json:"stability"`
	// Workers is the loader workers the trace shows when WorkersKnown
	// (analyze.Result.Loader).
	Workers      int  `json:"workers"`
	WorkersKnown bool `json:"workers_known"`
	// InputUnseen says why the run's input-pipeline time cannot be seen
	// in its trace, when no input event was seen on the thread(s) the
	// devices wait for; empty when it was (and in Summaries stored
	// before the field existed).
	InputUnseen string `json:"input_unseen,omitempty"`
	// InputFinding is the analysis's finding on the run's input-caused
	// idle (inline-input or slow-input), when it made one; nil in
	// Summaries stored before the field existed.
	InputFinding *InputFinding `json:"input_finding,omitempty"`
	// Window is the steady-state window's figures that CI checks read
	// (check.Rules.EvaluateSummary); nil in Summaries stored before they
	// were kept here.
	Window *WindowFigures `json:"window,omitempty"`
	// Findings are the analysis's findings by kind, severity and idle.
	Findings []FindingFigure `json:"findings,omitempty"`
}

// WindowFigures are a run's figures over its steady-state window, to the
// nanosecond: the figures a check holds to its limits.
type WindowFigures struct {
	// Ns is the window's length and Steps the steady steps in it.
	Ns    int64 `json:"ns"`
	Steps int   `json:"steps"`
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
}

// DeviceBusy is one device's busy time in the window.
type DeviceBusy struct {
	ID     string `json:"id"`
	BusyNs int64  `json:"busy_ns"`
}

// FindingFigure is one finding as a check reads it: its kind and
// severity, and the idle it is about.
type FindingFigure struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	IdleNs   int64  `json:"idle_ns"`
}

// windowFigures takes r's window figures.
func windowFigures(r *analyze.Result) *WindowFigures {
	w := &WindowFigures{
		Ns:          r.Window.Dur(),
		Steps:       r.Window.Steps,
		Truncated:   r.Source.Truncated,
		IdleNs:      r.Idle.Attributed(),
		SyncIdleNs:  r.Idle.Sync(),
		InputIdleNs: r.Idle.Of(analyze.Input),
		Devices:     make([]DeviceBusy, len(r.Devices)),
	}
	for i, d := range r.Devices {
		w.Devices[i] = DeviceBusy{ID: d.ID, BusyNs: d.WindowBusy}
	}
	return w
}

// findingFigures takes the figures of r's findings.
func findingFigures(fs []analyze.Finding) []FindingFigure {
	if len(fs) == 0 {
		return nil
	}
	out := make([]FindingFigure, len(fs))
	for i, f := range fs {
		out[i] = FindingFigure{ID: f.ID, Severity: f.Severity, IdleNs: f.Idle}
	}
	return out
}

// InputFinding is what the analysis concluded of a run's input-caused idle
// (analyze.Finding), kept so that a comparison follows the verdict rule
// without the trace: an inline loader fast enough for compute is not
// overlapped with it (inline-input), a slower one or background workers the
// loop waits on starve the devices (slow-input).
type InputFinding struct {
	// ID is the finding's: "inline-input" or "slow-input".
	ID string `json:"id"`
	// Loader names the input event the devices waited on; empty when the
	// finding names none.
	Loader string `json:"loader"`
	// Fix is the finding's fix.
	Fix string `json:"fix"`
}

// CauseIdle is the window's idle time of one cause.
type CauseIdle struct {
	// Cause is an analyze.Cause's name, or BelowMinGap.
	Cause string `json:"cause"`
	// PerStep is the idle divided by Summary.Steps (ns).
	PerStep int64 `json:"per_step_ns"`
	// Share is the idle as a share of the window.
	Share float64 `json:"share"`
}

// SyncSite is one blocking call the device waited on in a run's gaps.
type SyncSite struct {
	// Name is the blocking call: the innermost host event of in-sync
	// segments, or the call after-sync segments follow.
	Name string `json:"name"`
	// Stack is the longest segment's stack, outermost first, with step
	// numbers replaced by N so that steps group together (for a call
	// known only from after-sync segments, the call alone).
	Stack []string `json:"stack"`
	// Time is the gap time spent inside the call or right after it
	// returned (ns), averaged over devices; Gaps counts the gaps, on
	// every device.
	Time int64 `json:"ns"`
	Gaps int   `json:"gaps"`
}

// Summarize computes a run's figures.
func Summarize(r *analyze.Result) Summary {
	s := Summary{
		Version:     SummaryVersion,
		Path:        r.Source.Path,
		Format:      r.Source.Format,
		Verdict:     r.Verdict,
		Confidence:  r.Confidence,
		Steps:       len(r.Steps),
		Utilization: r.Utilization(),
		Syncs:       syncSites(r),
		Workers:     r.Loader.Workers, WorkersKnown: r.Loader.Known,
	}
	if st := r.Stability(); st.Steps > 0 {
		s.StepMedian, s.StepP90, s.Stability = st.Median, st.P90, string(st.Label)
	}
	if s.Steps == 0 {
		s.Steps = r.Window.Steps
	}
	if s.Steps == 0 {
		s.Steps, s.PerWindow = 1, true
	}
	n := int64(s.Steps)
	win := r.Window.Dur()
	s.StepTime, s.Input, s.DeviceBusy, s.Sync = perStep(r, n)
	if win > 0 {
		s.IdleShare = float64(r.Idle.Attributed()) / float64(win)
	}
	idle := func(cause string, ns int64) {
		ci := CauseIdle{Cause: cause, PerStep: ns / n}
		if win > 0 {
			ci.Share = float64(ns) / float64(win)
		}
		s.Idle = append(s.Idle, ci)
	}
	for c := range analyze.NumCauses {
		idle(c.String(), r.Idle.Of(c))
	}
	idle(BelowMinGap, r.Idle.BelowMinGap)
	s.InputUnseen = inputUnseen(r)
	s.InputFinding = inputFinding(r)
	s.Window, s.Findings = windowFigures(r), findingFigures(r.Findings)
	return s
}

// The analysis's findings on input-caused idle (analyze.Finding.ID).
const (
	findingInlineInput = advice.FindInlineInput
	findingSlowInput   = advice.FindSlowInput
)

// inputFinding returns r's finding on input-caused idle, or nil.
func inputFinding(r *analyze.Result) *InputFinding {
	for _, f := range r.Findings {
		if f.ID != findingInlineInput && f.ID != findingSlowInput {
			continue
		}
		in := &InputFinding{ID: f.ID, Fix: f.Fix}
		if len(f.Calls) > 0 {
			in.Loader = f.Calls[0]
		}
		return in
	}
	return nil
}

// inputUnseen says why r's input time cannot be seen, or returns "" when
// the launching threads showed some: loading in a step, or input-caused
// idle.
func inputUnseen(r *analyze.Result) string {
	seen := r.Idle.Of(analyze.Input) > 0
	for i := range r.Steps {
		seen = seen || r.Steps[i].Input > 0
	}
	switch {
	case seen:
		return ""
	case r.LoopUntraced:
		return unseenNoPythonTracer
	}
	return unseenNoEvents
}

// Why a run's input cannot be seen (Summary.InputUnseen).
const (
	unseenNoPythonTracer = "its JAX loop thread shows no Python frames (profiled without the Python tracer), so grain's or tf.data's loader frames are not in the trace"
	unseenNoEvents       = "its trace shows no input-pipeline event on the thread the devices wait for (no DataLoader record, loader frame or input annotation)"
)

// perStep returns the run's step time and its input, device busy and sync
// time per step, from the analysis's own figures where the run has steps;
// without steps, from the window taken as n steps.
func perStep(r *analyze.Result, n int64) (step, input, busy, sync int64) {
	step, ok := r.StepTime()
	input, busy, _ = r.PerStep()
	sync, _ = r.SyncPerStep()
	if ok {
		return step, input, busy, sync
	}
	win := r.Window.Dur()
	busy = int64(math.Round(r.Utilization() * float64(win)))
	return win / n, r.Loading / n, busy / n, r.Blocking / n
}

// IdleOf returns the run's idle of cause (an analyze.Cause's name or
// BelowMinGap); zero for a cause the Summary does not know.
func (s *Summary) IdleOf(cause string) CauseIdle {
	for _, ci := range s.Idle {
		if ci.Cause == cause {
			return ci
		}
	}
	return CauseIdle{Cause: cause}
}

var stepNumber = regexp.MustCompile(`#\d+`)

// syncSites names the blocking calls r's devices waited on: the innermost
// host event of the gaps' in-sync segments, and the call an after-sync
// segment follows where the analysis named it; most idle time first. The
// times are averaged over devices, as every other figure of the run (and
// analyze's call sites) is; the gaps are counted on every device.
func syncSites(r *analyze.Result) []SyncSite {
	index := map[string]int{}
	sites := []SyncSite{}
	var longest []int64 // per site, the longest in-sync segment seen
	for gi := range r.Gaps {
		seen := map[int]bool{}
		for seg := range r.Segments(&r.Gaps[gi]) {
			var name string
			var stack []string
			switch {
			case seg.Cause == analyze.InSync && seg.Stack != 0:
				stack = r.Stack(seg.Stack)
				name = stack[len(stack)-1]
			case seg.Cause != analyze.AfterSync || seg.Sync == 0:
				continue
			default:
				name = r.CallName(seg.Sync)
				stack = []string{name}
			}
			i, ok := index[name]
			if !ok {
				i = len(sites)
				index[name] = i
				sites = append(sites, SyncSite{Name: name})
				longest = append(longest, -1)
			}
			sites[i].Time += seg.Dur
			if !seen[i] {
				seen[i] = true
				sites[i].Gaps++
			}
			// The longest in-sync stack shows where the call was
			// made; an after-sync segment knows only the call.
			if seg.Cause == analyze.InSync && seg.Dur > longest[i] {
				longest[i] = seg.Dur
				sites[i].Stack = normalizeStack(stack)
			} else if sites[i].Stack == nil {
				sites[i].Stack = stack
			}
		}
	}
	if ndev := int64(len(r.Devices)); ndev > 1 {
		for i := range sites {
			sites[i].Time /= ndev
		}
	}
	slices.SortStableFunc(sites, func(x, y SyncSite) int { return cmp.Compare(y.Time, x.Time) })
	return sites
}

func normalizeStack(stack []string) []string {
	out := make([]string, len(stack))
	for i, s := range stack {
		out[i] = stepNumber.ReplaceAllString(s, "#N")
	}
	return out
}
