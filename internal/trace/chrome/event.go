package chrome

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tracegap/tracegap/trace"
)

// maxTime bounds ts and dur in nanoseconds (73 years): far beyond any real
// trace, and small enough that rebasing and end times never overflow.
const maxTime = 1 << 61

// parser reads the document with a decoder and feeds a trace.Builder.
// Everything in the per-event path reuses its buffers: an event costs no
// allocation unless it brings a name, category or thread not seen before.
type parser struct {
	dec *decoder
	b   *trace.Builder
	opt trace.Options

	// sawEvents is set once an event array has been entered.
	sawEvents bool

	ev      rawEvent
	scratch []byte // unescaped string values
	keyBuf  []byte // unescaped member names
	key     []byte // pid NUL tid of the current event

	// Slots are the (pid, tid) pairs seen, in events, flows or metadata;
	// a slot gets a builder track with its first kept event.
	slots    map[string]int32
	info     []slot
	lastSlot int32
	lastKey  []byte

	procNames  map[string]string // pid -> process_name
	procLabels map[string]string // pid -> process_labels
	flows      [][]flow          // in chunks: the list never copies itself to grow
	nflows     int
	splice     *splice // set in a parallel read
	// reserveAt is the input offset at which to estimate, from the events
	// so far, how many a file of known size holds (0: not to).
	reserveAt int64
	pending   int // B events waiting for their E, on all threads

	phaseReasons [256]string
}

// slot is what the parser knows of one (pid, tid) pair.
type slot struct {
	pid, tid   string
	track      int32 // builder track, -1 before the first event
	threadName string
	device     int64 // args.device seen on the slot's events, -1 if none
	stream     int64 // args.stream, -1 if none
	open       []openSlice
}

// openSlice is a B event waiting for its E.
type openSlice struct {
	name, cat trace.StrID
	ts        int64
	corr      uint64
	flags     trace.Flag
}

// flow is a flow start or end point, kept to fill Corr after the parse.
type flow struct {
	slot int32
	ts   int64
	id   uint32 // an Event.Corr (Builder.Corr)
}

// rawEvent holds the fields of the event being read.
type rawEvent struct {
	ph        byte
	name, cat trace.StrID
	// nameV and catV are the name and cat strings as they stand in the
	// window (quoted), interned once the event has been read whole: an
	// event cut short adds nothing to the string table. esc says whether
	// they hold escapes; catFirst whether cat came before name.
	nameV, catV     []byte
	nameEsc, catEsc bool
	catFirst        bool
	flowCat         bool // cat is a launch flow category (ac2g, async, ...)
	pid, tid        []byte
	ts, dur         int64
	hasTs           bool
	corr            uint64
	bytes           int64 // args.bytes of a copy, 0 if none
	device          int64
	stream          int64
	flags           trace.Flag
	id              uint64
	hasID           bool
	argName         []byte // args.name of metadata events
	hasArg          bool
	bad             string // drop reason, when the event is unusable
}

func (e *rawEvent) reset() {
	*e = rawEvent{pid: e.pid[:0], tid: e.tid[:0], argName: e.argName[:0], device: -1, stream: -1}
}

func newParser(r io.Reader, opt trace.Options) *parser {
	if opt.MaxEvents <= 0 {
		opt.MaxEvents = trace.DefaultMaxEvents
	}
	if opt.MaxValueBytes <= 0 {
		opt.MaxValueBytes = trace.DefaultMaxValueBytes
	}
	if opt.MaxTracks <= 0 {
		opt.MaxTracks = trace.DefaultMaxTracks
	}
	b := trace.NewBuilder()
	b.SetLimits(opt)
	var reserveAt int64
	if opt.ExpectBytes >= reserveMin {
		// Late enough for the rate to settle, early enough that the
		// events so far are few to copy.
		reserveAt = max(opt.ExpectBytes/16, reserveMin/8)
	}
	return &parser{
		reserveAt:  reserveAt,
		dec:        newDecoder(r, opt.MaxValueBytes),
		b:          b,
		opt:        opt,
		slots:      map[string]int32{},
		lastSlot:   -1,
		procNames:  map[string]string{},
		procLabels: map[string]string{},
	}
}

// unquote returns the content of a JSON string value, unescaped into buf
// when esc says it holds escapes, or the text of any other scalar. The
// result is valid until buf is used again.
func unquote(buf *[]byte, v []byte, esc bool) []byte {
	if len(v) < 2 || v[0] != '"' {
		return v
	}
	if !esc {
		return v[1 : len(v)-1]
	}
	// Escapes are rare in traces: the jsontext unquoting will do.
	out, err := jsontext.AppendUnquote((*buf)[:0], v)
	if err != nil {
		return v[1 : len(v)-1]
	}
	*buf = out
	return out
}

// unquoteAny is unquote for a value whose escapes are not known.
func unquoteAny(buf *[]byte, v []byte) []byte {
	return unquote(buf, v, bytes.IndexByte(v, '\\') >= 0)
}

// events reads array elements up to the closing bracket.
func (p *parser) events() error {
	for {
		if p.splice != nil { // a parallel read: see parallel.go
			if err := p.spliceIn(); err != nil {
				return err
			}
		}
		if p.reserveAt > 0 && p.offset() >= p.reserveAt {
			p.reserve(p.offset())
		}
		switch p.dec.peekKind() {
		case ']':
			_, err := p.dec.readToken()
			return err
		case '{':
			if err := p.readEvent(); err != nil {
				return err
			}
			if err := p.keep(); err != nil {
				return err
			}
		default:
			v, err := p.dec.readValue()
			if err != nil {
				return err
			}
			p.drop("event is a JSON " + kindName(kind(v[0])) + ", expected an object")
		}
	}
}

// reserveMin is the smallest input whose events are estimated ahead; a
// variable so that tests can estimate on small traces.
var reserveMin int64 = 32 << 20

// reserve asks the builder for room for the events still to come in a file
// of known size, estimated from those kept in its first off bytes: with
// the room made at once, the builder keeps the events in one slice and
// finishes without a second copy of them.
func (p *parser) reserve(off int64) {
	p.reserveAt = 0
	n := p.b.NumEvents()
	if n == 0 || off <= 0 || off >= p.opt.ExpectBytes {
		return
	}
	// A tenth more than the rate so far: an estimate short by a few
	// events costs a chunk and the copy this saves.
	rest := float64(n) * float64(p.opt.ExpectBytes-off) / float64(off) * 1.1
	p.b.Grow(int(min(rest, float64(p.opt.MaxEvents-n))))
}

// readEvent reads the event object at the decoder's position into p.ev.
// One pass over its bytes both validates the object and takes the members
// the analysis needs; an object that straddles the end of the window is
// scanned again once the window has been refilled.
func (p *parser) readEvent() error {
	d := p.dec
	for {
		if end := p.scanEvent(d.pos); end >= 0 {
			d.pos = end
			d.done()
			p.intern()
			return nil
		}
		if err := d.stopped(); err != nil {
			return err
		}
	}
}

// scanEvent scans the event object starting at b[i], filling p.ev, and
// returns the index past it, -1 when the scanner stopped.
func (p *parser) scanEvent(i int) int {
	p.ev.reset()
	s := &p.dec.sc
	// The event is one level inside the open containers.
	s.depth = len(p.dec.frames)
	if s.depth >= maxDepth {
		s.stop = scanStop{at: i, deep: true}
		return -1
	}
	s.depth++
	return p.object(i, false)
}

// object scans the members of the object starting at b[i]: an event, or
// with args set the event's args. Its members' values are at depth
// s.depth.
func (p *parser) object(i int, args bool) int {
	s := &p.dec.sc
	b := s.b
	if i = s.space(i + 1); i >= len(b) {
		return s.more(i)
	}
	if b[i] == '}' {
		return i + 1
	}
	for {
		if b[i] != '"' {
			return s.bad(i, `at start of string (expecting '"')`)
		}
		var key []byte
		k, n := evOther, 0
		if !args && i+8 <= len(b) {
			k, n = eventKeyWord(binary.LittleEndian.Uint64(b[i:]))
		}
		if n > 0 {
			i += n
		} else {
			start := i
			if i = s.name(i); i < 0 {
				return -1
			}
			key = b[start+1 : i-1]
			if s.esc {
				key = unquote(&p.keyBuf, b[start:i], true)
			}
			k = eventKey(key)
		}
		// Compact JSON puts the colon right after the name and the value
		// right after the colon; white space takes the longer way.
		if i+1 < len(b) && b[i] == ':' && b[i+1] > ' ' {
			i++
		} else if i = p.colon(i); i < 0 {
			return -1
		}
		if args {
			i = p.argMember(argKeyOf(key), i)
		} else {
			i = p.member(k, i)
		}
		if i < 0 {
			return -1
		}
		if i+1 < len(b) && b[i] == ',' && b[i+1] == '"' {
			i++
			continue
		}
		if i = s.space(i); i >= len(b) {
			return s.more(i)
		}
		switch b[i] {
		case ',':
			if i = s.space(i + 1); i >= len(b) {
				return s.more(i)
			}
		case '}':
			return i + 1
		default:
			return s.bad(i, "after object value (expecting ',' or '}')")
		}
	}
}

// colon scans white space, the colon after a member's name and white
// space, and returns the index of the value.
func (p *parser) colon(i int) int {
	s := &p.dec.sc
	if i = s.space(i); i >= len(s.b) {
		return s.more(i)
	}
	if s.b[i] != ':' {
		return s.bad(i, "after object name (expecting ':')")
	}
	if i = s.space(i + 1); i >= len(s.b) {
		return s.more(i)
	}
	return i
}

// evKey names the event members the reader keeps.
type evKey uint8

const (
	evOther evKey = iota
	evPh
	evName
	evCat
	evTs
	evDur
	evPid
	evTid
	evID
	evArgs
)

func eventKey(key []byte) evKey {
	switch string(key) {
	case "ph":
		return evPh
	case "name":
		return evName
	case "cat":
		return evCat
	case "ts":
		return evTs
	case "dur":
		return evDur
	case "pid":
		return evPid
	case "tid":
		return evTid
	case "id":
		return evID
	case "args":
		return evArgs
	}
	return evOther
}

// Event member names as they stand in compact JSON, quotes and colon
// included, read as little-endian words.
var (
	wordPh   = keyWord(`"ph":`)
	wordTs   = keyWord(`"ts":`)
	wordID   = keyWord(`"id":`)
	wordCat  = keyWord(`"cat":`)
	wordDur  = keyWord(`"dur":`)
	wordPid  = keyWord(`"pid":`)
	wordTid  = keyWord(`"tid":`)
	wordName = keyWord(`"name":`)
	wordArgs = keyWord(`"args":`)
)

func keyWord(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.LittleEndian.Uint64(b[:])
}

// eventKeyWord recognises the name of an event member the reader keeps
// from x, the eight bytes at its opening quote, when the colon follows it
// at once, as in compact JSON: one comparison a name, where scanning the
// string and then switching on it take many. It returns the member and
// the length of its name, quotes included; 0 when x is not one of them,
// and the name is then scanned. A name matched so is a whole string
// token, for its bytes hold no quote, backslash or control byte.
func eventKeyWord(x uint64) (evKey, int) {
	switch x & (1<<40 - 1) {
	case wordPh:
		return evPh, 4
	case wordTs:
		return evTs, 4
	case wordID:
		return evID, 4
	}
	switch x & (1<<48 - 1) {
	case wordCat:
		return evCat, 5
	case wordDur:
		return evDur, 5
	case wordPid:
		return evPid, 5
	case wordTid:
		return evTid, 5
	}
	switch x & (1<<56 - 1) {
	case wordName:
		return evName, 6
	case wordArgs:
		return evArgs, 6
	}
	return evOther, 0
}

// member scans the value, starting at b[i], of the event member k.
func (p *parser) member(k evKey, i int) int {
	s := &p.dec.sc
	switch {
	case k == evOther:
		return s.value(i)
	case k == evArgs && s.b[i] == '{':
		if s.depth >= maxDepth {
			s.stop = scanStop{at: i, deep: true}
			return -1
		}
		s.depth++
		i = p.object(i, true)
		s.depth--
		return i
	}
	if k == evTs || k == evDur {
		if ns, end, ok := fastMicros(s.b, i); ok {
			if k == evTs {
				p.ev.ts, p.ev.hasTs = ns, true
			} else {
				p.ev.dur = ns
			}
			return end
		}
	}
	start := i
	if i = s.value(i); i >= 0 {
		p.field(k, s.b[start:i], s.esc)
	}
	return i
}

// field reads the value of one event member; esc says whether a string
// value holds escapes.
func (p *parser) field(k evKey, v []byte, esc bool) {
	e := &p.ev
	switch k {
	case evPh:
		if v[0] == '"' && len(v) == 3 {
			e.ph = v[1]
		} else {
			e.bad = "ph is not a one-letter string"
		}
	case evName:
		if p.isString(v, "name") {
			e.nameV, e.nameEsc = v, esc
		}
	case evCat:
		if p.isString(v, "cat") {
			e.catV, e.catEsc = v, esc
			e.catFirst = e.nameV == nil
		}
	case evTs:
		e.hasTs = p.micros(&e.ts, "ts", v, esc)
	case evDur:
		p.micros(&e.dur, "dur", v, esc) // absent, it is 0
	case evPid:
		p.ident(&e.pid, "pid", v, esc)
	case evTid:
		p.ident(&e.tid, "tid", v, esc)
	case evID:
		e.id, e.hasID = parseID(unquote(&p.scratch, v, esc))
	}
}

// isString reports whether v is a string; a value of another type spoils
// the event.
func (p *parser) isString(v []byte, what string) bool {
	if v[0] != '"' {
		p.ev.bad = what + " is a JSON " + kindName(kind(v[0])) + ", expected a string"
		return false
	}
	return true
}

// intern interns the event's name and cat, in the order they came.
func (p *parser) intern() {
	e := &p.ev
	if e.catFirst && e.catV != nil {
		e.cat = p.b.InternBytes(unquote(&p.scratch, e.catV, e.catEsc))
	}
	if e.nameV != nil {
		e.name = p.b.InternBytes(unquote(&p.scratch, e.nameV, e.nameEsc))
	}
	if !e.catFirst && e.catV != nil {
		e.cat = p.b.InternBytes(unquote(&p.scratch, e.catV, e.catEsc))
	}
	e.flowCat = e.catV != nil && isFlowCat(p.b.Str(e.cat))
}

// micros reads a time in microseconds, a number or a string holding one,
// and reports whether it did.
func (p *parser) micros(dst *int64, what string, v []byte, esc bool) bool {
	if k := kind(v[0]); k != '0' && k != '"' {
		p.ev.bad = what + " is a JSON " + kindName(k) + ", expected a number"
		return false
	}
	ns, ok := parseMicros(unquote(&p.scratch, v, esc))
	if !ok {
		p.ev.bad = "invalid " + what
		return false
	}
	// Bounded so that no difference or sum of times can overflow.
	if ns > maxTime || ns < -maxTime {
		p.ev.bad = what + " out of range"
		return false
	}
	*dst = ns
	return true
}

// ident reads a pid or tid, a number or a string, as its text.
func (p *parser) ident(dst *[]byte, what string, v []byte, esc bool) {
	if k := kind(v[0]); k != '0' && k != '"' {
		p.ev.bad = what + " is a JSON " + kindName(k) + ", expected a number or string"
		return
	}
	*dst = append((*dst)[:0], unquote(&p.scratch, v, esc)...)
}

// argKey names the arguments the reader keeps.
type argKey uint8

const (
	argOther argKey = iota
	argCorr
	argDevice
	argStream
	argKind
	argName
	argBytes
)

// argKeyOf returns the argument named key.
func argKeyOf(key []byte) argKey {
	switch string(key) {
	case "correlation", "correlation_id":
		return argCorr
	case "device":
		return argDevice
	case "stream":
		return argStream
	case "kind":
		return argKind
	case "name", "labels":
		return argName
	case "bytes":
		return argBytes
	}
	return argOther
}

// argMember scans the value, starting at b[i], of the argument which.
func (p *parser) argMember(which argKey, i int) int {
	s := &p.dec.sc
	if which == argOther {
		return s.value(i)
	}
	start := i
	if i = s.value(i); i >= 0 {
		p.arg(which, s.b[start:i], s.esc)
	}
	return i
}

// arg stores one wanted argument, a number or a string.
func (p *parser) arg(which argKey, v []byte, esc bool) {
	e := &p.ev
	if k := kind(v[0]); k != '"' && k != '0' {
		return
	}
	s := unquote(&p.scratch, v, esc)
	switch which {
	case argCorr:
		e.corr, _ = parseUint(s)
	case argBytes:
		if n, ok := parseUint(s); ok && n <= math.MaxInt64 {
			e.bytes = int64(n)
		}
	case argDevice, argStream:
		n, ok := parseUint(s)
		if !ok || n > math.MaxInt32 {
			return
		}
		if which == argDevice {
			e.device = int64(n)
		} else {
			e.stream = int64(n)
		}
	case argKind:
		if isDtoH(s) {
			e.flags |= trace.FlagDtoH
		}
	case argName: // only metadata events use it
		e.argName = append(e.argName[:0], s...)
		e.hasArg = true
	}
}

func isDtoH(s []byte) bool {
	return bytes.Contains(s, []byte("DtoH")) || bytes.Contains(s, []byte("D2H")) ||
		bytes.Contains(s, []byte("DeviceToHost"))
}

func isFlowCat(cat string) bool {
	switch cat {
	case "ac2g", "async", "async_cpu_to_gpu":
		return true
	}
	return false
}
