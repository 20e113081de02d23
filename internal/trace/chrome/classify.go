package chrome

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/trace/trackname"
	"github.com/tracegap/tracegap/trace"
)

// finish closes the parse: it counts unmatched B events, builds the trace,
// then decides each track's kind and each event's kind and flags (thread
// and process names may arrive after the events they name, so this cannot
// be done event by event), and fills Corr from launch flows.
func (p *parser) finish() (*trace.Trace, error) {
	for i := range p.info {
		for range p.info[i].open {
			p.drop("unmatched B (no E before the end)")
		}
		p.info[i].open = nil
	}
	if n, first := p.b.Drops(); p.b.NumEvents() == 0 && n > 0 {
		return nil, fmt.Errorf("no usable events: dropped %s (first: %s)", human.Count(n, "event"), first)
	}
	trackSlot := make([]int32, p.b.NumTracks())
	for i := range p.info {
		if tr := p.info[i].track; tr >= 0 {
			trackSlot[tr] = int32(i)
		}
	}
	t := p.b.Finish()
	c := classifier{t: t, cats: make([]catClass, len(t.Strings)), streams: map[string]bool{}}
	for i := range p.info {
		if strings.HasPrefix(p.info[i].threadName, "Stream #") {
			c.streams[p.info[i].pid] = true
		}
	}
	for i := range t.Tracks {
		p.classify(&c, i, &p.info[trackSlot[i]])
	}
	// The categories stay on the trace: an annotated trace written from
	// the model writes them back, for this reader to classify it again.
	p.bindFlows(t)
	return t, nil
}

// catClass is what an event category says about device work.
type catClass uint8

const (
	catUnknown catClass = iota // not looked at yet
	catOther
	catKernel
	catMemcpy
	catMemset
	catDeviceOverlay // on a device, but not work
)

// classifier caches per-string decisions, so that each distinct category
// and name is looked at once, not once per event.
type classifier struct {
	t    *trace.Trace
	cats []catClass
	// streams holds the pids of XProf device processes with stream lines.
	streams map[string]bool
}

func (c *classifier) cat(id trace.StrID) catClass {
	if cc := c.cats[id]; cc != catUnknown {
		return cc
	}
	cc := catOther
	switch strings.ToLower(c.t.Strings[id]) {
	case "kernel":
		cc = catKernel
	case "gpu_memcpy", "memcpy":
		cc = catMemcpy
	case "gpu_memset", "memset":
		cc = catMemset
	case "gpu_user_annotation", "cuda_sync":
		cc = catDeviceOverlay
	}
	c.cats[id] = cc
	return cc
}

// classify sets the kind, device and name of track i and the kinds and
// flags of its events.
func (p *parser) classify(c *classifier, i int, s *slot) {
	tr := &c.t.Tracks[i]
	evs, cats := c.t.TrackEvents(i), c.trackCats(i)
	proc := p.procNames[s.pid]
	switch {
	case strings.HasPrefix(proc, "/device:") && xprofDevice(proc) != "":
		// A plane named "/device:" alone names no device.
		classifyXProfDevice(c, tr, evs, s, proc)
	case strings.HasPrefix(proc, "/host:"):
		classifyHost(c, tr, evs, s)
	case c.hasDeviceCat(cats):
		p.classifyKinetoDevice(c, tr, evs, cats, s)
	case isPseudoProcess(s.pid) || proc == trackname.AnnotationProcess:
		tr.Kind = trace.TrackOther
		tr.Name = strings.TrimSpace(s.pid + " " + s.tid)
		if tr.Name == "" {
			tr.Name = "global"
		}
	default:
		classifyHost(c, tr, evs, s)
	}
}

// isPseudoProcess reports whether pid is one of Kineto's non-process
// groups: profiler spans, trace markers, global instants.
func isPseudoProcess(pid string) bool {
	switch pid {
	case "Spans", "Traces", "":
		return true
	}
	return false
}

// trackCats returns the categories of the events of track i, nil when no
// event has one.
func (c *classifier) trackCats(i int) []trace.StrID {
	if c.t.Cats == nil {
		return nil
	}
	tr := &c.t.Tracks[i]
	return c.t.Cats[tr.Lo:tr.Hi]
}

func (c *classifier) hasDeviceCat(cats []trace.StrID) bool {
	for _, id := range cats {
		if c.cat(id) >= catKernel {
			return true
		}
	}
	return false
}

func classifyHost(c *classifier, tr *trace.Track, evs []trace.Event, s *slot) {
	tr.Kind = trace.TrackHost
	switch {
	case strings.HasPrefix(s.threadName, "thread "):
		tr.Name = s.threadName
	case s.threadName != "":
		tr.Name = "thread " + s.tid + " (" + s.threadName + ")"
	default:
		tr.Name = "thread " + s.tid
	}
	for j := range evs {
		e := &evs[j]
		e.Kind = trace.KindHost
		e.Flags |= trace.HostFlags(c.t.Strings[e.Name])
	}
}

// classifyKinetoDevice handles a PyTorch profiler device stream: work by
// category (cats, parallel to evs), everything else on it an overlay.
func (p *parser) classifyKinetoDevice(c *classifier, tr *trace.Track, evs []trace.Event, cats []trace.StrID, s *slot) {
	tr.Kind = trace.TrackDevice
	tr.Device = p.kinetoDevice(s)
	stream := strings.TrimSpace(strings.TrimPrefix(s.tid, "stream "))
	if s.stream >= 0 {
		stream = strconv.FormatInt(s.stream, 10)
	}
	tr.Name = tr.Device + " stream " + stream
	for j := range evs {
		e := &evs[j]
		switch c.cat(cats[j]) {
		case catKernel:
			e.Kind = trace.KindWork
		case catMemcpy:
			e.Kind = trace.KindWork
			e.Flags |= trace.FlagMemcpy | copyFlags(c.t.Strings[e.Name])
		case catMemset:
			e.Kind = trace.KindWork
			e.Flags |= trace.FlagMemset
		default:
			e.Kind = trace.KindOverlay
		}
	}
}

// kinetoDevice names the device of a Kineto stream: args.device, else the
// pid (Kineto gives device n the pid n), else a "GPU n" process label.
func (p *parser) kinetoDevice(s *slot) string {
	if s.device >= 0 {
		return "GPU:" + strconv.FormatInt(s.device, 10)
	}
	if n, err := strconv.ParseUint(s.pid, 10, 31); err == nil {
		return "GPU:" + strconv.FormatUint(n, 10)
	}
	if l, ok := strings.CutPrefix(p.procLabels[s.pid], "GPU "); ok {
		return "GPU:" + strings.TrimSpace(l)
	}
	return "GPU:" + s.pid
}

// copyFlags reads a copy's direction and host memory from its name:
// Kineto writes "Memcpy DtoH (Device -> Pageable)".
func copyFlags(name string) trace.Flag {
	var f trace.Flag
	if strings.Contains(name, "Pageable") {
		f |= trace.FlagPageable
	}
	if strings.Contains(name, "DtoH") || strings.Contains(name, "D2H") ||
		strings.Contains(name, "Device -> Pageable") || strings.Contains(name, "Device -> Pinned") {
		f |= trace.FlagDtoH
	}
	return f
}

// derivedLines are the XProf lines that are views of other lines.
var derivedLines = map[string]bool{
	"Steps":                 true,
	"XLA Modules":           true,
	"Framework Ops":         true,
	"TensorFlow Ops":        true,
	"TensorFlow Name Scope": true,
	"XLA TraceMe":           true,
	"Launch Stats":          true,
	"Source code":           true,
	"Async XLA Ops":         true,
	"Framework Name Scope":  true,
}

// classifyXProfDevice handles a thread of a device process in JSON written
// by the XProf converter, whose processes and threads are XPlane planes and
// lines: stream lines are work, and so is "XLA Ops" on a device without
// streams (a TPU); derived lines are views.
func classifyXProfDevice(c *classifier, tr *trace.Track, evs []trace.Event, s *slot, proc string) {
	tr.Kind = trace.TrackDevice
	tr.Device = xprofDevice(proc)
	line := s.threadName
	if line == "" {
		line = "thread " + s.tid
	}
	tr.Name = tr.Device + " " + line
	kind := trace.KindOverlay
	var flags trace.Flag
	switch {
	case derivedLines[line]:
		tr.Derived = true
		if line == "Steps" {
			flags = trace.FlagStep
		}
	case line == "XLA Ops" && c.streams[s.pid]:
		// On a GPU, XLA Ops is a view of the ops run on the streams.
		tr.Derived = true
	case line == "XLA Ops", strings.HasPrefix(line, "Stream #"), s.threadName == "":
		// An unnamed line of a device is most likely a stream.
		kind = trace.KindWork
	}
	for j := range evs {
		e := &evs[j]
		e.Kind = kind
		e.Flags |= flags
		if kind == trace.KindWork {
			e.Flags |= xprofCopyFlags(c.t.Strings[e.Name], line)
		}
	}
}

// xprofCopyFlags reads copies from the event name ("MemcpyD2H") or the
// line name ("Stream #12(MemcpyD2H)").
func xprofCopyFlags(name, line string) trace.Flag {
	var f trace.Flag
	for _, s := range [2]string{name, line} {
		switch {
		case strings.Contains(s, "Memcpy") || strings.Contains(s, "memcpy"):
			f |= trace.FlagMemcpy
			if strings.Contains(s, "D2H") || strings.Contains(s, "DtoH") {
				f |= trace.FlagDtoH
			}
		case strings.Contains(s, "Memset") || strings.Contains(s, "memset"):
			f |= trace.FlagMemset
		}
		if f != 0 {
			return f
		}
	}
	return f
}

// xprofDevice turns an XPlane plane name ("/device:TPU:0") into a device
// id ("TPU:0").
func xprofDevice(proc string) string {
	id := strings.TrimPrefix(proc, "/device:")
	if i := strings.IndexAny(id, " \t("); i > 0 {
		id = id[:i]
	}
	return id
}

// bindFlows gives Corr to events that lack it from the launch flows that
// start or end on them.
func (p *parser) bindFlows(t *trace.Trace) {
	// Where the last flow of each track was found: a thread's flows come
	// in time order, so the next is found near it.
	hint := make([]int, len(t.Tracks))
	for k, c := range p.flows {
		for _, f := range c {
			if tr := p.info[f.slot].track; tr >= 0 {
				hint[tr] = bindFlow(t.TrackEvents(int(tr)), f.ts-t.StartNs, f.id, hint[tr])
			}
		}
		p.flows[k] = nil
	}
	p.flows = nil
}

// bindFlow gives id to the innermost of a track's events (sorted by start,
// longest first) enclosing ts that lacks a Corr, unless one of them
// already carries id. A flow names a time, not an event: where two events
// start at that time, the one whose args name the correlation is the
// flow's end, and giving the id to the other as well would link two
// events to one launch. It returns the index of the first event starting
// after ts, found by a search from hint.
func bindFlow(evs []trace.Event, ts int64, id uint32, hint int) int {
	after := searchAfter(evs, ts, hint)
	j := after - 1
	var target *trace.Event
	for k := j; k >= 0 && k > j-16; k-- {
		e := &evs[k]
		if e.Start > ts || ts > e.End() {
			continue
		}
		if e.Corr == id {
			return after
		}
		if e.Corr == 0 && target == nil {
			target = e
		}
	}
	if target != nil {
		target.Corr = id
	}
	return after
}

// searchAfter returns the index of the first of evs (sorted by start) that
// starts after ts, as a binary search of them all does, but searching
// forward from hint first, doubling its steps, when ts is at or after the
// start of the event before hint: flows in time order then cost a few
// steps each, not a search of the whole track through the cache.
func searchAfter(evs []trace.Event, ts int64, hint int) int {
	lo, hi := 0, len(evs)
	if hint > 0 && hint <= len(evs) && evs[hint-1].Start <= ts {
		lo = hint // the answer is at or after hint
		for step := 1; lo+step <= len(evs); step *= 2 {
			if p := lo + step - 1; evs[p].Start > ts {
				hi = p
				break
			}
			lo += step
		}
	}
	return lo + sort.Search(hi-lo, func(k int) bool { return evs[lo+k].Start > ts })
}
