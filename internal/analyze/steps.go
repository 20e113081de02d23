package analyze

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/trace"
)

// rawStep is a step as its marker shows it, before the window is set.
type rawStep struct {
	name       string
	num        int64
	start, end int64
	// workStart and workEnd are the start of the first and the end of
	// the last device work launched from inside the step (-1 when none is
	// known).
	workStart, workEnd int64
}

// findSteps returns the steps of the trace in time order and says how they
// were found, from the candidates of the host scan. Explicit markers win: a
// user regex, then events flagged as steps (host ones first, device
// mirrors and XPlane Steps lines when no host marker exists), then
// train-like step names.
func (a *analyzer) findSteps(scan *hostScan) ([]rawStep, string) {
	if a.opt.StepRegex != "" {
		return dedupeSteps(scan.named), "regex"
	}
	if s := dedupeSteps(scan.flagged); len(s) > 0 {
		if strings.HasPrefix(s[0].name, "ProfilerStep") {
			return s, "ProfilerStep"
		}
		return s, "step markers"
	}
	if s := a.flaggedSteps(); len(s) > 0 {
		return s, "device step markers"
	}
	return dedupeSteps(scan.named), "step names"
}

// stepPattern returns the pattern step names match: the user's, else the
// default one.
func (a *analyzer) stepPattern() (*regexp.Regexp, error) {
	if a.opt.StepRegex == "" {
		return defaultStepRegexp(), nil
	}
	return regexp.Compile(a.opt.StepRegex)
}

// flaggedSteps collects the events with FlagStep on tracks other than the
// host's: the host's are in the host scan.
func (a *analyzer) flaggedSteps() []rawStep {
	var steps []rawStep
	for i := range a.t.Tracks {
		tr := &a.t.Tracks[i]
		if tr.Kind == trace.TrackHost {
			continue
		}
		for j := tr.Lo; j < tr.Hi; j++ {
			if e := &a.t.Events[j]; e.Has(trace.FlagStep) && e.Dur() > 0 {
				steps = append(steps, a.rawStep(e))
			}
		}
	}
	return dedupeSteps(steps)
}

func (a *analyzer) rawStep(e *trace.Event) rawStep {
	name := a.t.Str(e.Name)
	return rawStep{name: name, num: trailingNumber(name), start: e.Start, end: e.End(), workStart: -1, workEnd: -1}
}

// trailingNumber returns the number a name ends with, or -1.
func trailingNumber(s string) int64 {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.ParseInt(s[i:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// dedupeSteps merges markers of the same numbered step (an XPlane Steps line
// per device, a host annotation and its mirror), drops markers that enclose
// other markers (a "train" loop around "train_step"s) and numbers unnumbered
// steps by position.
func dedupeSteps(steps []rawStep) []rawStep {
	if len(steps) == 0 {
		return nil
	}
	slices.SortFunc(steps, func(x, y rawStep) int {
		if c := cmp.Compare(x.num, y.num); c != 0 {
			return c
		}
		if c := cmp.Compare(x.start, y.start); c != 0 {
			return c
		}
		return cmp.Compare(y.end, x.end)
	})
	out := steps[:0]
	for _, s := range steps {
		if n := len(out); n > 0 && s.num >= 0 && out[n-1].num == s.num {
			out[n-1].start = min(out[n-1].start, s.start)
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y rawStep) int {
		if c := cmp.Compare(x.start, y.start); c != 0 {
			return c
		}
		return cmp.Compare(y.end, x.end)
	})
	kept := out[:0]
	for i, s := range out {
		if i+1 < len(out) && out[i+1].start < s.end && out[i+1].end <= s.end {
			continue // s encloses the next marker: keep the inner ones
		}
		kept = append(kept, s)
	}
	for i := range kept {
		if kept[i].num < 0 {
			kept[i].num = int64(i)
		}
	}
	return kept
}

// stepLaunched records that work from start to end was launched at host
// time launch, by the step that holds the launch.
func (a *analyzer) stepLaunched(launch, start, end int64) {
	i := a.stepHint
	if i < 0 || i >= len(a.steps) || launch < a.steps[i].start || (i+1 < len(a.steps) && launch >= a.steps[i+1].start) {
		i = a.stepAt(launch)
		a.stepHint = i
	}
	if i < 0 || launch >= a.steps[i].end {
		return
	}
	s := &a.steps[i]
	s.workEnd = max(s.workEnd, end)
	if s.workStart < 0 || start < s.workStart {
		s.workStart = start
	}
}

// stepAt returns the index of the last raw step starting at or before t, or
// -1.
func (a *analyzer) stepAt(t int64) int {
	i, _ := slices.BinarySearchFunc(a.steps, t, func(s rawStep, t int64) int {
		if s.start <= t {
			return -1
		}
		return 1
	})
	return i - 1
}

// tileSteps makes the steps tile time without overlap, and records each
// step's host span. A step starts when the device finishes the work the
// step before launched (prevWork; -1 when unknown) or, if later, when its
// host starts it: the step then holds the device's wait for the step's
// host work and the step's own device work, and the steps' lengths are the
// pace the device runs at, also when the host runs ahead of it. Where
// XProf's flows tie program runs to steps (TPU), the first step starts no
// later than its own first work: of several chips, one may finish the
// warm-up's programs and start the first step's before the others finish
// theirs. A step ends where the next one starts; the last one at the end
// of the last device work the steps launched, or at its host end when no
// launch is known. The profiler-stop tail after that work is outside the
// last step: counting it as idle would blame the host for the profiler
// stopping.
//
// The host span of a step runs from its host start to the next step's host
// start, the last step's to its marker's end: the host figures of a step
// (loading, syncs) are over it. The host spans tile the host's steps as
// the rows tile the device's, at the same pace in a steady state. What the
// host does after the last marker (a final synchronize, stopping the
// profiler) is in no step, as the profiler-stop tail on the device is not:
// the host, ahead of the device, would wait there for the device to drain
// and the last step's sync would count that wait, longer than the step.
func (a *analyzer) tileSteps(prevWork int64) {
	n := len(a.steps)
	a.hostSpans = make([]Interval, n)
	lastWork := int64(-1)
	if first := a.steps[0].workStart; first >= 0 && a.linkedRuns {
		// A TPU that finished the warm-up's programs early starts the
		// first step's before the others have: the window holds all of
		// the first step's runs, which the flows name exactly.
		prevWork = min(prevWork, first)
	}
	for i := range a.steps {
		s := &a.steps[i]
		a.hostSpans[i].Start = s.start
		if i+1 < n {
			a.hostSpans[i].End = a.steps[i+1].start
		}
		s.start = max(s.start, prevWork)
		if i > 0 {
			s.start = max(s.start, a.steps[i-1].start)
		}
		prevWork = s.workEnd
		lastWork = max(lastWork, s.workEnd)
	}
	hostEnd := a.steps[n-1].end // the last step's marker, before tiling
	for i := range a.steps {
		s := &a.steps[i]
		switch {
		case i+1 < n:
			s.end = a.steps[i+1].start
		case s.workEnd >= 0:
			// The last step ends with the last work the steps launched.
			s.end = lastWork
		default:
			// It launched nothing: its marker ends it, or the work the
			// steps before it launched, if that runs longer.
			s.end = max(hostEnd, lastWork)
		}
		s.end = max(s.end, s.start)
	}
	a.hostSpans[n-1].End = hostEnd
}

// setWindow sets the window to the steady-state steps (the first dropped as
// warm-up when more than 3 exist) or, without steps, to the devices' span.
func (a *analyzer) setWindow(src string) {
	w := &a.res.Window
	if len(a.steps) == 0 {
		sp := a.devs[0].span()
		for _, d := range a.devs[1:] {
			ds := d.span()
			sp.Start, sp.End = min(sp.Start, ds.Start), max(sp.End, ds.End)
		}
		w.Start, w.End = sp.Start, sp.End
		return
	}
	prevWork := int64(-1)
	if len(a.steps) > 3 {
		prevWork = a.steps[0].workEnd
		a.steps = a.steps[1:]
		w.WarmupDropped = true
	}
	a.tileSteps(prevWork)
	w.StepSource = src
	w.Steps = len(a.steps)
	w.Start, w.End = a.steps[0].start, a.steps[len(a.steps)-1].end
	a.res.Steps = make([]Step, len(a.steps))
	for i, s := range a.steps {
		a.res.Steps[i] = Step{Name: s.name, Num: s.num, Start: s.start, Dur: s.end - s.start}
	}
}
