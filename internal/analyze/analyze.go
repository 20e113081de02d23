package analyze

import (
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/tracegap/tracegap/trace"
)

// Validate reports the first option that cannot be used, with its value.
func (o Options) Validate() error {
	if o.MinGap < 0 {
		return fmt.Errorf("min gap %d ns: expected a duration of 0 or more", o.MinGap)
	}
	if o.SyncSlack < 0 {
		return fmt.Errorf("sync slack %d ns: expected a duration of 0 or more", o.SyncSlack)
	}
	for _, th := range []struct {
		name string
		v    float64
	}{{"sync", o.SyncThreshold}, {"input", o.InputThreshold}, {"host", o.HostThreshold}, {"stall", o.StallThreshold}} {
		if math.IsNaN(th.v) || th.v < 0 || th.v > 1 {
			return fmt.Errorf("%s threshold %v: expected a fraction from 0 to 1", th.name, th.v)
		}
	}
	if o.TopGaps < 0 {
		return fmt.Errorf("top gaps %d: expected 0 or more", o.TopGaps)
	}
	if o.StepRegex != "" {
		if _, err := regexp.Compile(o.StepRegex); err != nil {
			return fmt.Errorf("bad step pattern %q: %w", o.StepRegex, err)
		}
	}
	for _, p := range append(append([]string(nil), o.SyncPatterns...), o.InputPatterns...) {
		if _, err := regexp.Compile(p); err != nil {
			return fmt.Errorf("bad name pattern %q: %w", p, err)
		}
	}
	return nil
}

// analyzer holds the state of one analysis.
type analyzer struct {
	t     *trace.Trace
	opt   Options
	cls   *classifier
	links *links
	devs  []*device
	// threads holds per-thread facts, finished on first use (see
	// thread); scanned holds, by track, the host threads classified by
	// scanHost or unfinished, whose async copies are not yet sorted.
	threads map[int32]*thread
	scanned map[int32]*thread
	steps   []rawStep // steps found, warm-up included
	// markers are the steps as found, before tileSteps moves them (see
	// Analysis.StepMarkers).
	markers []StepMarker
	// hostSpans are the window's steps on the host's clock (see tileSteps).
	hostSpans []Interval
	// stepHint is the step of the last launch looked up.
	stepHint int
	// wholeStep is the step that holds all of the gap being attributed,
	// -1 when none does (see stepHolding).
	wholeStep int
	tally     tally
	// allSyncs and allRuntime are the host-wide stretches of blocking
	// calls and of runtime work (see hostSyncs, hostRuntime).
	allSyncs, allRuntime []hostStretch
	// syncsAt and runtimeAt look up allSyncs and allRuntime.
	syncsAt, runtimeAt stretchCursor
	// serial is afterSync's last answer; afterUntil the end of the
	// after-sync time of the call it last asked of.
	serial     serialAnswer
	afterUntil int64
	// loop is the thread a JAX program's loop runs on, -1 when the trace
	// is not JAX's or shows no dispatch (see findLoop); dispatches are its
	// dispatches by end (see dispatchBefore).
	loop       int32
	dispatches []Interval
	// flows are the host events that produce a flow, for following a
	// TPU program's run to its dispatch (see linkPrograms); guessed
	// counts the JAX device work given to a step by no link at all.
	flows      flowIndex
	guessed    int
	linkedRuns bool // some device's program runs consume flows
	// dispatchHint is dispatchAfter's last answer.
	dispatchHint int
	// lastTrack is trackOf's last answer.
	lastTrack trackRange
	// fallback is the thread waited for when no launch link says which.
	fallback      int32
	fallbackKnown bool
	// launchFacts tell slow launches (see warmup.go).
	launchFacts launchFacts
	// stall is what the gap being attributed waited on once its work was
	// queued (see stall.go).
	stall stallState
	// segs encodes the gaps' segments into the result.
	segs *segEncoder
	// sites sums the idle blamed on each call site as segments are made.
	sites *siteTally
	costs []int8      // see knownCostOf
	facts []nameFacts // see factsOf
	// stack and stackBuf are scratch for the stack of the waited-for
	// thread (see segments).
	stack    hostStack
	stackBuf []int32
	walk     stackWalk // where the walk of stack stands (see stackFrom)
	res      *Result
}

// Analyze finds the device gaps of t, attributes them to what the host was
// doing and reaches a verdict. A trace without device work is not an
// error: the result's verdict is NoDevice.
func Analyze(t *trace.Trace, opt Options) (*Result, error) {
	a, err := analyzeTrace(t, opt)
	if err != nil {
		return nil, err
	}
	return a.res, nil
}

// analyzeTrace runs the analysis of t and returns the analyzer, whose
// devices, threads and links the job analysis reads further.
func analyzeTrace(t *trace.Trace, opt Options) (*analyzer, error) {
	if t == nil {
		return nil, errors.New("analyze: nil trace")
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	cls, err := newClassifier(t, &opt)
	if err != nil {
		return nil, err
	}
	a := &analyzer{t: t, opt: opt, cls: cls, threads: map[int32]*thread{}, loop: -1, wholeStep: -1}
	a.res = &Result{
		Source: Source{
			Path: t.Path, Format: t.Format, Bytes: t.Bytes, Events: len(t.Events),
			Tracks: len(t.Tracks), Warnings: t.Warnings, Truncated: t.Truncated, Invalid: t.Invalid,
			ClockOffsetNs: t.StartNs,
		},
		Framework: detectFramework(t),
		Options:   opt,
	}
	a.res.Options.Admit = nil // the result outlives the budget it asked
	a.segs = newSegEncoder(&a.res.segs)
	a.sites = newSiteTally()
	a.segs.done = a.segmentDone
	if err := a.run(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *analyzer) run() error {
	a.devs = a.findDevices()
	if len(a.devs) == 0 {
		a.noDevice()
		return nil
	}
	pattern, err := a.stepPattern()
	if err != nil {
		return err
	}
	scan := a.scanHost(pattern)
	a.deepStacks(scan)
	steps, src := a.findSteps(scan)
	a.steps, a.markers = steps, markersOf(steps)
	a.links = newLinks(a.t, scan.launches)
	a.loop = a.findLoop(scan)
	a.res.LoopUntraced = a.loopUntraced()
	if a.loop >= 0 && len(a.steps) > 0 {
		// The flows say which step a program run belongs to: with no
		// steps there is nothing to follow them for.
		a.flows = producers(a.t, scan.flowOut)
	}
	for _, d := range a.devs {
		a.scanDevice(d)
	}
	a.setWindow(src)
	a.res.Window.TraceEnd = a.traceEnd(scan.end)
	if err := a.admitGaps(); err != nil {
		return err
	}
	for _, d := range a.devs {
		a.attributeDevice(d)
	}
	a.segs.close()
	a.tally.flush()
	a.summarize()
	a.res.Loader = a.findLoader()
	a.insights()
	a.gatherFacts(&a.res.Facts)
	return nil
}

// admitGaps asks Options.Admit for the memory of the gaps to attribute:
// at most the idle intervals of at least MinGap between a device's work,
// and one at each of its ends.
func (a *analyzer) admitGaps() error {
	if a.opt.Admit == nil {
		return nil
	}
	n := 0
	for _, d := range a.devs {
		n += len(d.bigIdle) + 2
	}
	return a.opt.Admit(n)
}

// noDevice sets the verdict of a trace without device activity, with the
// grounds of its reasons (advice writes them). A cut trace is graded low:
// Kineto writes device events after the host ones, so the cut may have
// taken all of them.
func (a *analyzer) noDevice() {
	r := a.res
	r.Verdict, r.Confidence = NoDevice, High
	g := &r.Facts.Grounds
	g.HostEvents, g.HostSteps, g.Truncated, g.Invalid = a.countHost(), a.hostOnlySteps(), a.t.Truncated, a.t.Invalid
	if g.Truncated || g.Invalid {
		r.Confidence = Low
	}
}

// traceEnd returns the end of the trace's last host or device event,
// given hostEnd, the host scan's.
func (a *analyzer) traceEnd(hostEnd int64) int64 {
	end := hostEnd
	for i := range a.t.Tracks {
		if k := a.t.Tracks[i].Kind; k == trace.TrackOther || k == trace.TrackHost {
			continue
		}
		evs := a.t.TrackEvents(i)
		for j := range evs {
			end = max(end, evs[j].End())
		}
	}
	return end
}

func (a *analyzer) countHost() int {
	n := 0
	for i := range a.t.Tracks {
		if a.t.Tracks[i].Kind == trace.TrackHost {
			n += a.t.Tracks[i].Hi - a.t.Tracks[i].Lo
		}
	}
	return n
}
