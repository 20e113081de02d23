package xplane

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Wire types, spelled out as protowire has them.
const (
	varintType = protowire.VarintType
	fixed32    = protowire.Fixed32Type
	fixed64    = protowire.Fixed64Type
	bytesType  = protowire.BytesType
)

// A FormatError says where the input stops being a valid XSpace and what
// was expected there.
type FormatError struct {
	// Offset is the byte offset in the (decompressed) input.
	Offset int
	// Path names the message being decoded: "planes[2].lines[0].events[17]".
	Path string
	// Msg says what was wrong and what was expected.
	Msg string
}

func (e *FormatError) Error() string {
	where := "at byte " + strconv.Itoa(e.Offset)
	if e.Path != "" {
		where += " (" + e.Path + ")"
	}
	return "not a valid XSpace (likely corrupted): " + where + ": " + e.Msg
}

// wire walks the input by absolute offsets, so that every error can name
// the byte where decoding failed. The input is either held whole in buf or
// read from src a window at a time: buf then holds the bytes [base,
// base+len(buf)), and a message is loaded into the window before its bytes
// are looked at. The indexes say which message is being decoded, for the
// error's path; -1 means "not inside one".
type wire struct {
	buf  []byte
	base int
	size int         // the input's length
	src  io.ReaderAt // nil when buf holds the whole input
	// mapped, when src is a mapped file, is its bytes: windows are cut
	// from it instead of read (see mapped.go). Pages below kept are not
	// held.
	mapped []byte
	kept   int

	// progress, when set, is told how far the window has moved.
	progress func(off int)

	plane, line, event int
	part               string // a sub-message of the innermost index: "stats[3]", "event_metadata"
}

// window is how much of the input a load reads at least: large enough that
// a read is rarely a cost, small against any input worth streaming.
const window = 1 << 20

// maxHead is the longest field header: a tag and a length, each a varint
// of at most ten bytes.
const maxHead = 20

// load makes the window hold the input's bytes [lo, hi), reading from src
// when they are not there yet.
func (w *wire) load(lo, hi int) error {
	if lo >= w.base && hi <= w.base+len(w.buf) || w.src == nil {
		return nil
	}
	n := min(max(hi-lo, window), w.size-lo)
	if w.mapped != nil {
		w.dropBehind(lo)
		w.buf, w.base = w.mapped[lo:lo+n:lo+n], lo
	} else if err := w.read(lo, n); err != nil {
		return err
	}
	if w.progress != nil {
		w.progress(lo + n)
	}
	return nil
}

// read reads the n bytes of src at lo into the window.
func (w *wire) read(lo, n int) error {
	if cap(w.buf) < n || cap(w.buf) > 2*window && n <= window {
		w.buf = make([]byte, n)
	}
	w.buf, w.base = w.buf[:0], lo // nothing held if the read fails
	buf := w.buf[:n]
	if got, err := w.src.ReadAt(buf, int64(lo)); got < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading XSpace at byte %d: %w", lo+got, err)
	}
	w.buf = buf
	return nil
}

// loadHead loads the field header at off in a message ending at end.
func (w *wire) loadHead(off, end int) error {
	return w.load(off, min(off+maxHead, end))
}

// bytesAt returns the input's bytes [lo, hi), which must be loaded.
func (w *wire) bytesAt(lo, hi int) []byte { return w.buf[lo-w.base : hi-w.base] }

// uvarint decodes the varint at off, which must be loaded, in a message
// ending at end; see the function uvarint.
func (w *wire) uvarint(off, end int) (uint64, int) {
	v, n := uvarint(w.buf, off-w.base, min(end-w.base, len(w.buf)))
	if n < 0 {
		return 0, n
	}
	return v, n + w.base
}

func (w *wire) errorf(off int, format string, args ...any) error {
	return &FormatError{Offset: off, Path: w.path(), Msg: fmt.Sprintf(format, args...)}
}

func (w *wire) path() string {
	var b strings.Builder
	if w.plane >= 0 {
		fmt.Fprintf(&b, "planes[%d]", w.plane)
	}
	if w.line >= 0 {
		fmt.Fprintf(&b, ".lines[%d]", w.line)
	}
	if w.event >= 0 {
		fmt.Fprintf(&b, ".events[%d]", w.event)
	}
	if w.part != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(w.part)
	}
	return b.String()
}

// uvarint decodes the varint at b[i:end]. It returns the value and the
// offset after it, or a negative offset: -1 when the input ends inside the
// varint, -2 when it is longer than ten bytes or overflows 64 bits.
func uvarint(b []byte, i, end int) (uint64, int) {
	if end > len(b) || i < 0 || i >= end {
		return 0, -1
	}
	if c := b[i]; c < 0x80 { // the common one-byte case
		return uint64(c), i + 1
	}
	if len(b)-i >= 10 {
		// Ten bytes are there, in the message or after it: one bounds
		// check for the whole varint, then one against the message's end.
		p := b[i : i+10 : i+10]
		var v uint64
		for k, c := range p {
			v |= uint64(c&0x7f) << (7 * k)
			if c < 0x80 {
				switch {
				case i+k+1 > end:
					return 0, -1
				case k == 9 && c > 1:
					return 0, -2 // more than 64 bits
				}
				return v, i + k + 1
			}
		}
		if end-i < 10 {
			return 0, -1
		}
		return 0, -2
	}
	var v uint64
	for k := 0; i < end; k++ {
		c := b[i]
		i++
		v |= uint64(c&0x7f) << (7 * k)
		if c < 0x80 {
			return v, i
		}
	}
	return 0, -1
}

// varint reads a varint at off or fails saying what it was reading.
func (w *wire) varint(off, end int, what string) (uint64, int, error) {
	v, n := w.uvarint(off, end)
	if n < 0 {
		return 0, 0, w.varintError(off, end, n, what)
	}
	return v, n, nil
}

func (w *wire) varintError(off, end, code int, what string) error {
	if code == -1 {
		return w.errorf(off, "%s: input ends inside a varint (message ends at byte %d)", what, end)
	}
	return w.errorf(off, "%s: varint longer than 10 bytes", what)
}

// tag reads a field header at off.
func (w *wire) tag(off, end int) (protowire.Number, protowire.Type, int, error) {
	if off < end && w.buf[off-w.base] < 0x80 { // field numbers below 16
		c := w.buf[off-w.base]
		if c>>3 == 0 {
			return 0, 0, 0, w.errorf(off, "field number 0 (byte 0x%02x), expected a field tag", c)
		}
		return protowire.Number(c >> 3), protowire.Type(c & 7), off + 1, nil
	}
	v, n, err := w.varint(off, end, "field tag")
	if err != nil {
		return 0, 0, 0, err
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber || num > protowire.MaxValidNumber {
		return 0, 0, 0, w.errorf(off, "field number %d out of range, expected a field tag", v>>3)
	}
	return num, typ, n, nil
}

// bytes reads the length of a length-delimited field at off and returns
// its contents' bounds.
func (w *wire) bytes(off, end int, what string) (int, int, error) {
	n, lo := w.uvarint(off, end)
	if lo < 0 {
		return 0, 0, w.varintError(off, end, lo, what+" length")
	}
	if n > uint64(end-lo) {
		if end == w.size {
			return 0, 0, w.errorf(off, "%s is %d bytes long, but only %d bytes remain in the %d-byte input", what, n, end-lo, w.size)
		}
		return 0, 0, w.errorf(off, "%s is %d bytes long, but only %d bytes remain in the enclosing message (ends at byte %d)", what, n, end-lo, end)
	}
	return lo, lo + int(n), nil
}

// skip steps over a field whose contents this reader does not need.
func (w *wire) skip(num protowire.Number, typ protowire.Type, off, end int) (int, error) {
	switch typ {
	case varintType:
		_, n := w.uvarint(off, end)
		if n < 0 {
			return 0, w.varintError(off, end, n, "field "+strconv.Itoa(int(num)))
		}
		return n, nil
	case fixed64, fixed32:
		size := 8
		if typ == fixed32 {
			size = 4
		}
		if end-off < size {
			return 0, w.errorf(off, "field %d: %d-byte value runs past the end of its message (byte %d)", num, size, end)
		}
		return off + size, nil
	case bytesType:
		if n, lo := w.uvarint(off, end); lo >= 0 && n <= uint64(end-lo) {
			return lo + int(n), nil
		}
		_, _, err := w.bytes(off, end, "field "+strconv.Itoa(int(num)))
		return 0, err
	}
	return 0, w.errorf(off, "field %d has wire type %d (%s), which XSpace never uses", num, typ, typeName(typ))
}

// want checks a known field's wire type.
func (w *wire) want(off int, name string, got, want protowire.Type) error {
	if got == want {
		return nil
	}
	return w.errorf(off, "field %s has wire type %s, expected %s", name, typeName(got), typeName(want))
}

func typeName(t protowire.Type) string {
	switch t {
	case varintType:
		return "varint"
	case fixed64:
		return "fixed64"
	case bytesType:
		return "length-delimited"
	case protowire.StartGroupType:
		return "start-group"
	case protowire.EndGroupType:
		return "end-group"
	case fixed32:
		return "fixed32"
	}
	return "invalid(" + strconv.Itoa(int(t)) + ")"
}

// fixed64At reads a little-endian 8-byte value.
func (w *wire) fixed64At(off, end int, what string) (uint64, int, error) {
	if end-off < 8 {
		return 0, 0, w.errorf(off, "%s: 8-byte value runs past the end of its message (byte %d)", what, end)
	}
	b := w.bytesAt(off, off+8)
	v := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	return v, off + 8, nil
}

// float64From turns fixed64 bits into the double they hold.
func float64From(bits uint64) float64 { return math.Float64frombits(bits) }
