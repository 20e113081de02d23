package xplane

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tracegap/tracegap/trace"
)

// lineHead is an XLine's header: everything but its events.
type lineHead struct {
	id            int64
	count         int // events
	ts            int64
	name, display span
	// events spans the line's events: the first event's tag to the end of
	// the last one.
	events span
}

var lineFields = map[int]string{
	1:  "XLine.id (1)",
	2:  "XLine.name (2)",
	3:  "XLine.timestamp_ns (3)",
	4:  "XLine.events (4)",
	9:  "XLine.duration_ps (9)",
	10: "XLine.display_id (10)",
	11: "XLine.display_name (11)",
}

// scanLine reads a line's header. display_name (11) follows the events in
// the encoding, so the events are stepped over here and decoded afterwards.
func (d *decoder) scanLine(l span) (lineHead, error) {
	h := lineHead{events: span{l.hi, l.hi}}
	first := true
	for off := l.lo; off < l.hi; {
		if d.buf[off] == 4<<3|2 { // an event, the common case
			size, lo := uvarint(d.buf, off+1, l.hi)
			if lo >= 0 && size <= uint64(l.hi-lo) {
				if first {
					h.events.lo, first = off, false
				}
				off = lo + int(size)
				h.events.hi = off
				h.count++
				continue
			}
		}
		num, typ, next, err := d.tag(off, l.hi)
		if err != nil {
			return h, err
		}
		what, known := lineFields[int(num)]
		if !known {
			if off, err = d.skip(num, typ, next, l.hi); err != nil {
				return h, err
			}
			continue
		}
		switch num {
		case 2, 4, 11:
			if err := d.want(off, what, typ, bytesType); err != nil {
				return h, err
			}
			lo, hi, err := d.bytes(next, l.hi, what)
			if err != nil {
				return h, err
			}
			switch num {
			case 2:
				h.name = span{lo, hi}
			case 11:
				h.display = span{lo, hi}
			case 4:
				if first {
					h.events.lo, first = off, false
				}
				h.events.hi = hi
				h.count++
			}
			off = hi
		default:
			if err := d.want(off, what, typ, varintType); err != nil {
				return h, err
			}
			v, n, err := d.varint(next, l.hi, what)
			if err != nil {
				return h, err
			}
			switch num {
			case 1:
				h.id = int64(v)
			case 3:
				h.ts = int64(v)
			}
			off = n
		}
	}
	return h, nil
}

// lineState is what adding a line's events needs.
type lineState struct {
	head  lineHead
	class lineClass
	pk    planeKind
	track int32 // -1 until the line's first event is kept
}

func (d *decoder) readLine(h lineHead, pk planeKind) error {
	ls := lineState{head: h, pk: pk, track: -1}
	ls.class = classifyLine(pk, h.id, string(d.buf[h.name.lo:h.name.hi]))
	d.event = 0
	for off, end := h.events.lo, h.events.hi; off < end; {
		if d.buf[off] == 4<<3|2 { // an event, the common case
			size, lo := uvarint(d.buf, off+1, end)
			if lo >= 0 && size <= uint64(end-lo) {
				if err := d.readEvent(lo, lo+int(size), &ls); err != nil {
					return err
				}
				d.event++
				off = lo + int(size)
				continue
			}
		}
		num, typ, next, err := d.tag(off, end)
		if err != nil {
			return err
		}
		if num != 4 { // another line field between events
			if off, err = d.skip(num, typ, next, end); err != nil {
				return err
			}
			continue
		}
		lo, hi, err := d.bytes(next, end, "XLine.events (4)")
		if err != nil {
			return err
		}
		if err := d.readEvent(lo, hi, &ls); err != nil {
			return err
		}
		d.event++
		off = hi
	}
	d.event = -1
	return nil
}

// rawEvent is one XEvent as decoded, before it is turned into an Event.
type rawEvent struct {
	meta        uint64
	off, dur    int64
	occurrences bool
	stats       eventStats
}

// readEvent decodes one XEvent and adds it to the trace: the hot loop. It
// handles the encoding profilers write (one-byte tags, the expected wire
// types, well-formed stats) and leaves anything else, errors included, to
// readEventCarefully.
func (d *decoder) readEvent(lo, hi int, ls *lineState) error {
	var ev rawEvent
	b := d.buf
	for off := lo; off < hi; {
		switch c := b[off]; c {
		case 1<<3 | 0, 2<<3 | 0, 3<<3 | 0, 5<<3 | 0:
			v, n := uvarint(b, off+1, hi)
			if n < 0 {
				return d.readEventCarefully(lo, hi, ls)
			}
			switch c >> 3 {
			case 1:
				ev.meta = v
			case 2:
				ev.off, ev.occurrences = int64(v), false
			case 3:
				ev.dur = int64(v)
			case 5:
				ev.occurrences = true
			}
			off = n
		case 4<<3 | 2:
			// Stats are short: their length fits one byte.
			size, slo := uint64(0), -1
			if off+1 < hi && b[off+1] < 0x80 {
				size, slo = uint64(b[off+1]), off+2
			} else {
				size, slo = uvarint(b, off+1, hi)
			}
			if slo < 0 || size > uint64(hi-slo) {
				return d.readEventCarefully(lo, hi, ls)
			}
			shi := slo + int(size)
			if !d.boring(slo, shi) {
				id, v, ok := d.readStatFast(slo, shi)
				if !ok {
					return d.readEventCarefully(lo, hi, ls)
				}
				d.interpret(id, v, &ev.stats)
			}
			off = shi
		default:
			return d.readEventCarefully(lo, hi, ls)
		}
	}
	return d.add(&ev, ls)
}

// boring reports whether the XStat in [lo, hi) starts with the id of a
// stat the reader does not interpret, so that its value need not be
// decoded. Profilers write the id first; a stat that does not start with
// it is looked at closely.
func (d *decoder) boring(lo, hi int) bool {
	if lo+1 >= hi || d.buf[lo] != 1<<3|0 {
		return false
	}
	id := uint64(d.buf[lo+1])
	if id >= 0x80 {
		var n int
		if id, n = uvarint(d.buf, lo+1, hi); n < 0 {
			return false
		}
	}
	m, _ := d.stats.get(id)
	return m.kind == statOther
}

// readEventCarefully decodes an XEvent field by field, checking each,
// skipping fields it does not know, and failing with the offset of the
// first that is wrong.
func (d *decoder) readEventCarefully(lo, hi int, ls *lineState) error {
	var ev rawEvent
	for off := lo; off < hi; {
		num, typ, next, err := d.tag(off, hi)
		if err != nil {
			return err
		}
		switch num {
		case 1, 2, 3, 5:
			if err := d.want(off, eventFieldNames[num], typ, varintType); err != nil {
				return err
			}
			v, n, err := d.varint(next, hi, eventFieldNames[num])
			if err != nil {
				return err
			}
			switch num {
			case 1:
				ev.meta = v
			case 2:
				ev.off, ev.occurrences = int64(v), false
			case 3:
				ev.dur = int64(v)
			case 5:
				ev.occurrences = true
			}
			off = n
		case 4:
			if err := d.want(off, eventFieldNames[num], typ, bytesType); err != nil {
				return err
			}
			slo, shi, err := d.bytes(next, hi, eventFieldNames[num])
			if err != nil {
				return err
			}
			id, v, err := d.readStat(slo, shi)
			if err != nil {
				return err
			}
			d.interpret(id, v, &ev.stats)
			off = shi
		default:
			if off, err = d.skip(num, typ, next, hi); err != nil {
				return err
			}
		}
	}
	return d.add(&ev, ls)
}

var eventFieldNames = [...]string{
	1: "XEvent.metadata_id (1)",
	2: "XEvent.offset_ps (2)",
	3: "XEvent.duration_ps (3)",
	4: "XEvent.stats (4)",
	5: "XEvent.num_occurrences (5)",
}

// add turns a decoded XEvent into an Event on its line's track.
func (d *decoder) add(ev *rawEvent, ls *lineState) error {
	if ev.occurrences {
		d.b.Drop("aggregated XEvent (num_occurrences) has no start time")
		return nil
	}
	start, dur, ok := eventTimes(ls.head.ts, ev.off, ev.dur)
	if !ok {
		d.b.Drop("negative or overflowing XEvent time")
		return nil
	}
	if d.b.NumEvents() >= d.maxEvents {
		return fmt.Errorf("more than %d events (raise --max-events if the trace is genuine): %w", d.maxEvents, trace.ErrLimit)
	}
	m := d.meta(ev.meta)
	ev.stats.merge(&m.stats)
	e := trace.Event{
		Start: start,
		Dur:   dur,
		Corr:  ev.stats.corr,
		Name:  m.name,
		Kind:  ls.class.kind,
		Flags: copyFlags(ls.class.kind, m.flags|ev.stats.flags),
	}
	if ev.dur == 0 {
		e.Flags |= trace.FlagInstant
	}
	if ls.class.kind != trace.KindWork && (ls.class.steps || ev.stats.hasStep || ev.stats.root) {
		e.Flags |= trace.FlagStep
		switch {
		case m.digits:
		case m.rawDigits: // "Steps" events may carry the number only in the raw name
			e.Name = m.rawName
		default:
			e.Name = d.stepName(m.name, &ev.stats)
		}
	}
	if ls.track < 0 {
		ls.track = d.track(ls)
	}
	e.Track = ls.track
	d.b.Add(e)
	return nil
}

// copyFlags keeps the copy facts that mean something for an event of kind
// k: all of them on device work, those of a copy call on the host (a memset
// call does not block), none on overlays.
func copyFlags(k trace.Kind, f trace.Flag) trace.Flag {
	switch k {
	case trace.KindWork:
		return f
	case trace.KindHost:
		return f &^ trace.FlagMemset
	}
	return 0
}

// eventTimes turns a line's timestamp and an event's picosecond offset and
// duration into nanoseconds. Line timestamps are nanoseconds since the
// epoch: multiplying them by 1000 would overflow, so the offset is divided
// instead. The end is rounded like the start, so that events that abut in
// picoseconds abut in nanoseconds.
func eventTimes(ts, offPs, durPs int64) (start, dur int64, ok bool) {
	if ts < 0 || offPs < 0 || durPs < 0 || durPs > math.MaxInt64-1000 {
		return 0, 0, false
	}
	off := offPs / 1000
	if ts > math.MaxInt64-off {
		return 0, 0, false
	}
	start = ts + off
	dur = (offPs%1000 + durPs) / 1000
	if start > math.MaxInt64-dur {
		return 0, 0, false
	}
	return start, dur, true
}

// meta returns an event's metadata, inventing a name for an id the plane
// does not define so that the event still counts.
func (d *decoder) meta(id uint64) *eventMeta {
	if id < uint64(len(d.events.dense)) && d.events.set[id] {
		return &d.events.dense[id]
	}
	m, ok := d.events.get(id)
	if !ok {
		name := d.b.Intern("metadata #" + strconv.FormatUint(id, 10))
		m = eventMeta{name: name, rawName: name, digits: true, rawDigits: true}
		d.events.put(id, m)
	}
	return &m
}

// stepName gives a step event without a number in its name one taken from
// its stats, step_num or else group_id: "train_step" with step_num 7
// becomes "train_step#7", a nameless one "step#7".
func (d *decoder) stepName(name trace.StrID, s *eventStats) trace.StrID {
	var n int64
	switch {
	case s.hasStep:
		n = s.step
	case s.hasGroup:
		n = s.group
	default:
		return name
	}
	base := d.b.Str(name)
	if base == "" {
		base = "step"
	}
	return d.b.Intern(base + "#" + strconv.FormatInt(n, 10))
}

// track creates the track of a line on its first kept event.
func (d *decoder) track(ls *lineState) int32 {
	h := &ls.head
	thread := string(d.buf[h.display.lo:h.display.hi])
	if thread == "" {
		thread = string(d.buf[h.name.lo:h.name.hi])
	}
	if thread == "" {
		thread = "line " + strconv.FormatInt(h.id, 10)
	}
	t := trace.Track{
		Kind:    ls.class.track,
		Device:  ls.pk.device,
		Process: ls.pk.name,
		Thread:  thread,
		Derived: ls.class.derived,
	}
	switch {
	case t.Kind == trace.TrackHost:
		t.Name = thread
	case t.Device != "":
		t.Name = t.Device + " " + thread
	default:
		t.Name = ls.pk.name + " " + thread
	}
	key := strconv.Itoa(d.plane) + "/" + strconv.FormatInt(h.id, 10)
	return d.b.Track(key, t)
}
