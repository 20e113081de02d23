package analyze

import (
	"iter"
	"math"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// This file is the seam between the analysis of one trace and analyses
// built on it, such as the job analysis (package analyze/job), which needs
// more of a trace's analysis than its Result: the device work it was made
// from, the step markers before the warm-up was dropped, and the rules
// that attribute idle time and decide a verdict, applied to figures it
// computes itself.

// Analysis is the analysis of one trace kept open after its Result is
// made, so that an analysis built on it can ask further questions in the
// analysis's own terms instead of redoing them. Devices are numbered as in
// Result.Devices. An Analysis is not safe for concurrent use.
type Analysis struct{ a *analyzer }

// New analyses t as Analyze does and keeps the analysis open.
func New(t *trace.Trace, opt Options) (*Analysis, error) {
	a, err := analyzeTrace(t, opt)
	if err != nil {
		return nil, err
	}
	return &Analysis{a}, nil
}

// Result returns the analysis's result. Callers must not modify it.
func (x *Analysis) Result() *Result { return x.a.res }

// StepMarker is a step as its marker shows it: the step number and the
// marker's span on the trace's timeline (ns). Result.Steps are the
// window's steps, stretched to the device work they launched; markers
// are every step, warm-up included, as they were marked.
type StepMarker struct {
	Num        int64
	Start, End int64
}

// StepMarkers returns every step marker in time order, warm-up included.
// An analysis that matches steps across traces needs the steps the window
// dropped too: one trace's warm-up may be another's first steady step.
func (x *Analysis) StepMarkers() []StepMarker {
	if x.a.markers == nil { // no device: the analysis stopped before its steps
		pattern, _ := x.a.stepPattern() // the only error is a bad step regex, which New refused
		steps, _ := x.a.findSteps(x.a.scanHost(pattern))
		x.a.markers = markersOf(steps)
	}
	return slices.Clone(x.a.markers)
}

// markersOf returns the markers of steps as found, before they are tiled.
func markersOf(steps []rawStep) []StepMarker {
	ms := make([]StepMarker, len(steps))
	for i, s := range steps {
		ms[i] = StepMarker{Num: s.num, Start: s.start, End: s.end}
	}
	return ms
}

// Work yields every piece of work of device dev (an index in
// Result.Devices), as its index in Trace.Events and the event, track by
// track and in time order within a track. It exists so that what counts as
// a device's work is defined once.
func (x *Analysis) Work(dev int) iter.Seq2[int, *trace.Event] {
	t := x.a.t
	return func(yield func(int, *trace.Event) bool) {
		for _, tr := range x.a.devs[dev].tracks {
			for i := t.Tracks[tr].Lo; i < t.Tracks[tr].Hi; i++ {
				if e := &t.Events[i]; e.Kind == trace.KindWork && e.Dur() > 0 && !yield(i, e) {
					return
				}
			}
		}
	}
}

// Launch returns the start of the host call that launched work, as the
// analysis links them (by correlation id); ok is false when no launch is
// linked.
func (x *Analysis) Launch(work *trace.Event) (start int64, ok bool) {
	if x.a.links == nil {
		return 0, false
	}
	h := x.a.links.host(work.Corr)
	if h < 0 {
		return 0, false
	}
	return x.a.t.Events[h].Start, true
}

// ExplainIdle attributes every idle instant of device dev inside iv, gaps
// shorter than MinGap included, as the analysis attributes a gap, and
// returns the split by cause and the idle total. An analysis that counts
// more time as idle (a wait in a collective) explains it with this.
func (x *Analysis) ExplainIdle(dev int, iv Interval) (split Breakdown, idle int64) {
	a, d := x.a, x.a.devs[dev]
	i := d.firstEndingAfter(iv.Start)
	for cur := iv.Start; cur < iv.End; {
		if i < len(d.busy) && d.busy[i].Start <= cur {
			cur = max(cur, d.busy[i].End)
			i++
			continue
		}
		full := Interval{math.MinInt64, math.MaxInt64}
		if i > 0 {
			full.Start = d.busy[i-1].End
		}
		if i < len(d.busy) {
			full.End = d.busy[i].Start
		}
		piece := Interval{cur, min(iv.End, full.End)}
		b := a.explainPiece(d, full, piece)
		for c := InSync; c < NumCauses; c++ {
			split.Add(c, b.Of(c))
		}
		idle += piece.End - piece.Start
		cur = piece.End
	}
	return split, idle
}

// explainPiece splits the idle stretch piece of the idle interval full by
// what the waited-for thread did, as a gap's segments are found.
func (a *analyzer) explainPiece(d *device, full, piece Interval) Breakdown {
	g := Gap{Device: d.id, Start: piece.Start, Dur: piece.End - piece.Start, Step: -1}
	track, linked := a.waitedFor(d, full)
	if track < 0 {
		var b Breakdown
		b.Add(Untraced, g.Dur)
		return b
	}
	g.Track = track
	a.segments(d, &g, full, linked)
	return g.Split
}

// Rule is the verdict rule as one analysis applies it: its thresholds and
// whether its loader runs in background workers. It is plain data, so
// that figures computed outside this package, from the analysis or from a
// summary of it kept after the trace is gone (a job's, with collective
// waits counted as idle), are judged by the same rule.
type Rule struct {
	Options            Options
	LoaderInBackground bool
}

// Rule returns the analysis's verdict rule.
func (x *Analysis) Rule() Rule {
	return Rule{Options: x.a.opt, LoaderInBackground: x.a.loaderInBackground()}
}

// Decide applies the rule to idle time split by cause over a window of
// length dur in which the launching threads spent input in the input
// pipeline and the devices were busy for busy (averaged over devices). It
// returns the verdict, the secondary verdicts and what decided, with the
// deciding figures (advice.DecisionSentence writes it).
func (r *Rule) Decide(idle *Breakdown, dur, input, busy int64) (Verdict, []Verdict, Decision) {
	return decide(&r.Options, r.LoaderInBackground, idle, dur, input, busy)
}

// Covered returns how much of w the intervals cover; busy must be sorted
// and disjoint, as Device.Intervals are.
func Covered(busy []Interval, w Interval) int64 {
	return (&device{busy: busy}).busyIn(w)
}

// TopGaps returns the indexes of the k longest gaps, longest first, as
// Result.TopGaps holds them.
func TopGaps(gaps []Gap, k int) []int { return topGaps(gaps, k) }
