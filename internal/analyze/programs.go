package analyze

import (
	"cmp"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// JAX on TPU records no launch: the device runs programs, each an event on
// its plane's "XLA Modules" line, and XProf links each run back to the host
// with flows (producer/consumer stats, trace.FlagFlowIn and FlagFlowOut):
// the run consumes the flow a host DoEnqueueProgram produced; that call sits
// inside an event on a queue thread that consumes the flow the execute
// thread produced, inside its scheduled call, which consumes the flow of the
// loop thread's Execute. Following the flows up, event by event and from
// each event to the one enclosing it that consumes a flow, reaches the
// dispatch that queued the run, whatever the number of calls queued ahead
// of it. A device's work belongs to the run that holds its start.

// programRun is one run of a program on a device and the host event at
// the top of its flows (-1 when they reach no host event in the trace).
type programRun struct {
	start, end int64
	top        int32
}

// maxFlowHops bounds the walk up a run's flows, which a hostile trace
// could make cyclic or long; real ones take three hops.
const maxFlowHops = 32

// flowIndex finds the host event that produces a flow by the flow's key:
// an open-addressing table, keys (never 0) and events side by side. A TPU
// capture has a producer every few events and their keys are random:
// sorting them to search cost a tenth of the analysis of a tiled capture,
// where building this table costs a pass and a lookup one probe or two.
type flowIndex struct {
	slots []flowSlot
	mask  uint32
	shift uint32 // 32 less the table's bits: home slots by multiplication
}

type flowSlot struct {
	key uint32
	ev  int32
}

// producers indexes the producers evs of t's flows (host events, in
// index order), the first for each key.
func producers(t *trace.Trace, evs []int32) flowIndex {
	if len(evs) == 0 {
		return flowIndex{}
	}
	size, bits := uint32(1), uint32(0)
	for size < uint32(2*len(evs)) {
		size, bits = size<<1, bits+1
	}
	x := flowIndex{slots: make([]flowSlot, size), mask: size - 1, shift: 32 - bits}
	for _, i := range evs {
		x.put(t.Events[i].Corr, i)
	}
	return x
}

// put adds the producer ev of key unless the key has one.
func (x *flowIndex) put(key uint32, ev int32) {
	for i := x.home(key); ; i = (i + 1) & x.mask {
		switch x.slots[i].key {
		case 0:
			x.slots[i] = flowSlot{key, ev}
			return
		case key:
			return
		}
	}
}

// home returns key's first slot: the top bits of key times a large odd
// number (Fibonacci hashing), so that keys that differ in high bits alone
// spread over the table.
func (x *flowIndex) home(key uint32) uint32 { return key * 0x9e3779b1 >> x.shift & x.mask }

// producer returns the host event producing the flow corr, or -1.
func (a *analyzer) producer(corr uint32) int32 {
	x := &a.flows
	if x.slots == nil {
		return -1
	}
	for i := x.home(corr); ; i = (i + 1) & x.mask {
		switch x.slots[i].key {
		case 0:
			return -1
		case corr:
			return x.slots[i].ev
		}
	}
}

// linkPrograms finds the runs of programs on d's plane and follows each to
// the host; it returns nil when the plane has no run that consumes a flow.
func (a *analyzer) linkPrograms(d *device) []programRun {
	var runs []programRun
	linked := false
	for i := range a.t.Tracks {
		tr := &a.t.Tracks[i]
		if tr.Kind != trace.TrackDevice || tr.Device != d.id || tr.Thread != programsLine {
			continue
		}
		for j := tr.Lo; j < tr.Hi; j++ {
			e := &a.t.Events[j]
			if e.Dur() <= 0 {
				continue
			}
			top := int32(-1)
			if e.Has(trace.FlagFlowIn) {
				linked = true
				top = a.flowTop(e.Corr)
			}
			runs = append(runs, programRun{e.Start, e.End(), top})
		}
	}
	if !linked {
		return nil
	}
	a.linkedRuns = true
	slices.SortFunc(runs, func(x, y programRun) int { return cmp.Compare(x.start, y.start) })
	return runs
}

// programsLine is the device line of program runs in XPlane.
const programsLine = "XLA Modules"

// flowTop follows the flow corr up to the host event that started it: the
// producer, then from the innermost event enclosing it (itself included)
// that consumes a flow to that flow's producer, until the loop thread or
// an event that consumes nothing. It returns -1 when a flow's producer is
// not in the trace (the work was queued before the capture began).
func (a *analyzer) flowTop(corr uint32) int32 {
	ev := a.producer(corr)
	for hop := 0; ev >= 0 && hop < maxFlowHops; hop++ {
		tr := a.trackOf(ev)
		if tr == a.loop {
			return ev
		}
		c := a.consumerAround(tr, ev)
		if c < 0 {
			return ev
		}
		ev = a.producer(a.t.Events[c].Corr)
	}
	return ev
}

// consumerAround returns the innermost event of track tr enclosing host
// event ev, ev itself included, that consumes a flow; -1 when none does.
func (a *analyzer) consumerAround(tr, ev int32) int32 {
	th := a.unfinished(tr)
	lo := int32(a.t.Tracks[tr].Lo)
	for j, n := ev-lo, 0; j >= 0 && n < maxFlowHops*8; j, n = th.parent.of(j), n+1 {
		if th.evs[j].Has(trace.FlagFlowIn) {
			return lo + j
		}
	}
	return -1
}

// runDispatch returns the host time of the dispatch that queued work
// starting at start on a device whose program runs are runs: that of the
// run holding the start. ok is false when no run holds it, and known is
// false when the run's flows reach no host event. A device's work is
// asked in start order: the search goes on from the last answer (hint).
func (a *analyzer) runDispatch(runs []programRun, hint *int, start int64) (launch int64, known, ok bool) {
	i := *hint // the first run starting after start, as far as known
	if i > len(runs) || i > 0 && runs[i-1].start > start {
		i = 0
	}
	for i < len(runs) && runs[i].start <= start {
		i++
	}
	*hint = i
	if i == 0 || runs[i-1].end <= start {
		return 0, false, false
	}
	top := runs[i-1].top
	if top < 0 {
		return 0, false, true
	}
	if a.trackOf(top) == a.loop {
		return a.t.Events[top].Start, true, true
	}
	launch, known = a.dispatchOf(top, 0)
	return launch, known, true
}

// jaxWork gives JAX device work e, launched by host event h (-1 for none),
// to the step of the dispatch that queued it, not of its launch on another
// thread: through its program run's flows where the device has them (TPU),
// else through its launch (GPU), else to the last dispatch that returned
// before the work started (a guess, counted in a.guessed).
func (a *analyzer) jaxWork(runs []programRun, hint *int, h int32, e *trace.Event) {
	if h < 0 && runs != nil {
		if launch, known, ok := a.runDispatch(runs, hint, e.Start); ok {
			if known {
				a.stepLaunched(launch, e.Start, e.End())
			}
			return
		}
	}
	if h < 0 {
		a.guessed++
	}
	if t, ok := a.dispatchOf(h, e.Start); ok {
		a.stepLaunched(t, e.Start, e.End())
	}
}
