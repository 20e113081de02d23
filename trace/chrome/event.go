package chrome

import (
	"bytes"
	"io"
	"math"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tracegap/tracegap/trace"
)

// maxTime bounds ts and dur in nanoseconds (73 years): far beyond any real
// trace, and small enough that rebasing and end times never overflow.
const maxTime = 1 << 61

// parser walks the token stream and feeds a trace.Builder. Everything in
// the per-event path reuses its buffers: an event costs no allocation
// unless it brings a name, category or thread not seen before.
type parser struct {
	dec  *jsontext.Decoder
	src  *spanReader // the decoder's input
	b    *trace.Builder
	opt  trace.Options
	base int64 // bytes skipped before the decoder's input (a BOM)

	// sawEvents is set once an event array has been entered.
	sawEvents bool

	ev      rawEvent
	scratch []byte // unescaped string values
	keyBuf  []byte // unescaped member names
	sc      scanner
	key     []byte // pid NUL tid of the current event

	// Slots are the (pid, tid) pairs seen, in events, flows or metadata;
	// a slot gets a builder track with its first kept event.
	slots    map[string]int32
	info     []slot
	lastSlot int32
	lastKey  []byte

	procNames  map[string]string // pid -> process_name
	procLabels map[string]string // pid -> process_labels
	flows      []flow
	splice     *splice // set in a parallel read
	pending    int     // B events waiting for their E, on all threads

	dropped      int    // events dropped so far
	firstDrop    string // the reason of the first
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
	id   uint64
}

// rawEvent holds the fields of the event being read.
type rawEvent struct {
	ph        byte
	name, cat trace.StrID
	flowCat   bool // cat is a launch flow category (ac2g, async, ...)
	pid, tid  []byte
	ts, dur   int64
	hasTs     bool
	corr      uint64
	device    int64
	stream    int64
	flags     trace.Flag
	id        uint64
	hasID     bool
	argName   []byte // args.name of metadata events
	hasArg    bool
	bad       string // drop reason, when the event is unusable
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
	sr := &spanReader{r: r, max: opt.MaxValueBytes}
	p := &parser{
		// Duplicate names are allowed (the last wins) and invalid UTF-8 is
		// kept: neither makes a trace unusable, and checking costs time.
		dec:        jsontext.NewDecoder(sr, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)),
		b:          trace.NewBuilder(),
		opt:        opt,
		slots:      map[string]int32{},
		lastSlot:   -1,
		procNames:  map[string]string{},
		procLabels: map[string]string{},
	}
	sr.dec = p.dec
	p.src = sr
	return p
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
	out, err := jsontext.AppendUnquote((*buf)[:0], v)
	if err != nil {
		return v[1 : len(v)-1]
	}
	*buf = out
	return out
}

// unquoteAny is unquote for a value not scanned by a scanner.
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
		switch p.dec.PeekKind() {
		case ']':
			_, err := p.dec.ReadToken()
			return err
		case '{':
			// An event is a small value: read it whole, validated by the
			// decoder, and walk its members with the scanner, which costs
			// far less than a decoder call per member.
			v, err := p.dec.ReadValue()
			if err != nil {
				return err
			}
			if err := p.event(v); err != nil {
				return err
			}
		default:
			v, err := p.dec.ReadValue()
			if err != nil {
				return err
			}
			p.drop("event is a JSON " + kindName(v.Kind()) + ", expected an object")
		}
	}
}

// event reads one event object and keeps it if it is usable.
func (p *parser) event(v []byte) error {
	p.read(v)
	return p.keep()
}

// read fills p.ev from one event object; keep then decides.
func (p *parser) read(v []byte) {
	e := &p.ev
	e.reset()
	sc := &p.sc
	if !sc.open(v) {
		e.bad = "event is not an object"
		return
	}
	for {
		name, ok := sc.name()
		if !ok {
			break
		}
		key := unquote(&p.keyBuf, name, sc.esc)
		if string(key) == "args" && sc.peek() == '{' {
			sc.i++
			p.args(sc)
			continue
		}
		val := sc.value()
		if len(val) == 0 {
			break
		}
		p.field(key, val, sc.esc)
	}
}

// field reads the value of one event member; esc says whether a string
// value holds escapes.
func (p *parser) field(name, v []byte, esc bool) {
	e := &p.ev
	switch string(name) {
	case "ph":
		if v[0] == '"' && len(v) == 3 {
			e.ph = v[1]
		} else {
			e.bad = "ph is not a one-letter string"
		}
	case "name":
		p.str(&e.name, "name", v, esc)
	case "cat":
		p.str(&e.cat, "cat", v, esc)
		e.flowCat = isFlowCat(p.b.Str(e.cat))
	case "ts":
		e.hasTs = p.micros(&e.ts, "ts", v, esc)
	case "dur":
		p.micros(&e.dur, "dur", v, esc) // absent, it is 0
	case "pid":
		p.ident(&e.pid, "pid", v, esc)
	case "tid":
		p.ident(&e.tid, "tid", v, esc)
	case "id":
		e.id, e.hasID = parseID(unquote(&p.scratch, v, esc))
	}
}

// str interns a string member; a value of another type spoils the event.
func (p *parser) str(dst *trace.StrID, what string, v []byte, esc bool) {
	if v[0] != '"' {
		p.ev.bad = what + " is a JSON " + kindName(jsontext.Value(v).Kind()) + ", expected a string"
		return
	}
	*dst = p.b.InternBytes(unquote(&p.scratch, v, esc))
}

// micros reads a time in microseconds, a number or a string holding one,
// and reports whether it did.
func (p *parser) micros(dst *int64, what string, v []byte, esc bool) bool {
	if k := jsontext.Value(v).Kind(); k != '0' && k != '"' {
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
	if k := jsontext.Value(v).Kind(); k != '0' && k != '"' {
		p.ev.bad = what + " is a JSON " + kindName(k) + ", expected a number or string"
		return
	}
	*dst = append((*dst)[:0], unquote(&p.scratch, v, esc)...)
}

// args reads, in place, the members of an event's args object, keeping the
// few the analysis needs, and consumes its closing brace.
func (p *parser) args(sc *scanner) {
	for {
		name, ok := sc.name()
		if !ok {
			sc.close()
			return
		}
		var which argKey
		switch string(unquote(&p.keyBuf, name, sc.esc)) {
		case "correlation", "correlation_id":
			which = argCorr
		case "device":
			which = argDevice
		case "stream":
			which = argStream
		case "kind":
			which = argKind
		case "name", "labels":
			which = argName
		default:
			if len(sc.value()) == 0 {
				sc.i = len(sc.b)
				return
			}
			continue
		}
		v := sc.value()
		if len(v) == 0 {
			sc.i = len(sc.b)
			return
		}
		p.arg(which, v, sc.esc)
	}
}

// argKey names the arguments the reader keeps.
type argKey uint8

const (
	argCorr argKey = iota
	argDevice
	argStream
	argKind
	argName
)

// arg stores one wanted argument, a number or a string.
func (p *parser) arg(which argKey, v []byte, esc bool) {
	e := &p.ev
	if v[0] != '"' && jsontext.Value(v).Kind() != '0' {
		return
	}
	s := unquote(&p.scratch, v, esc)
	switch which {
	case argCorr:
		e.corr, _ = parseUint(s)
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
