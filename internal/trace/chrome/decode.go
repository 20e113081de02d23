package chrome

import (
	"errors"
	"fmt"
	"io"

	"github.com/tracegap/tracegap/trace"
)

// decoder reads JSON text from an io.Reader through a reused window. The
// document around the events is read a token at a time, in the manner of
// jsontext.Decoder (peekKind, readToken, readValue, skipValue), which
// keeps the structure: the separators due between tokens and the open
// containers. The events are read a whole object at a time by the
// parser's own scan (event.go), on the same window.
//
// A value or token must lie whole in the window while it is scanned: when
// the window ends inside one, the window is refilled, keeping the bytes
// from the token's start, and the token is scanned again. No token, value
// or run of white space may run for more than max bytes: the window would
// have to hold it.
type decoder struct {
	sc  scanner // sc.b is the filled part of buf
	r   io.Reader
	buf []byte
	pos int // the next byte to read in buf

	base int64 // input offset of buf[0]
	// span is the input offset where the current span began: the end of
	// the last complete token. White space and a token from there count
	// against max.
	span int64
	max  int64

	eof bool // r has no more input
	// failure is r's last error other than io.EOF: a cut gzip stream, an
	// I/O error, a limit of trace.Read's.
	failure error
	err     error // the error that stopped reading, returned from then on

	frames []frame // the open containers, innermost last
}

// frame is an open object or array.
type frame struct {
	open byte // '{' or '['
	next byte // what comes next: one of the states below
}

// What a frame expects next.
const (
	nextFirst = iota // an element (in an object, a name) or the closing bracket
	nextSep          // a comma or the closing bracket
	nextElem         // after a comma: an element (in an object, a name)
	nextColon        // after an object member's name: a colon
	nextValue        // after the colon: the member's value
)

// windowBytes is the window's size; it grows only for a token longer than
// it. Large reads keep the cost of refilling, and of scanning again the
// event that straddles the refill, small against the bytes read.
const windowBytes = 4 << 20

// errTooDeep is returned by scanner.stopErr for a value nested too deep.
var errTooDeep = errors.New("exceeded max depth")

// syntaxError is invalid JSON, or input ending inside the document
// (err is io.ErrUnexpectedEOF), at an input offset.
type syntaxError struct {
	off int64
	err error
}

func (e *syntaxError) Error() string { return fmt.Sprintf("invalid JSON at byte %d: %v", e.off, e.err) }
func (e *syntaxError) Unwrap() error { return e.err }

// newDecoder returns a decoder of r; its window is made on the first read
// unless d.buf is set before.
func newDecoder(r io.Reader, max int64) *decoder {
	return &decoder{r: r, max: max}
}

// offset is the input offset of the next byte to read: after a token has
// been read, just past its end.
func (d *decoder) offset() int64 { return d.base + int64(d.pos) }

// more reads more input into the window, keeping the bytes from d.pos on.
// It reports whether there is anything new to scan; when not, the input
// has ended (d.eof) or d.err says why reading stopped.
func (d *decoder) more() bool {
	if d.eof || d.err != nil {
		return false
	}
	read := d.base + int64(len(d.sc.b)) // input offset of the window's end
	room := d.max - (read - d.span)
	if room <= 0 {
		d.err = &fatalError{trace.Limitf("JSON value or white space from byte %d runs past %d bytes, longer than any trace event (raise --max-value if the trace is genuine)", d.span, d.max)}
		return false
	}
	if d.buf == nil {
		d.buf = make([]byte, windowBytes)
	}
	kept := len(d.sc.b) - d.pos
	if kept > len(d.buf)/2 { // a long token: grow the window
		buf := make([]byte, 2*len(d.buf))
		copy(buf, d.sc.b[d.pos:])
		d.buf = buf
	} else {
		copy(d.buf, d.sc.b[d.pos:])
	}
	d.base += int64(d.pos)
	d.pos = 0
	n := kept
	limit := int(min(int64(len(d.buf)), int64(kept)+room))
	for zero := 0; n < limit && zero < 100; {
		k, err := d.r.Read(d.buf[n:limit])
		n += k
		if k == 0 {
			zero++
		}
		if err != nil {
			d.eof = true
			if err != io.EOF {
				d.failure = err
			}
			break
		}
	}
	d.sc.b, d.sc.final = d.buf[:n], d.eof
	return n > kept || d.eof
}

// skipBOM skips a UTF-8 byte order mark at the start of the input.
func (d *decoder) skipBOM() {
	for len(d.sc.b) < 3 && d.more() {
	}
	if b := d.sc.b; len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		d.pos, d.span = 3, 3
	}
}

// space skips white space, reading more input as needed, and returns the
// next byte; ok is false at the end of input or if reading stopped.
func (d *decoder) space() (c byte, ok bool) {
	for {
		if d.pos = d.sc.space(d.pos); d.pos < len(d.sc.b) {
			return d.sc.b[d.pos], true
		}
		if !d.more() || len(d.sc.b) == d.pos {
			return 0, false
		}
	}
}

// ended returns the error for input that ended, or stopped being read,
// where more was needed.
func (d *decoder) ended() error {
	if d.err == nil {
		d.err = &syntaxError{off: d.base + int64(len(d.sc.b)), err: io.ErrUnexpectedEOF}
	}
	return d.err
}

// stopped is called when a scan from d.pos stopped. It returns nil when
// more input has been read and the scan should be repeated, else the
// error that ends reading.
func (d *decoder) stopped() error {
	if err := d.sc.stopErr(); err != nil {
		off := d.base + int64(d.sc.stop.at)
		if err == errTooDeep {
			err = &fatalError{trace.Limitf("JSON nested more than %d levels deep at byte %d, deeper than any trace", maxDepth, off)}
		} else {
			err = &syntaxError{off: off, err: err}
		}
		d.err = err
		return err
	}
	if d.more() {
		return nil
	}
	return d.ended()
}

// fail records an invalid character at d.pos.
func (d *decoder) fail(why string) error {
	d.err = &syntaxError{off: d.offset(), err: fmt.Errorf("invalid character %s %s", quoteChar(d.sc.b[d.pos:]), why)}
	return d.err
}

// peek skips white space and the separator due before the next token, and
// returns the token's first byte, or 0 with d.err set if there is none (at
// the end of input outside any container, d.err stays nil).
func (d *decoder) peek() byte {
	for d.err == nil {
		c, ok := d.space()
		if !ok {
			if len(d.frames) > 0 {
				d.ended()
			}
			return 0
		}
		if len(d.frames) == 0 {
			return c
		}
		f := &d.frames[len(d.frames)-1]
		switch {
		case f.next == nextColon && c == ':':
			f.next = nextValue
		case f.next == nextColon:
			d.fail("after object name (expecting ':')")
			return 0
		case f.next == nextSep && c == ',':
			f.next = nextElem
		case f.next == nextSep && c != f.open+2: // '}' is '{'+2, ']' is '['+2
			if f.open == '{' {
				d.fail("after object value (expecting ',' or '}')")
			} else {
				d.fail("after array element (expecting ',' or ']')")
			}
			return 0
		default:
			return c
		}
		d.pos++
	}
	return 0
}

// kind returns the kind of the token starting with c, as jsontext names
// kinds: '0' for a number, 0 for no token.
func kind(c byte) byte {
	switch c {
	case '"', '{', '}', '[', ']', 't', 'f', 'n':
		return c
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0'
	}
	return 0
}

// peekKind returns the kind of the next token, 0 at the end of input or
// when the next read will fail.
func (d *decoder) peekKind() byte { return kind(d.peek()) }

// wantName reports whether the next token is an object member's name.
func (d *decoder) wantName() bool {
	if len(d.frames) == 0 {
		return false
	}
	f := d.frames[len(d.frames)-1]
	return f.open == '{' && (f.next == nextFirst || f.next == nextElem)
}

// done moves the innermost container past the token just read, which
// ended at d.pos: a name or a whole value.
func (d *decoder) done() {
	d.span = d.offset()
	if len(d.frames) == 0 {
		return
	}
	f := &d.frames[len(d.frames)-1]
	if d.wantName() {
		f.next = nextColon
	} else {
		f.next = nextSep
	}
}

// readToken reads the next token and returns its kind. Strings, numbers
// and literals are read as by readValue; brackets open and close
// containers.
func (d *decoder) readToken() (byte, error) {
	c := d.peek()
	if d.err != nil {
		return 0, d.err
	}
	if c == 0 && d.pos >= len(d.sc.b) {
		return 0, io.EOF
	}
	switch c {
	case '{', '[':
		if d.wantName() {
			return 0, d.fail(`at start of string (expecting '"')`)
		}
		if len(d.frames) >= maxDepth {
			d.err = &fatalError{trace.Limitf("JSON nested more than %d levels deep at byte %d, deeper than any trace", maxDepth, d.offset())}
			return 0, d.err
		}
		d.pos++
		d.done()
		d.frames = append(d.frames, frame{open: c})
		d.span = d.offset()
		return c, nil
	case '}', ']':
		n := len(d.frames)
		if n == 0 || c != d.frames[n-1].open+2 || d.frames[n-1].next != nextFirst && d.frames[n-1].next != nextSep {
			if d.wantName() {
				return 0, d.fail(`at start of string (expecting '"')`)
			}
			return 0, d.fail("at start of value")
		}
		d.frames = d.frames[:n-1]
		d.pos++
		d.span = d.offset()
		return c, nil
	}
	v, err := d.readValue()
	if err != nil {
		return 0, err
	}
	return kind(v[0]), nil
}

// readValue reads the next value, or an object member's name, whole and
// validated. The bytes are valid until the next read.
func (d *decoder) readValue() ([]byte, error) {
	c := d.peek()
	if d.err != nil {
		return nil, d.err
	}
	if c == 0 && d.pos >= len(d.sc.b) {
		return nil, io.EOF
	}
	name := d.wantName()
	switch {
	case name && c != '"':
		return nil, d.fail(`at start of string (expecting '"')`)
	case c == '}' || c == ']':
		return nil, d.fail("at start of value")
	}
	for {
		d.sc.depth = len(d.frames)
		if end := d.sc.value(d.pos); end >= 0 {
			v := d.sc.b[d.pos:end]
			d.pos = end
			d.done()
			return v, nil
		}
		if err := d.stopped(); err != nil {
			return nil, err
		}
	}
}

// skipValue reads the next value, a container a token at a time, so that
// however large it is the window holds no more than one of its tokens.
func (d *decoder) skipValue() error {
	switch d.peekKind() {
	case '{', '[':
		depth := len(d.frames)
		for {
			if _, err := d.readToken(); err != nil {
				return err
			}
			if len(d.frames) <= depth {
				return nil
			}
		}
	}
	_, err := d.readValue()
	return err
}
