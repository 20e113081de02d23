package xplane

import (
	"math"
	"strconv"

	"github.com/tracegap/tracegap/trace"
)

// lineHead is an XLine's header: everything but its events.
type lineHead struct {
	id            int64
	count         int // events
	ts            int64
	name, display string
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

// eventTag is the tag of XLine.events (4), a length-delimited field.
const eventTag = 4<<3 | 2

// nextEvent reads the header of the event field at b[i:] when it is one
// whose contents lie wholly in b, and returns the contents' bounds in b.
// Anything else (another field, a long or cut length) reports false and is
// left to the careful path.
func nextEvent(b []byte, i int) (lo, hi int, ok bool) {
	if i+1 >= len(b) || b[i] != eventTag {
		return 0, 0, false
	}
	size, lo := uint64(b[i+1]), i+2
	if size >= 0x80 {
		if size, lo = uvarint(b, i+1, len(b)); lo < 0 {
			return 0, 0, false
		}
	}
	if size > uint64(len(b)-lo) {
		return 0, 0, false
	}
	return lo, lo + int(size), true
}

// within returns the window up to end, the end of the message being
// walked, for the fast loops to index from w.base.
func (w *wire) within(end int) []byte {
	return w.buf[:min(end-w.base, len(w.buf))]
}

// scanLine reads a line's header and counts its events. display_name (11)
// follows the events in the encoding, so the events are stepped over here
// and decoded afterwards.
func (d *decoder) scanLine(l span) (lineHead, error) {
	h := lineHead{events: span{l.hi, l.hi}}
	first := true
	for off := l.lo; off < l.hi; {
		if err := d.loadHead(off, l.hi); err != nil {
			return h, err
		}
		// Step over the events the window holds.
		b, base := d.within(l.hi), d.base
		i := off - base
		for {
			_, hi, ok := nextEvent(b, i)
			if !ok {
				break
			}
			if first {
				h.events.lo, first = base+i, false
			}
			h.count++
			i = hi
			h.events.hi = base + i
		}
		if off = base + i; off >= l.hi {
			continue
		}
		if err := d.loadHead(off, l.hi); err != nil {
			return h, err
		}
		var err error
		if off, err = d.lineField(off, l.hi, &h, &first); err != nil {
			return h, err
		}
	}
	return h, nil
}

// lineField reads the line field at off, or steps over an event that the
// window did not hold.
func (d *decoder) lineField(off, end int, h *lineHead, first *bool) (int, error) {
	num, typ, next, err := d.tag(off, end)
	if err != nil {
		return 0, err
	}
	what, known := lineFields[int(num)]
	if !known {
		return d.skip(num, typ, next, end)
	}
	switch num {
	case 2, 4, 11:
		if err := d.want(off, what, typ, bytesType); err != nil {
			return 0, err
		}
		lo, hi, err := d.bytes(next, end, what)
		if err != nil {
			return 0, err
		}
		switch num {
		case 2, 11:
			if err := d.load(lo, hi); err != nil {
				return 0, err
			}
			if num == 2 {
				h.name = string(d.bytesAt(lo, hi))
			} else {
				h.display = string(d.bytesAt(lo, hi))
			}
		case 4:
			if *first {
				h.events.lo, *first = off, false
			}
			h.events.hi = hi
			h.count++
		}
		return hi, nil
	}
	if err := d.want(off, what, typ, varintType); err != nil {
		return 0, err
	}
	v, n, err := d.varint(next, end, what)
	if err != nil {
		return 0, err
	}
	switch num {
	case 1:
		h.id = int64(v)
	case 3:
		h.ts = int64(v)
	}
	return n, nil
}

// lineState is what adding a line's events needs.
type lineState struct {
	head  lineHead
	class lineClass
	pk    planeKind
	track int32 // -1 until the line's first event is kept
}

// readLine decodes a scanned line's events. The events the window holds
// are decoded straight from it; the window moves on where one is cut.
func (d *decoder) readLine(h lineHead, pk planeKind) error {
	ls := newLineState(h, pk)
	return d.readEvents(h.events.lo, h.events.hi, 0, &ls)
}

func newLineState(h lineHead, pk planeKind) lineState {
	return lineState{head: h, pk: pk, track: -1, class: classifyLine(pk, h.id, h.name)}
}

// readEvents decodes the events of a line in [lo, end), the first of which
// is the line's event number first, and adds them to the trace.
func (d *decoder) readEvents(lo, end, first int, ls *lineState) error {
	err := d.readLineEvents(lo, end, first, ls)
	d.flush(ls.track)
	return err
}

// batchEvents is how many of a line's events the decoder gathers before it
// adds them to the Builder at once: 160 KB.
const batchEvents = 4 << 10

// flush adds the events of the batch, of track, to the trace. A batch
// holds events of one line: readEvents flushes it before it returns.
func (d *decoder) flush(track int32) {
	if len(d.batch) > 0 {
		d.b.AddTrack(track, d.batch)
		d.batch = nil
	}
}

// newBatch starts a batch in a buffer of the decoder's.
func (d *decoder) newBatch() {
	if d.own == nil {
		d.own = make([]trace.Event, 0, batchEvents)
	}
	d.batch = d.own[:0]
}

func (d *decoder) readLineEvents(lo, end, first int, ls *lineState) error {
	d.event = first
	for off := lo; off < end; {
		if err := d.loadHead(off, end); err != nil {
			return err
		}
		b, base := d.within(end), d.base
		i := off - base
		for {
			lo, hi, ok := nextEvent(b, i)
			if !ok {
				break
			}
			if err := d.readEvent(base+lo, base+hi, ls); err != nil {
				return err
			}
			d.event++
			i = hi
		}
		if off = base + i; off >= end {
			break
		}
		var err error
		if off, err = d.eventField(off, end, ls); err != nil {
			return err
		}
	}
	d.event = -1
	return nil
}

// eventField reads the line field at off: an event that the window did
// not hold whole, or another line field between events.
func (d *decoder) eventField(off, end int, ls *lineState) (int, error) {
	if err := d.loadHead(off, end); err != nil {
		return 0, err
	}
	num, typ, next, err := d.tag(off, end)
	if err != nil {
		return 0, err
	}
	if num != 4 {
		return d.skip(num, typ, next, end)
	}
	if err := d.want(off, lineFields[4], typ, bytesType); err != nil {
		return 0, err
	}
	lo, hi, err := d.bytes(next, end, lineFields[4])
	if err != nil {
		return 0, err
	}
	if err := d.load(lo, hi); err != nil {
		return 0, err
	}
	if err := d.readEvent(lo, hi, ls); err != nil {
		return 0, err
	}
	d.event++
	return hi, nil
}

// rawEvent is one XEvent as decoded, before it is turned into an Event.
type rawEvent struct {
	meta        uint64
	off, dur    int64
	occurrences bool
	stats       eventStats
}

// readEvent decodes the XEvent at [lo, hi), which is loaded, and adds it
// to the trace.
func (d *decoder) readEvent(lo, hi int, ls *lineState) error {
	var ev rawEvent
	if !d.readEventFast(lo-d.base, hi-d.base, &ev) {
		return d.readEventCarefully(lo, hi, ls)
	}
	return d.add(&ev, ls)
}

// readEventFast decodes the XEvent in the window's [i, end) into ev: the
// hot loop. It handles the encoding profilers write (one-byte tags, the
// expected wire types, well-formed stats) and reports false for anything
// else, errors included, which readEventCarefully then decodes. Varints
// are read from the window, which may go on past the event.
func (d *decoder) readEventFast(i, end int, ev *rawEvent) bool {
	b := d.buf
	for i < end {
		c := b[i]
		if i+1 >= end {
			return false
		}
		v, n := uint64(b[i+1]), i+2
		if v >= 0x80 {
			if v, n = uvarint(b, i+1, end); n < 0 {
				return false
			}
		}
		switch c {
		case 1<<3 | 0:
			ev.meta = v
		case 2<<3 | 0:
			ev.off, ev.occurrences = int64(v), false
		case 3<<3 | 0:
			ev.dur = int64(v)
		case 5<<3 | 0:
			ev.occurrences = true
		case 4<<3 | 2: // a stat; v is its length
			if v > uint64(end-n) {
				return false
			}
			hi := n + int(v)
			if !d.statFast(b, n, hi, &ev.stats) {
				return false
			}
			n = hi
		default:
			return false
		}
		i = n
	}
	return true
}

// statFast folds the XStat in b[i:end] into s, or reports false for a
// stat that readEventCarefully must decode. Profilers write the id first,
// nearly always in one byte: the kind of the stat is then looked up in a
// small table, a stat the reader does not interpret is stepped over, and
// one with an integer value, the commonest the reader does, is read here.
func (d *decoder) statFast(b []byte, i, end int, s *eventStats) bool {
	if end-i < 2 || b[i] != 1<<3|0 {
		return d.statSlow(b, i, end, s)
	}
	if b[i+1] >= 0x80 {
		id, n := uvarint(b, i+1, end)
		if n >= 0 && d.statKind(id) == statOther {
			return true
		}
		return d.statSlow(b, i, end, s)
	}
	k := d.kinds[b[i+1]]
	switch {
	case k == statOther:
		return true
	case k != statMemcpy && end-i >= 4 && (b[i+2] == statUint<<3|0 || b[i+2] == statInt<<3|0):
		if u, n := uvarint(b, i+3, end); n == end {
			s.setInt(k, int64(u))
			return true
		}
	}
	return d.statSlow(b, i, end, s)
}

// statSlow is statFast for a stat of any other shape.
func (d *decoder) statSlow(b []byte, i, end int, s *eventStats) bool {
	id, v, ok := readStatFast(b, i, end, d.base)
	if ok {
		d.interpret(id, v, s)
	}
	return ok
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

// eventsLimit is the error of a trace of more than max events, the first
// one past it in the line ls. It names the byte where the line's events
// start.
func eventsLimit(max int, ls *lineState) error {
	return trace.Limitf("more than %d events, in the XLine whose events start at byte %d (raise --max-events if the trace is genuine)", max, ls.head.events.lo)
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
	if d.b.NumEvents()+len(d.batch) >= d.maxEvents {
		return eventsLimit(d.maxEvents, ls)
	}
	m := d.meta(ev.meta)
	if ls.track < 0 {
		ls.track = d.track(ls)
		if err := d.b.Err(); err != nil {
			return err
		}
	}
	if d.batch == nil {
		d.newBatch()
	}
	// The event is made where it is kept: built apart and copied, its
	// bytes went through the stack twice. setEvent sets every field,
	// so the room is not cleared first.
	n := len(d.batch)
	if n < cap(d.batch) {
		d.batch = d.batch[:n+1]
	} else {
		d.batch = append(d.batch, trace.Event{})
	}
	e := &d.batch[n]
	if !setEvent(e, ev, ls, m, start, dur) {
		e.Name = d.stepName(m.name, &ev.stats)
	}
	if dur > trace.MaxDur {
		d.b.SetDur(e, dur) // to count the cut
	}
	if ev.stats.corr >= trace.WideCorr {
		if e.Corr = d.b.Corr(ev.stats.corr); e.Corr == 0 {
			return d.b.Err()
		}
	}
	if ev.stats.bytes > 0 {
		d.b.CopyBytes(e.Corr, ev.stats.bytes)
	}
	if ev.stats.hasProgram && e.Kind == trace.KindWork && d.progs.byID != nil {
		d.progs.addRun(ls.track, ev.stats.program, start, start+e.Dur())
	}
	if len(d.batch) == batchEvents {
		d.flush(ls.track)
	}
	return nil
}

// setEvent sets e to the Event of ev, with metadata m, on a line. It
// reports false for a step event whose name needs a number
// from its stats, which the caller then names.
func setEvent(e *trace.Event, ev *rawEvent, ls *lineState, m *eventMeta, start, dur int64) bool {
	ev.stats.merge(&m.stats)
	key, flow := ev.stats.flow()
	kind := ls.class.kind
	flags := copyFlags(kind, m.flags|ev.stats.flags) | flow
	if ev.dur == 0 {
		flags |= trace.FlagInstant
	}
	e.Start, e.Corr = start, uint32(ev.stats.corr)
	if key != 0 {
		e.Corr = key
	}
	e.SetDur(dur)
	e.Name, e.Kind = m.name, kind
	named := true
	if kind != trace.KindWork && (ls.class.steps || ev.stats.hasStep || ev.stats.root) {
		flags |= trace.FlagStep
		switch {
		case m.digits:
		case m.rawDigits: // "Steps" events may carry the number only in the raw name
			e.Name = m.rawName
		default:
			named = false
		}
	}
	e.Flags = flags
	return named
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
	// Unsigned, as both are known not to be negative: dividing an int64
	// by a constant takes a sign fix-up that a uint64 does not, and the
	// sum of two below 2^63 fits a uint64.
	off := uint64(offPs) / 1000
	if ts > math.MaxInt64-int64(off) {
		return 0, 0, false
	}
	start = ts + int64(off)
	// The end rounded down less the start rounded down: with offPs =
	// 1000*off + r, (offPs+durPs)/1000 = off + (r+durPs)/1000. Two
	// divisions side by side rather than a division, a remainder and a
	// division one after the other.
	dur = int64((uint64(offPs)+uint64(durPs))/1000 - off)
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
	key := strconv.Itoa(d.plane) + "/" + strconv.FormatInt(ls.head.id, 10)
	return d.b.Track(key, trackOf(ls))
}

// trackOf returns the track of a line: named after its display name,
// else its name, else its id.
func trackOf(ls *lineState) trace.Track {
	h := &ls.head
	thread := h.display
	if thread == "" {
		thread = h.name
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
	return t
}
