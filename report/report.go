// Package report holds the types of tracegap's JSON reports: the report of
// one run (schema tracegap/report/v1, documented field by field in
// docs/report-v1.md) and the report of a multi-rank job. A program that
// reads `tracegap analyze --format json` decodes into Report or JobReport;
// tracegap itself fills them in.
package report

// Schema identifies the JSON report's version. Fields are only ever added
// within a version; a change of meaning or a removal makes a new version.
const Schema = "tracegap/report/v1"

// Report is the JSON report, schema tracegap/report/v1, documented field by
// field in docs/report-v1.md. Times are integer nanoseconds relative to the
// trace's start; shares are fractions from 0 to 1 rounded to 4 decimals.
// Lists are never null. Most parts carry a V1 suffix: they are the wire
// form of version 1.
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

// DependencyV1 is one dependency of stalled idle.
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
	// Framework is the ML framework that recorded the trace; "" when the
	// trace does not say.
	Framework string   `json:"framework"`
	Bytes     int64    `json:"bytes"`
	Events    int      `json:"events"`
	Tracks    int      `json:"tracks"`
	Warnings  []string `json:"warnings"`
	Truncated bool     `json:"truncated"`
	// Invalid: the input held invalid data part-way, and only the part
	// before it was analysed (left out when false).
	Invalid bool `json:"invalid,omitempty"`
	// ClockOffsetNs is the time on the trace's own clock of the report's
	// time 0.
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
// cause (see CauseKeys), written by MarshalJSON.
type BreakdownV1 struct {
	// Ns and Share are indexed by cause, in the order of CauseKeys.
	Ns               [NumCauses]int64
	Share            [NumCauses]float64
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

// WaitedV1 is what stalled idle waited on.
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

// Figures are the run's headline figures in the JSON report.
type Figures struct {
	// StepNs is the step time; 0 without steps.
	StepNs int64 `json:"step_ns"`
	// BusyPerStepNs is the device busy time of a typical step, averaged
	// over devices; 0 without steps.
	BusyPerStepNs int64 `json:"busy_per_step_ns"`
	// WindowBusyNs is the devices' busy time in the window, averaged over
	// devices.
	WindowBusyNs int64 `json:"window_busy_ns"`
	// WindowUtilization is WindowBusyNs over the window, rounded to 4
	// decimals.
	WindowUtilization float64 `json:"window_utilization"`
	// AttributedIdleShare is the idle in gaps of at least the minimum gap
	// over the window: what check's max-idle and compare's idle share
	// hold.
	AttributedIdleShare float64 `json:"attributed_idle_share"`
	// WindowGaps counts the gaps of at least the minimum gap in the
	// window, over every device.
	WindowGaps int `json:"window_gaps"`
}

// CallSiteV1 is a call with the user-code line it came from.
type CallSiteV1 struct {
	// File, Line and Function name the innermost user-code frame; empty
	// and 0 when the trace has no Python stacks.
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function string `json:"function"`
	Call     string `json:"call"`
	// Via is the library frame the user's line called through ("file:line
	// function"), absent when there is none to name.
	Via string `json:"via,omitempty"`
	// Cause is "sync" (in-sync and after-sync), "input", "host" or
	// "runtime".
	Cause  string  `json:"cause"`
	Count  int     `json:"count"`
	IdleNs int64   `json:"idle_ns"`
	Share  float64 `json:"share"`
	// Program is, for a sync site with no user-code frame, the program
	// the device waited on and where its code is; absent otherwise.
	// Added in v1 without breaking it.
	Program *ProgramV1 `json:"program,omitempty"`
}

// ProgramV1 is a compiled program (an XLA module) and the line of the
// user's code most of its ops come from, as the trace's HLO metadata
// records them: where the program's code is, not the call that waited.
type ProgramV1 struct {
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line"`
	Op   string `json:"op"`
}

// OpV1 is a row of the per-op host table.
type OpV1 struct {
	Name            string  `json:"name"`
	Calls           int     `json:"calls"`
	HostNs          int64   `json:"host_ns"`
	NsPerCall       int64   `json:"ns_per_call"`
	Launches        int     `json:"launches"`
	LaunchesPerCall float64 `json:"launches_per_call"`
	IdleNs          int64   `json:"idle_ns"`
	Share           float64 `json:"share"`
	// Site is the user-code line the op is mostly called from ("" when
	// unknown); Fix and Setting are a known cost's own.
	Site    string     `json:"site"`
	Fix     string     `json:"fix"`
	Setting *SettingV1 `json:"setting"`
}

// CopyV1 sums the window's copies of one kind.
type CopyV1 struct {
	Direction     string  `json:"direction"`
	Memory        string  `json:"memory"`
	Count         int     `json:"count"`
	Bytes         int64   `json:"bytes"`
	DeviceNs      int64   `json:"device_ns"`
	Blocking      bool    `json:"blocking"`
	HostBlockedNs int64   `json:"host_blocked_ns"`
	IdleNs        int64   `json:"idle_ns"`
	Share         float64 `json:"share"`
	// Top is the copy size that blocked the host longest; null when none
	// blocks.
	Top *CopySizeV1 `json:"top"`
}

// CopySizeV1 is the copies of one kind and size.
type CopySizeV1 struct {
	Bytes         int64  `json:"bytes"`
	Count         int    `json:"count"`
	HostBlockedNs int64  `json:"host_blocked_ns"`
	IdleNs        int64  `json:"idle_ns"`
	Call          string `json:"call"`
	Site          string `json:"site"`
}

// SettingV1 is a recommended setting.
type SettingV1 struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// StabilityV1 is the step-time distribution in the JSON report; times are
// ns.
type StabilityV1 struct {
	Label    string  `json:"label"`
	Steps    int     `json:"steps"`
	MedianNs int64   `json:"median_ns"`
	P90Ns    int64   `json:"p90_ns"`
	MaxNs    int64   `json:"max_ns"`
	Spread   float64 `json:"spread"`
	// SlowSteps are the indexes in steps of the steps over 1.5x the
	// median.
	SlowSteps []int        `json:"slow_steps"`
	Artefacts []ArtefactV1 `json:"artefacts"`
	// ErraticLoader is the erratic-loader signature; absent without it.
	ErraticLoader *ErraticLoaderV1 `json:"erratic_loader,omitempty"`
}

// ArtefactV1 is a step left out of the distribution: its index in steps,
// -1 for the warm-up step the window left out.
type ArtefactV1 struct {
	Step int    `json:"step"`
	Why  string `json:"why"`
}

// ErraticLoaderV1 is the signature of an erratic loader: long steps that
// come every Period steps.
type ErraticLoaderV1 struct {
	Period    int   `json:"period"`
	Waiting   int   `json:"waiting"`
	WaitNs    int64 `json:"wait_ns"`
	BatchNs   int64 `json:"batch_ns"`
	ComputeNs int64 `json:"compute_ns"`
}

// LoaderV1 is what the trace says of the loader's workers, with the
// estimate of the workers that would keep up (0 when none is made).
type LoaderV1 struct {
	Known      bool   `json:"known"`
	Workers    int    `json:"workers"`
	From       string `json:"from"`
	PerBatchNs int64  `json:"per_batch_ns"`
	Background bool   `json:"background"`
	Estimate   int    `json:"estimate"`
	Derivation string `json:"derivation"`
}
