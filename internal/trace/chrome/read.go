package chrome

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/trace"
)

func init() {
	trace.Register(trace.Format{
		Name:  "chrome",
		Title: "Chrome trace-event JSON",
		// First: its sniffer looks at a few bytes, XPlane's walks a schema.
		Order: 10,
		// PyTorch/Kineto, XProf's conversions, anything else.
		Suffixes:  []string{".pt.trace.json", ".trace.json", ".json"},
		Sniff:     Sniff,
		Holds:     Holds,
		Read:      Read,
		ProbeRank: ProbeRank,
		Need:      Need,
	})
}

// minEvent is the fewest bytes an event the reader keeps takes, with the
// comma that separates it from the next: {"ph":"X","ts":1}, one ts being
// needed.
const minEvent = 18

// Need returns an upper bound on the memory that reading and analysing
// plain bytes of Chrome JSON takes: its events, at most one per minEvent
// bytes, and half its bytes besides (names, the reading buffers).
// Its events are not counted (events is -1): that would take a JSON scan.
func Need(plain, events int64) int64 { return plain/2 + trace.EventsNeed(plain, events, minEvent) }

// Sniff reports whether head looks like Chrome trace-event JSON: after an
// optional UTF-8 byte order mark and white space, an object or an array,
// whose next byte (past white space) can follow its opening in JSON. That
// byte tells JSON from an XSpace whose first plane is 91 or 123 bytes
// long: it starts "\n[" or "\n{" too. A full 512-byte head of nothing but
// white space is taken as JSON as well: no binary format starts so.
func Sniff(head []byte) bool {
	head = skipBOM(head)
	i := skipSpace(head, 0)
	if i == len(head) {
		return len(head) >= 509
	}
	open := head[i]
	if open != '{' && open != '[' {
		return false
	}
	j := skipSpace(head, i+1)
	switch {
	case j == len(head):
		return true
	case open == '{':
		return head[j] == '"' || head[j] == '}'
	}
	return strings.IndexByte(`{["]-0123456789tfn`, head[j]) >= 0
}

// Holds reports whether head, the start of a JSON file, names trace
// events: a traceEvents member or an event's phase ("ph"). metrics.json
// or package.json beside a trace has neither.
func Holds(head []byte) bool {
	return bytes.Contains(head, []byte(`"traceEvents"`)) || bytes.Contains(head, []byte(`"ph"`))
}

// skipSpace returns the index of the first byte of b from i on that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

var bom = []byte{0xef, 0xbb, 0xbf}

func skipBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == bom[0] && b[1] == bom[1] && b[2] == bom[2] {
		return b[3:]
	}
	return b
}

// Read reads a Chrome trace-event JSON document, as an object holding a
// traceEvents array or as a bare array of events, from r (already
// decompressed). A document cut short keeps the events before the cut and
// sets Trace.Truncated (Trace.Invalid for invalid JSON part-way). Read
// fails only when nothing usable is left.
func Read(r io.Reader, opt trace.Options) (*trace.Trace, error) {
	if t, ok, err := readParallel(opt); ok {
		return t, err
	}
	p := newParser(r, opt)
	if err := p.document(); err != nil {
		return nil, err
	}
	return p.finish()
}

// document reads the top-level value. It returns an error only when the
// input is unusable; a cut after some events is recorded on the builder.
func (p *parser) document() error {
	d := p.dec
	d.skipBOM()
	start := d.offset()
	k, err := d.readToken()
	if err == io.EOF && d.failure != nil { // not the end: the input failed
		err = d.ended()
	}
	if err != nil {
		if err == io.EOF {
			return errors.New("no JSON value (empty or only white space), expected a JSON object or array of trace events")
		}
		return p.cut(err)
	}
	switch k {
	case '[':
		p.sawEvents = true
		err = p.events()
	case '{':
		err = p.topObject()
	default:
		return fmt.Errorf("top-level JSON %s at byte %d, expected an object with traceEvents or an array of events", kindName(k), start)
	}
	if err != nil {
		return p.cut(err)
	}
	if !p.sawEvents {
		return errors.New("no traceEvents array in the top-level object: not a Chrome trace")
	}
	return p.trailing()
}

// trailing checks that only white space follows the top-level value.
func (p *parser) trailing() error {
	d := p.dec
	_, ok := d.space()
	switch {
	case ok:
		p.b.Warn("ignored trailing data at byte %d after the trace", d.offset())
	case d.err != nil: // the span cap
		return d.err
	case errors.Is(d.failure, trace.ErrLimit):
		return d.failure
	case d.failure != nil: // the trace is whole, but what follows could not be read
		p.b.Warn("after the end of the trace at byte %d: %v", d.offset(), d.failure)
	}
	return nil
}

// cut decides what a read error means: with events already parsed the
// trace is kept as truncated; otherwise the error is returned.
func (p *parser) cut(err error) error {
	if lerr := limitError(err); lerr != nil {
		return lerr
	}
	var serr *syntaxError
	if !errors.As(err, &serr) {
		return err
	}
	// Input that ended early may have ended for a reason: a cut gzip
	// stream, an I/O error, one of trace.Read's limits.
	eof := serr.err == io.ErrUnexpectedEOF
	why := p.dec.failure
	if eof && errors.Is(why, trace.ErrLimit) {
		return why
	}
	n := p.b.NumEvents()
	if n == 0 {
		switch {
		case eof && why != nil:
			return fmt.Errorf("truncated at byte %d before any event (%w)", serr.off, why)
		case eof:
			return fmt.Errorf("truncated at byte %d before any event", serr.off)
		}
		return serr
	}
	p.b.Truncated, p.b.Invalid = eof, !eof // only an input that ended early is truncated
	switch {
	case eof && why != nil:
		p.b.Warn("truncated at byte %d (%v): kept %s", serr.off, why, human.Count(n, "event"))
	case eof:
		p.b.Warn("truncated at byte %d: kept %s", serr.off, human.Count(n, "event"))
	default:
		p.b.Warn("invalid JSON at byte %d (%v): kept %s before it", serr.off, serr.err, human.Count(n, "event"))
	}
	return nil
}

// fatalError stops reading whatever has been parsed so far.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

func (p *parser) offset() int64 { return p.dec.offset() }

// kindName names a token kind as returned by kind.
func kindName(k byte) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// topObject reads the members of the top-level object. Members before and
// after traceEvents are read alike.
func (p *parser) topObject() error {
	return p.members(func(key string) error {
		switch key {
		case "traceEvents":
			return p.traceEvents()
		case "distributedInfo":
			return p.distributedInfo()
		case "deviceProperties":
			return p.deviceProperties()
		case "baseTimeNanoseconds":
			return p.metaValue("base_time_ns")
		case "traceName":
			return p.metaValue("trace_name")
		case "num_workers", "grain_worker_count":
			// Loader settings a script added with the profiler's
			// add_metadata_json: the worker count the analysis reads.
			return p.metaValue(key)
		}
		return p.dec.skipValue()
	})
}

// members reads the members of an object whose '{' has been read, up to
// and including its '}', calling each with every member's key to read
// the value.
func (p *parser) members(each func(key string) error) error {
	for p.dec.peekKind() != '}' {
		name, err := p.dec.readValue()
		if err != nil {
			return err
		}
		if err := each(string(unquoteAny(&p.keyBuf, name))); err != nil {
			return err
		}
	}
	_, err := p.dec.readToken()
	return err
}

func (p *parser) traceEvents() error {
	if k := p.dec.peekKind(); k != '[' {
		if k == 0 { // a read or syntax error: let the next read report it
			_, err := p.dec.readValue()
			return err
		}
		v, err := p.dec.readValue()
		if err != nil {
			return err
		}
		off := p.offset() - int64(len(v))
		return &fatalError{fmt.Errorf("traceEvents at byte %d is a JSON %s, expected an array of events", off, kindName(k))}
	}
	if _, err := p.dec.readToken(); err != nil {
		return err
	}
	p.sawEvents = true
	return p.events()
}

// metaValue stores a scalar top-level member in Meta under key.
func (p *parser) metaValue(key string) error {
	v, err := p.dec.readValue()
	if err != nil {
		return err
	}
	switch kind(v[0]) {
	case '"', '0':
		p.b.Meta[key] = string(unquoteAny(&p.scratch, v))
	}
	return nil
}

// distributedInfo keeps the rank and world size of a distributed run.
func (p *parser) distributedInfo() error {
	if p.dec.peekKind() != '{' {
		return p.dec.skipValue()
	}
	if _, err := p.dec.readToken(); err != nil {
		return err
	}
	return p.members(func(key string) error {
		switch key {
		case "rank", "world_size", "backend":
			return p.metaValue(key)
		}
		return p.dec.skipValue()
	})
}

// deviceProperties keeps the device names as Meta["device.<id>.name"].
func (p *parser) deviceProperties() error {
	if p.dec.peekKind() != '[' {
		return p.dec.skipValue()
	}
	if _, err := p.dec.readToken(); err != nil {
		return err
	}
	for p.dec.peekKind() != ']' {
		if p.dec.peekKind() != '{' {
			if err := p.dec.skipValue(); err != nil {
				return err
			}
			continue
		}
		if err := p.deviceProperty(); err != nil {
			return err
		}
	}
	_, err := p.dec.readToken()
	return err
}

func (p *parser) deviceProperty() error {
	if _, err := p.dec.readToken(); err != nil {
		return err
	}
	var id, name string
	for p.dec.peekKind() != '}' {
		key, err := p.dec.readValue()
		if err != nil {
			return err
		}
		k := string(unquoteAny(&p.keyBuf, key))
		if k != "id" && k != "name" {
			if err := p.dec.skipValue(); err != nil {
				return err
			}
			continue
		}
		v, err := p.dec.readValue()
		if err != nil {
			return err
		}
		if vk := kind(v[0]); vk == '"' || vk == '0' {
			if k == "id" {
				id = string(unquoteAny(&p.scratch, v))
			} else {
				name = string(unquoteAny(&p.scratch, v))
			}
		}
	}
	if id != "" && name != "" {
		p.b.Meta["device."+id+".name"] = name
	}
	_, err := p.dec.readToken()
	return err
}
