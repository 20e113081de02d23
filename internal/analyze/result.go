// Package analyze finds where each device of a trace sat idle, works out
// what the host was doing meanwhile, and reaches a verdict for the run.
package analyze

import (
	"slices"

	"github.com/tracegap/tracegap/report"
)

// Verdict is the one-word label of a run or a step.
type Verdict string

// The verdicts; see DESIGN.md and the README.
const (
	Parallel   Verdict = "parallel"
	Sequential Verdict = "sequential"
	DataBound  Verdict = "data-bound"
	HostBound  Verdict = "host-bound"
	// Stalled is a device that had work queued and waited on a
	// dependency (another stream's event, a collective, a graph node),
	// not on the host.
	Stalled  Verdict = "stalled"
	NoDevice Verdict = "no-device"
)

// verdicts is every verdict, in the order help, errors and docs list them.
var verdicts = []Verdict{Parallel, Sequential, DataBound, HostBound, Stalled, NoDevice}

// Verdicts returns every verdict, for parsers, help and docs tests.
func Verdicts() []Verdict { return slices.Clone(verdicts) }

// Confidence qualifies a verdict.
type Confidence string

// Confidence levels.
const (
	High   Confidence = "high"
	Medium Confidence = "medium"
	Low    Confidence = "low"
)

// Cause is what the waited-for host thread was doing during an instant of a
// gap. A cause is defined here once: its constant and its row in causes
// (name, description), with its JSON key in report.CauseKeys. Reports, the JSON contract and the
// comparisons iterate over the causes; its rule lives in cause (attribute.go)
// and, where names decide it, in the pattern tables (patterns.go).
type Cause uint8

// Causes, in the order their rules are tried, but for Stall: it is
// decided before the others (the device had the work that ends the gap
// queued, whatever the host did) and listed last, apart from the host's
// causes.
const (
	InSync Cause = iota
	AfterSync
	Input
	Runtime
	Host
	Untraced
	Stall
	NumCauses
)

// causes describes each cause for the reports: its name, a few words on
// what the thread was doing, and the letter of the text report's step
// bars. Its JSON key is report.CauseKeys[c], in the same order.
var causes = [NumCauses]struct {
	name, about string
	mark        byte
}{
	InSync:    {"in-sync", "inside a blocking call", 'S'},
	AfterSync: {"after-sync", "just back from a blocking call, launching work one piece at a time", 's'},
	Input:     {"input", "in the input pipeline", 'I'},
	Runtime:   {"runtime", "in runtime work: compilation, allocation, module loading, warm-up", 'R'},
	Host:      {"host", "in other host work: dispatch, launches, Python, CPU ops", 'H'},
	Untraced:  {"untraced", "in nothing the trace shows", '?'},
	Stall:     {"stalled", "not waited for: the work was queued behind a dependency", 'Q'},
}

// The cause table and the JSON report's keys list as many causes: either
// difference overflows a Cause when they do not.
const _ = (NumCauses - Cause(report.NumCauses)) + (Cause(report.NumCauses) - NumCauses)

// String returns the cause's name as reports show it ("in-sync").
func (c Cause) String() string {
	if c < NumCauses {
		return causes[c].name
	}
	return "unknown"
}

// Key returns the cause's name in JSON keys and metric ids ("in_sync").
func (c Cause) Key() string {
	if c < NumCauses {
		return report.CauseKeys[c]
	}
	return "unknown"
}

// Mark is the letter that stands for the cause in the text report's step
// bars.
func (c Cause) Mark() byte {
	if c < NumCauses {
		return causes[c].mark
	}
	return '?'
}

// About says in a few words what the waited-for thread was doing.
func (c Cause) About() string {
	if c < NumCauses {
		return causes[c].about
	}
	return ""
}

// Causes returns every cause in rule order, for loops in reports.
func Causes() []Cause {
	cs := make([]Cause, NumCauses)
	for i := range cs {
		cs[i] = Cause(i)
	}
	return cs
}

// Breakdown splits idle time by cause, in nanoseconds.
type Breakdown struct {
	// ByCause is the idle time attributed to each cause in gaps of at
	// least Options.MinGap.
	ByCause [NumCauses]int64
	// BelowMinGap is idle in gaps shorter than Options.MinGap.
	BelowMinGap int64
}

// Of returns the time attributed to c.
func (b *Breakdown) Of(c Cause) int64 {
	if c < NumCauses {
		return b.ByCause[c]
	}
	return 0
}

// Add adds d to cause c.
func (b *Breakdown) Add(c Cause, d int64) {
	if c < NumCauses {
		b.ByCause[c] += d
	}
}

// AddAll adds every figure of o to b.
func (b *Breakdown) AddAll(o *Breakdown) {
	for c := range b.ByCause {
		b.ByCause[c] += o.ByCause[c]
	}
	b.BelowMinGap += o.BelowMinGap
}

// Divide returns b with every figure divided by n (averaging over devices).
func (b Breakdown) Divide(n int64) Breakdown {
	for c := range b.ByCause {
		b.ByCause[c] /= n
	}
	b.BelowMinGap /= n
	return b
}

// Sync is in-sync plus after-sync time.
func (b *Breakdown) Sync() int64 { return b.ByCause[InSync] + b.ByCause[AfterSync] }

// HostWork is the idle the verdict counts as host work: other host work
// and runtime work.
func (b *Breakdown) HostWork() int64 { return b.ByCause[Host] + b.ByCause[Runtime] }

// MostlyUntraced reports whether untraced idle is the largest share the
// verdict weighs (sync, input, host work) and at least UntracedDoubt of
// the window it was measured over, window ns, which makes a verdict a
// guess. Less untraced idle than that cannot change a verdict whatever it
// was: a device busy all but a few milliseconds of a minute is not in
// doubt because those milliseconds are untraced.
func (b *Breakdown) MostlyUntraced(window int64) bool {
	u := b.Of(Untraced)
	return u > 0 && float64(u) >= UntracedDoubt*float64(window) && u >= b.Sync() && u >= b.Of(Input) && u >= b.HostWork() && u >= b.Of(Stall)
}

// UntracedDoubt is the share of the window that untraced idle must reach
// to make a verdict a guess (see MostlyUntraced): a fifth of the lowest
// default threshold, so that it could not have moved a cause past one.
const UntracedDoubt = 0.01

// Attributed is the idle time in gaps of at least MinGap.
func (b *Breakdown) Attributed() int64 {
	var t int64
	for _, d := range b.ByCause {
		t += d
	}
	return t
}

// Total is all idle time: attributed and below MinGap.
func (b *Breakdown) Total() int64 { return b.Attributed() + b.BelowMinGap }

// Options hold every threshold and pattern of the analysis. The zero value is
// not useful: start from DefaultOptions.
type Options struct {
	// MinGap is the shortest idle interval attributed on its own (ns).
	MinGap int64
	// SyncSlack is how soon after its launch call device work must start
	// for the device to count as waiting on the host launch by launch (ns).
	SyncSlack int64
	// SyncThreshold, InputThreshold and HostThreshold are the shares of
	// the window's wall time above which a cause decides the verdict.
	SyncThreshold  float64
	InputThreshold float64
	HostThreshold  float64
	// StallThreshold is the share of the window in stalled idle (the
	// device had the work queued) above which, when it also outweighs
	// each host cause, the run is stalled.
	StallThreshold float64
	// StepRegex, when set, names the host events that mark steps.
	StepRegex string
	// SyncPatterns and InputPatterns extend the built-in name tables
	// (regular expressions matched against event names).
	SyncPatterns  []string
	InputPatterns []string
	// TopGaps is how many of the longest gaps Result.TopGaps keeps.
	TopGaps int
	// Admit, when set, is asked before the gaps are attributed whether
	// the analysis may take the memory of up to n gaps; its error stops
	// the analysis. The engine sets it from its memory budget: a trace
	// dense in gaps costs more than its events.
	Admit func(gaps int) error `json:"-"`
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		MinGap:         20_000,
		SyncSlack:      50_000,
		SyncThreshold:  0.05,
		InputThreshold: 0.05,
		HostThreshold:  0.15,
		StallThreshold: 0.15,
		TopGaps:        10,
	}
}

// Result is everything the analysis found in one trace. Reports render it.
type Result struct {
	Source Source
	// Framework is the ML framework that recorded the trace, as its
	// event names show it; empty when they do not say.
	Framework Framework
	// LoopUntraced is set for a JAX trace whose loop thread shows no
	// Python frame (profiled without the Python tracer): its input
	// pipeline, logging and other Python show as untraced.
	LoopUntraced bool
	Verdict      Verdict
	Confidence   Confidence
	// Reasons explain a confidence below high, and the deciding numbers:
	// package advice writes them from Facts.Decision and Facts.Grounds.
	Reasons []string
	// Secondary lists the other causes over their thresholds, as the
	// verdicts they would have given.
	Secondary []Verdict
	// Options are the thresholds and patterns used.
	Options Options
	Window  Window
	// Devices are sorted by id.
	Devices []Device
	// Idle is the window's idle time by cause, averaged over devices.
	Idle Breakdown
	// Loading and Blocking are the time the thread(s) the devices wait for
	// spent loading data (in the input pipeline, less blocking calls
	// nested in it) and in blocking calls, merged over the threads: the
	// sums over the steps' host spans (each from the step's host start to
	// the next one's, the last to its marker's end), or over the window
	// without steps. Loading is the verdict's
	// L over the whole window.
	Loading, Blocking int64
	// Steps are the steady-state steps in time order (warm-up excluded).
	Steps []Step
	// Gaps are every gap of at least MinGap inside the window, on every
	// device, in time order.
	Gaps []Gap
	// TopGaps indexes the longest Gaps, longest first.
	TopGaps []int
	// Findings are the conclusions with their fixes, most severe first:
	// package advice writes them from the figures and Facts.
	Findings []Finding
	// Facts are what the findings and reasons are written from (see
	// Facts); a job's summary does not keep them, its findings and
	// reasons written already.
	Facts Facts `json:"-"`
	// Loader is what the trace says of the input pipeline's workers.
	Loader Loader
	// CallSites are the calls the idle is blamed on, each with the
	// innermost user-code frame it came from, most idle first.
	CallSites []CallSite
	// StackHint says how to record Python stacks when the trace has none
	// around the calls; empty when it has.
	StackHint string
	// Ops are the host ops whose dispatch held the devices idle, most
	// idle first.
	Ops []OpCost
	// Copies are the window's copies by kind, most idle first.
	Copies []CopyStat
	// StalledInSync is the stalled idle during which the thread that
	// launched the queued work was inside a blocking call (ns, averaged
	// over devices): a sync that waited on a stalled device, which
	// removing would not shorten the gap.
	StalledInSync int64
	// Dependencies are what the stalled idle waited on, as the trace
	// shows it, most idle first.
	Dependencies []Dependency
	// segs holds the segments of the gaps: see Segments.
	segs segments
}

// Source describes the input.
type Source struct {
	Path     string
	Format   string
	Bytes    int64
	Events   int
	Tracks   int
	Warnings []string
	// Truncated is set when the trace was cut short and partly read.
	Truncated bool
	// Invalid is set when the trace held invalid data part-way and only
	// the part before it was read.
	Invalid bool
	// ClockOffsetNs is the time on the trace's own clock (ns) of the
	// relative time 0 that every other time of the result counts from
	// (trace.Trace.StartNs): add it to a relative time to find the
	// instant in the viewer that shows the source's timestamps. For a
	// Chrome trace the sum divided by 1000 is the events' "ts" (µs); for
	// XPlane it is the lines' timestamp_ns clock. 0 when unknown.
	ClockOffsetNs int64
}

// ClockNs returns relative time t on the trace's own clock.
func (s *Source) ClockNs(t int64) int64 { return s.ClockOffsetNs + t }

// Window is the stretch of time the verdict is about.
type Window struct {
	Start, End int64 // ns, relative to the trace's start
	// Steps counts the steps in the window; 0 when no steps were found
	// and the window is the devices' span.
	Steps int
	// WarmupDropped is set when a first step was left out as warm-up.
	WarmupDropped bool
	// StepSource says how steps were found ("ProfilerStep", "XPlane
	// Steps", "step_num", "regex", ...); empty when none were.
	StepSource string
	// TraceEnd is the end of the trace's last host or device event; the
	// trace starts at 0. The time before Start (warm-up, set-up) and
	// after End (the tail: the host stopping the profiler after the last
	// device work) is outside the window and in none of its figures.
	TraceEnd int64
}

// Dur returns the window's length.
func (w Window) Dur() int64 { return w.End - w.Start }

// Lead returns the trace's time before the window.
func (w Window) Lead() int64 { return max(w.Start, 0) }

// Tail returns the trace's time after the window; 0 when unknown.
func (w Window) Tail() int64 { return max(w.TraceEnd-w.End, 0) }

// Device holds one device's figures.
type Device struct {
	ID string
	// Start and End are the device's first and last work; Busy and Idle
	// cover that whole span (Busy + Idle == End - Start).
	Start, End int64
	Busy, Idle int64
	// Utilization is Busy / (End - Start).
	Utilization float64
	// Gaps counts the gaps of at least MinGap over the device's span.
	Gaps int
	// WindowBusy is the busy time inside the window; WindowIdle is the
	// window's idle time on this device split by cause.
	WindowBusy int64
	WindowIdle Breakdown
	// Intervals are the merged busy intervals over the device's span, in
	// time order, for timelines.
	Intervals []Interval
}

// Interval is a half-open time interval [Start, End) in ns.
type Interval struct{ Start, End int64 }

// Step holds one step's figures. Times are ns.
type Step struct {
	Name  string
	Num   int64
	Start int64
	// Dur is the step's pace: from its start to the next step's start;
	// for the last step, to the end of the last device work the steps
	// launched. Steps tile the window without overlap.
	Dur int64
	// DeviceBusy is busy time inside the step, averaged over devices.
	// DeviceBusy, the idle below and the idle below MinGap add up to Dur.
	DeviceBusy int64
	// Input is the input-pipeline time on the launching thread(s) and
	// Sync the time inside blocking calls, over the step's host span (see
	// Result.Loading); an instant two threads spend so counts once.
	Input   int64
	Sync    int64
	Idle    Breakdown
	Verdict Verdict
}

// Gap is one idle interval on one device.
type Gap struct {
	Device     string
	Start, Dur int64
	// Cause is the cause with the largest share of the gap.
	Cause Cause
	Split Breakdown
	// Thread is the display name of the waited-for host thread; Track
	// is its index in the trace (-1 when unknown).
	Thread string
	Track  int32
	// Step is the index in Result.Steps of the step holding the most of
	// the gap, -1 if none.
	Step int
	// Waits is what the stalled part of the gap waited on; nil when none
	// of it is stalled. Gaps share it.
	Waits *Waited
	// segLo and segHi bound the gap's segments in its result's encoding
	// (see Result.Segments).
	segLo, segHi int
}

// Waited is what a device with work queued waited on, as far as the trace
// shows it.
type Waited struct {
	// Kind is "graph" (a node of a replayed CUDA or HIP graph),
	// "collective" (the queued work is a collective, waiting on other
	// ranks), "event" (the launching thread made the stream wait on an
	// event just before the launch) or "unknown" (the trace shows none of
	// these).
	Kind string
	// Call names the evidence: the graph launch, the collective kernel,
	// the stream-wait call; empty for unknown.
	Call string
	// Stream is the device track of the queued work ("stream 7").
	Stream string
}

// Dependency is a dependency of stalled idle with its figures.
type Dependency struct {
	Waited
	// Idle is the stalled idle it explains (ns, averaged over devices);
	// Gaps counts the gaps.
	Idle int64
	Gaps int
}

// Finding is one conclusion and what to do about it.
type Finding struct {
	// ID is one of the finding ids (advice.FindForcedSync, ...).
	ID string
	// Severity is "high", "medium" or "info".
	Severity string
	Message  string
	Fix      string
	// Idle is the idle time the finding is about (ns, averaged over
	// devices); Share is Idle over the window.
	Idle  int64
	Share float64
	// Calls names the calls it is about: blocking calls, the loader, ops.
	Calls []string
	// Sites are their call sites, most idle first.
	Sites []CallSite
	// Settings are the settings the fix recommends.
	Settings []Setting
}
