package analyze

import (
	"strings"

	"github.com/tracegap/tracegap/trace"
)

// This file is the seam between attribution and advice: the figures of an
// analysis that its findings and reasons are written from (package
// advice), as plain data on the Result, so that advice reads no trace and
// no analyzer state and this package writes no finding and no reason.

// Facts are what the analysis found beyond the Result's figures that the
// findings name: the work each cause's idle was spent in, the threads
// that did it, and what the trace shows around it. Names are the trace's
// own, untrusted.
type Facts struct {
	// DeviceKind is the kind all devices share ("GPU", "TPU", ...), ""
	// when they are of several kinds.
	DeviceKind string
	// Causes are the idle of each cause by name and thread (Cause
	// indexes it); Sync is InSync and AfterSync together.
	Causes [NumCauses]CauseFacts
	Sync   CauseFacts
	// SyncCalls counts the blocking calls Sync.Thread started in the
	// window, on the host's clock.
	SyncCalls int
	// InputName is the input event the idle was spent in most, or the
	// one the launching threads spent most time in; "" without one.
	InputName string
	// InputThread is the thread the devices waited on for input: the one
	// with most input idle, else the one with most sync idle.
	InputThread Thread
	// Loop is a JAX program's loop thread (Track -1 when none).
	Loop Thread
	// HasFrames is set when some name of the trace is a Python frame;
	// GraphLaunches when the trace launches captured graphs.
	HasFrames, GraphLaunches bool
	// Elsewhere is, for InSync and Untraced, the work of another host
	// thread during the longest gap of that cause (nil when none covered
	// half of it).
	Elsewhere [NumCauses]*Elsewhere
	// Untraced is the longest untraced stretch of a gap, nil when none.
	Untraced *Stretch
	// BeforeDispatch is the untraced idle between a step's start and its
	// first dispatch on an untraced loop thread (ns, averaged over
	// devices).
	BeforeDispatch int64
	// Decision is what decided the verdict and Grounds why its
	// confidence is not high: advice writes them as the reasons.
	Decision Decision
	Grounds  Grounds
	// UserFrames is set when the call sites name frames of the user's
	// code; CallFrames when the trace has Python frames around the calls
	// (all in library code when UserFrames is not set).
	UserFrames, CallFrames bool
}

// CauseFacts is the idle of one cause by name and by thread.
type CauseFacts struct {
	// Top are the names with most idle, most first (ties by name), at
	// most MaxTopNames; Idle is summed over devices.
	Top []NamedIdle
	// Thread is the thread with most idle of the cause (Track -1 when
	// none).
	Thread Thread
	// Named is the idle with a name, All the idle on any thread.
	Named, All int64
}

// MaxTopNames bounds CauseFacts.Top.
const MaxTopNames = 3

// NamedIdle is idle blamed on an event name.
type NamedIdle struct {
	Name string
	Idle int64
}

// Thread is a host thread: its track and name; Track is -1 for none.
type Thread struct {
	Track int32
	Name  string
}

// Elsewhere is the work of another host thread during the longest gap of
// a cause: the gap, the thread, its event and how much of the gap it
// covered.
type Elsewhere struct {
	GapDur  int64
	Device  string
	Thread  string
	Work    string
	Overlap int64
}

// Stretch is the longest untraced stretch of a gap, with the events of
// its thread around it: Before returned before it, After began after it
// (HasBefore, HasAfter: whether there is one).
type Stretch struct {
	Dur, GapDur         int64
	Device              string
	Before, After       string
	HasBefore, HasAfter bool
}

// Names returns the names of Top, at most k.
func (c *CauseFacts) Names(k int) []string {
	out := make([]string, 0, min(k, len(c.Top)))
	for _, n := range c.Top[:min(k, len(c.Top))] {
		out = append(out, n.Name)
	}
	return out
}

// gatherFacts fills f with the Facts of the finished attribution, beyond
// those the call sites gave (insights).
func (a *analyzer) gatherFacts(f *Facts) {
	f.DeviceKind, f.Loop = a.deviceKind(), a.threadOf(a.loop)
	for c := range NumCauses {
		f.Causes[c] = a.causeFacts(a.tally.names[c], a.tally.threads[c])
	}
	f.Sync = a.causeFacts(merge(a.tally.names[InSync], a.tally.names[AfterSync]), merge(a.tally.threads[InSync], a.tally.threads[AfterSync]))
	_, f.SyncCalls = a.syncCallsInWindow()
	if names := a.inputNames(); len(names) > 0 {
		f.InputName = names[0]
	}
	thr := topThread(a.tally.threads[Input])
	if thr < 0 {
		thr = f.Sync.Thread.Track
	}
	f.InputThread = a.threadOf(thr)
	f.HasFrames, f.GraphLaunches = a.hasFrames(), a.graphLaunches()
	for _, c := range []Cause{InSync, Untraced} {
		if w, ok := a.workElsewhere(c); ok {
			f.Elsewhere[c] = &Elsewhere{GapDur: w.gap.Dur, Device: w.gap.Device, Thread: a.threadName(w.track), Work: a.t.Str(w.name), Overlap: w.overlap}
		}
	}
	f.Untraced = a.untracedStretch()
	f.BeforeDispatch = a.untracedBeforeDispatch()
}

// causeFacts sums one cause's tally.
func (a *analyzer) causeFacts(names map[trace.StrID]int64, threads map[int32]int64) CauseFacts {
	c := CauseFacts{Thread: a.threadOf(topThread(threads))}
	for _, id := range a.topIDs(names, MaxTopNames) {
		c.Top = append(c.Top, NamedIdle{a.t.Str(id), names[id]})
	}
	for _, v := range names {
		c.Named += v
	}
	for _, v := range threads {
		c.All += v
	}
	return c
}

// threadOf returns thread tr, Track -1 for none.
func (a *analyzer) threadOf(tr int32) Thread {
	if tr < 0 || int(tr) >= len(a.t.Tracks) {
		return Thread{Track: -1}
	}
	return Thread{Track: tr, Name: a.t.Tracks[tr].Name}
}

// deviceKind returns the kind all devices share, "" when several.
func (a *analyzer) deviceKind() string {
	word := ""
	for _, d := range a.devs {
		kind, _, _ := strings.Cut(d.id, ":")
		if word != "" && kind != word {
			return ""
		}
		word = kind
	}
	return word
}

// graphLaunches reports whether the trace launches captured graphs.
func (a *analyzer) graphLaunches() bool {
	m := newMatcher(graphLaunchPattern())
	for _, s := range a.t.Strings {
		if m.match(s) {
			return true
		}
	}
	return false
}

// inputNames returns the input event the idle was spent in most, or else,
// when syncs took that idle (a loader run after print(loss)), the input
// event the launching threads spent most time in; at most one name.
func (a *analyzer) inputNames() []string {
	if names := a.top(a.tally.names[Input], 1); len(names) > 0 {
		return names
	}
	m := map[trace.StrID]int64{}
	for _, tr := range a.launchingThreads() {
		th := a.thread(tr)
		for i := range th.evs {
			if e := &th.evs[i]; a.cls.of(e.Name) == classInput {
				m[e.Name] += e.Dur()
			}
		}
	}
	return a.top(m, 1)
}

// hasFrames reports whether any name of the trace is a Python frame.
func (a *analyzer) hasFrames() bool {
	for id := range a.t.Strings {
		if a.factsOf(trace.StrID(id))&factFrame != 0 {
			return true
		}
	}
	return false
}
