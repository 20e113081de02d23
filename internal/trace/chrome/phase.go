package chrome

import (
	"bytes"
	"fmt"

	"github.com/tracegap/tracegap/trace"
)

// keep files the event just read by its phase, then holds what the
// trace has grown to against the limits that bound no single event: the
// threads seen (each costs memory even without events) and the builder's
// tracks and names.
func (p *parser) keep() error {
	if err := p.file(); err != nil {
		return err
	}
	if len(p.info) > p.opt.MaxTracks || len(p.procNames) > p.opt.MaxTracks {
		return &fatalError{trace.Limitf("more than %d threads at byte %d (raise --max-tracks if the trace is genuine)", p.opt.MaxTracks, p.offset())}
	}
	if err := p.b.Err(); err != nil {
		return &fatalError{fmt.Errorf("%w at byte %d", err, p.offset())}
	}
	return nil
}

// file files the event just read by its phase.
func (p *parser) file() error {
	e := &p.ev
	if e.bad != "" {
		p.drop(e.bad)
		return nil
	}
	switch e.ph {
	case 'X':
		return p.complete()
	case 'B':
		return p.begin()
	case 'E':
		return p.end()
	case 'i', 'I':
		if !e.hasTs {
			p.drop("missing ts")
			return nil
		}
		e.flags |= trace.FlagInstant
		return p.add(e.ts, 0, e.name, e.cat, e.corr, e.flags)
	case 's', 'f':
		return p.flow()
	case 't': // a flow step carries nothing the analysis uses
	case 'M':
		p.metadata()
	case 'C':
		p.drop("counter events (ph C) are not used")
	case 0:
		p.drop("missing ph")
	default:
		p.drop(p.phaseReason(e.ph))
	}
	return nil
}

// phaseReason returns the drop reason for an unsupported phase, made once
// per phase: a trace may hold millions of async (b/e) events.
func (p *parser) phaseReason(ph byte) string {
	if p.phaseReasons[ph] == "" {
		p.phaseReasons[ph] = fmt.Sprintf("unsupported phase %q", rune(ph))
	}
	return p.phaseReasons[ph]
}

func (p *parser) complete() error {
	e := &p.ev
	switch {
	case !e.hasTs:
		p.drop("missing ts")
		return nil
	case e.dur < 0:
		p.drop("negative dur")
		return nil
	}
	return p.add(e.ts, e.dur, e.name, e.cat, e.corr, e.flags)
}

func (p *parser) begin() error {
	e := &p.ev
	if !e.hasTs {
		p.drop("missing ts")
		return nil
	}
	// Open slices are events to be: they count against the event cap.
	if p.b.NumEvents()+p.pending >= p.opt.MaxEvents {
		return p.tooMany()
	}
	s := &p.info[p.slot()]
	s.open = append(s.open, openSlice{name: e.name, cat: e.cat, ts: e.ts, corr: e.corr, flags: e.flags})
	p.pending++
	return nil
}

func (p *parser) end() error {
	e := &p.ev
	if !e.hasTs {
		p.drop("missing ts")
		return nil
	}
	s := &p.info[p.slot()]
	if len(s.open) == 0 {
		p.drop("unmatched E (no open B on its thread)")
		return nil
	}
	o := s.open[len(s.open)-1]
	s.open = s.open[:len(s.open)-1]
	p.pending--
	if e.ts < o.ts {
		p.drop("E before its B")
		return nil
	}
	if o.corr == 0 {
		o.corr = e.corr
	}
	return p.add(o.ts, e.ts-o.ts, o.name, o.cat, o.corr, o.flags|e.flags)
}

// add appends an event on the current event's slot.
func (p *parser) add(ts, dur int64, name, cat trace.StrID, corr uint64, flags trace.Flag) error {
	if p.b.NumEvents()+p.pending >= p.opt.MaxEvents {
		return p.tooMany()
	}
	si := p.slot()
	s := &p.info[si]
	if s.track < 0 {
		s.track = p.b.Track(string(p.key), trace.Track{Process: s.pid, Thread: s.tid})
	}
	if s.device < 0 && p.ev.device >= 0 {
		s.device = p.ev.device
	}
	if s.stream < 0 && p.ev.stream >= 0 {
		s.stream = p.ev.stream
	}
	e := trace.Event{Start: ts, Corr: p.b.Corr(corr), Name: name, Flags: flags}
	p.b.SetDur(&e, dur)
	p.b.AddCat(s.track, e, cat)
	if p.ev.bytes > 0 { // a copy's or memset's size (classified later)
		p.b.CopyBytes(e.Corr, p.ev.bytes)
	}
	return nil
}

func (p *parser) tooMany() error {
	return &fatalError{trace.Limitf("more than %d events at byte %d (raise --max-events if the trace is genuine)", p.opt.MaxEvents, p.offset())}
}

// slot returns the slot of the current event's (pid, tid), creating it.
// Consecutive events mostly share a thread, so the last one is cached.
func (p *parser) slot() int32 {
	e := &p.ev
	p.key = append(append(append(p.key[:0], e.pid...), 0), e.tid...)
	if p.lastSlot >= 0 && bytes.Equal(p.key, p.lastKey) {
		return p.lastSlot
	}
	i, ok := p.slots[string(p.key)]
	if !ok {
		i = int32(len(p.info))
		// The pid stays whole: process names are found by it. The tid
		// goes into the track's name, and is cut as a name is.
		p.info = append(p.info, slot{pid: string(e.pid), tid: p.b.TrackName(string(e.tid)), track: -1, device: -1, stream: -1})
		p.slots[string(p.key)] = i
	}
	p.lastSlot = i
	p.lastKey = append(p.lastKey[:0], p.key...)
	return i
}

// flowChunk is the number of flow points in a chunk of the flow list.
const flowChunk = 16 << 10

// flow records a launch flow point; Kineto's flow id is the correlation id.
func (p *parser) flow() error {
	e := &p.ev
	if !e.flowCat || !e.hasID || !e.hasTs || e.id == 0 {
		return nil
	}
	// A launch has two flow points: more than two per event allowed are
	// not a real trace.
	if p.nflows >= 2*p.opt.MaxEvents {
		return p.tooMany()
	}
	if k := len(p.flows); k == 0 || len(p.flows[k-1]) == cap(p.flows[k-1]) {
		p.flows = append(p.flows, make([]flow, 0, flowChunk))
	}
	k := len(p.flows) - 1
	p.flows[k] = append(p.flows[k], flow{slot: p.slot(), ts: e.ts, id: p.b.Corr(e.id)})
	p.nflows++
	return nil
}

// metadata names processes and threads, whenever it arrives.
func (p *parser) metadata() {
	e := &p.ev
	if !e.hasArg {
		return
	}
	switch p.b.Str(e.name) {
	case "process_name":
		p.procNames[string(e.pid)] = p.b.TrackName(string(e.argName))
	case "process_labels":
		p.procLabels[string(e.pid)] = string(e.argName)
	case "thread_name":
		p.info[p.slot()].threadName = p.b.TrackName(string(e.argName))
	}
}

// drop counts an event dropped for reason.
func (p *parser) drop(reason string) { p.b.Drop(reason) }
