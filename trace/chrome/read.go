package chrome

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tracegap/tracegap/trace"
)

func init() {
	trace.Register(trace.Format{Name: "chrome", Sniff: Sniff, Read: Read})
}

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
// sets Trace.Truncated. Read fails only when nothing usable is left.
func Read(r io.Reader, opt trace.Options) (*trace.Trace, error) {
	if t, ok, err := readParallel(opt); ok {
		return t, err
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	var skipped int64
	if head, _ := br.Peek(3); len(skipBOM(head)) != len(head) {
		br.Discard(3)
		skipped = 3
	}
	p := newParser(br, opt)
	p.base = skipped
	if err := p.document(); err != nil {
		return nil, err
	}
	return p.finish()
}

// document reads the top-level value. It returns an error only when the
// input is unusable; a cut after some events is recorded on the builder.
func (p *parser) document() error {
	tok, err := p.dec.ReadToken()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("no JSON value (empty or only white space), expected a JSON object or array of trace events")
		}
		return p.jsonError(err)
	}
	switch tok.Kind() {
	case '[':
		p.sawEvents = true
		err = p.events()
	case '{':
		err = p.topObject()
	default:
		return fmt.Errorf("top-level JSON %s at byte %d, expected an object with traceEvents or an array of events", kindName(tok.Kind()), p.base)
	}
	if err != nil {
		return p.cut(err)
	}
	if !p.sawEvents {
		return errors.New("no traceEvents array in the top-level object: not a Chrome trace")
	}
	// Only white space may follow the top-level value.
	if _, err := p.dec.ReadToken(); err != nil && !errors.Is(err, io.EOF) {
		off := p.offset()
		var serr *jsontext.SyntacticError
		switch {
		case limitError(err, off) != nil:
			return limitError(err, off)
		case errors.As(err, &serr):
			p.b.Warn("ignored trailing data at byte %d after the trace", p.base+serr.ByteOffset)
		default: // the trace is whole, but what follows could not be read
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // drop the decoder's "read error" wrapping
			}
			p.b.Warn("after the end of the trace at byte %d: %v", off, err)
		}
	}
	return nil
}

// cut decides what a read error means: with events already parsed the
// trace is kept as truncated; otherwise the error is returned.
func (p *parser) cut(err error) error {
	off := p.offset()
	var serr *jsontext.SyntacticError
	if errors.As(err, &serr) {
		off = p.base + serr.ByteOffset
	}
	if lerr := limitError(err, off); lerr != nil {
		return lerr
	}
	eof := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
	// The decoder may report a failed read as a value cut short; the
	// input knows why it stopped.
	why := p.src.failure
	n := p.b.NumEvents()
	if n == 0 {
		switch {
		case why != nil:
			return fmt.Errorf("truncated at byte %d before any event (%w)", off, why)
		case eof && serr != nil:
			return fmt.Errorf("truncated at byte %d before any event", off)
		}
		return p.jsonError(err)
	}
	p.b.Truncated = true
	switch {
	case why != nil:
		p.b.Warn("truncated at byte %d (%v): kept %d events", off, why, n)
	case serr != nil && eof:
		p.b.Warn("truncated at byte %d: kept %d events", off, n)
	case serr != nil:
		p.b.Warn("invalid JSON at byte %d (%v): kept %d events before it", off, serr.Err, n)
	default: // a read error: a cut gzip stream, an I/O failure
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // drop the decoder's "read error" wrapping
		}
		p.b.Warn("truncated at byte %d (%v): kept %d events", off, err, n)
	}
	return nil
}

// fatalError stops reading whatever has been parsed so far.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// jsonError turns a decoder error into one line with the byte offset.
func (p *parser) jsonError(err error) error {
	var serr *jsontext.SyntacticError
	if errors.As(err, &serr) {
		if errors.Is(serr.Err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("truncated at byte %d before any event", p.base+serr.ByteOffset)
		}
		return fmt.Errorf("invalid JSON at byte %d: %v", p.base+serr.ByteOffset, serr.Err)
	}
	if inner := errors.Unwrap(err); inner != nil {
		err = inner // drop the decoder's "read error" wrapping
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated at byte %d before any event (%w)", p.offset(), err)
	}
	return fmt.Errorf("reading at byte %d: %w", p.offset(), err)
}

func (p *parser) offset() int64 { return p.base + p.dec.InputOffset() }

func kindName(k jsontext.Kind) string {
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
	for p.dec.PeekKind() != '}' {
		name, err := p.dec.ReadValue()
		if err != nil {
			return err
		}
		switch string(unquoteAny(&p.keyBuf, name)) {
		case "traceEvents":
			err = p.traceEvents()
		case "distributedInfo":
			err = p.distributedInfo()
		case "deviceProperties":
			err = p.deviceProperties()
		case "baseTimeNanoseconds":
			err = p.metaValue("base_time_ns")
		case "traceName":
			err = p.metaValue("trace_name")
		default:
			err = p.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := p.dec.ReadToken()
	return err
}

func (p *parser) traceEvents() error {
	if k := p.dec.PeekKind(); k != '[' {
		if k == 0 { // a read or syntax error: let the next read report it
			_, err := p.dec.ReadValue()
			return err
		}
		v, err := p.dec.ReadValue()
		if err != nil {
			return err
		}
		off := p.offset() - int64(len(v))
		return &fatalError{fmt.Errorf("traceEvents at byte %d is a JSON %s, expected an array of events", off, kindName(k))}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	p.sawEvents = true
	return p.events()
}

// metaValue stores a scalar top-level member in Meta under key.
func (p *parser) metaValue(key string) error {
	v, err := p.dec.ReadValue()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case '"', '0':
		p.b.Meta[key] = string(unquoteAny(&p.scratch, v))
	}
	return nil
}

// distributedInfo keeps the rank and world size of a distributed run.
func (p *parser) distributedInfo() error {
	if p.dec.PeekKind() != '{' {
		return p.dec.SkipValue()
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	for p.dec.PeekKind() != '}' {
		name, err := p.dec.ReadValue()
		if err != nil {
			return err
		}
		switch key := string(unquoteAny(&p.keyBuf, name)); key {
		case "rank", "world_size", "backend":
			err = p.metaValue(key)
		default:
			err = p.dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := p.dec.ReadToken()
	return err
}

// deviceProperties keeps the device names as Meta["device.<id>.name"].
func (p *parser) deviceProperties() error {
	if p.dec.PeekKind() != '[' {
		return p.dec.SkipValue()
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	for p.dec.PeekKind() != ']' {
		if p.dec.PeekKind() != '{' {
			if err := p.dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if err := p.deviceProperty(); err != nil {
			return err
		}
	}
	_, err := p.dec.ReadToken()
	return err
}

func (p *parser) deviceProperty() error {
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	var id, name string
	for p.dec.PeekKind() != '}' {
		key, err := p.dec.ReadValue()
		if err != nil {
			return err
		}
		k := string(unquoteAny(&p.keyBuf, key))
		if k != "id" && k != "name" {
			if err := p.dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		v, err := p.dec.ReadValue()
		if err != nil {
			return err
		}
		if v.Kind() == '"' || v.Kind() == '0' {
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
	_, err := p.dec.ReadToken()
	return err
}
