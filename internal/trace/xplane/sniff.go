package xplane

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Sniff reports whether head, the first bytes of an input, look like an
// XSpace. It walks as much of the message as head holds against the XSpace
// schema: every field must be one the schema allows with the wire type it
// has there, and names must be UTF-8. A byte such as '\n' or '"' can start
// both an XSpace and a text file, but text fails the walk within a few
// bytes, and input that is all text is never claimed. Lengths that run past
// head are fine: head is a prefix. A walk that fails after a plane named
// "/device:..." or "/host:..." still claims the input: it is an XSpace,
// damaged, and the reader then says where.
func Sniff(head []byte) bool {
	if len(head) < 2 {
		return false
	}
	if looksText(head) {
		return false
	}
	var st sniffState
	ok := st.walk(head, &xspaceSchema, 0)
	// A damaged XSpace that still names its first plane is claimed, so
	// that the reader can say where the damage is.
	return ok && st.fields > 0 || st.planeName
}

// sniffState is what the walk has seen so far.
type sniffState struct {
	fields    int
	planeName bool // a plane named "/device:..." or "/host:..."
}

// schema describes a message for sniffing: the wire type of each known
// field and, for length-delimited ones, what they hold. strict messages
// accept no unknown fields; the others accept any well-formed one, so
// that fields added to the format later do not break sniffing.
type schema struct {
	fields map[protowire.Number]fieldSchema
	strict bool
}

type fieldSchema struct {
	typ  protowire.Type
	msg  *schema // nil: not a message
	text bool    // a string: must be UTF-8
	name bool    // XPlane.name
}

var (
	xspaceSchema, xplaneSchema, xlineSchema, xeventSchema, xstatSchema,
	eventMetaSchema, statMetaSchema, eventMetaEntry, statMetaEntry schema
)

func init() {
	str := fieldSchema{typ: bytesType, text: true}
	raw := fieldSchema{typ: bytesType}
	num := fieldSchema{typ: varintType}
	msg := func(s *schema) fieldSchema { return fieldSchema{typ: bytesType, msg: s} }
	xspaceSchema = schema{strict: true, fields: map[protowire.Number]fieldSchema{
		1: msg(&xplaneSchema), 2: str, 3: str, 4: str}}
	xplaneSchema = schema{strict: true, fields: map[protowire.Number]fieldSchema{
		1: num, 2: {typ: bytesType, text: true, name: true}, 3: msg(&xlineSchema), 4: msg(&eventMetaEntry), 5: msg(&statMetaEntry), 6: msg(&xstatSchema)}}
	xlineSchema = schema{fields: map[protowire.Number]fieldSchema{
		1: num, 2: str, 3: num, 4: msg(&xeventSchema), 9: num, 10: num, 11: str}}
	xeventSchema = schema{fields: map[protowire.Number]fieldSchema{
		1: num, 2: num, 3: num, 4: msg(&xstatSchema), 5: num}}
	xstatSchema = schema{fields: map[protowire.Number]fieldSchema{
		1: num, 2: {typ: fixed64}, 3: num, 4: num, 5: str, 6: raw, 7: num}}
	eventMetaEntry = schema{strict: true, fields: map[protowire.Number]fieldSchema{
		1: num, 2: msg(&eventMetaSchema)}}
	statMetaEntry = schema{strict: true, fields: map[protowire.Number]fieldSchema{
		1: num, 2: msg(&statMetaSchema)}}
	eventMetaSchema = schema{fields: map[protowire.Number]fieldSchema{
		1: num, 2: str, 3: raw, 4: str, 5: msg(&xstatSchema)}}
	statMetaSchema = schema{fields: map[protowire.Number]fieldSchema{
		1: num, 2: str, 3: str}}
}

// maxSniffDepth bounds the walk; XSpace nests five messages deep.
const maxSniffDepth = 8

// walk checks b against s. It returns false at the first contradiction;
// running out of bytes is no contradiction.
func (st *sniffState) walk(b []byte, s *schema, depth int) bool {
	if depth > maxSniffDepth {
		return false
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return truncated(n)
		}
		f, known := s.fields[num]
		if !known && s.strict || known && f.typ != typ {
			return false
		}
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			return false
		}
		st.fields++
		b = b[n:]
		if typ != bytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return truncated(n)
			}
			b = b[n:]
			continue
		}
		size, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return truncated(n)
		}
		b = b[n:]
		body, cut := b, true
		if size <= uint64(len(b)) {
			body, cut = b[:size], false
		}
		if known && !st.checkValue(body, f, depth, cut) {
			return false
		}
		if cut {
			return true
		}
		b = b[size:]
	}
	return true
}

// checkValue checks a length-delimited value, of which cut says only a
// prefix is present.
func (st *sniffState) checkValue(body []byte, f fieldSchema, depth int, cut bool) bool {
	if f.name && (bytes.HasPrefix(body, []byte("/device:")) || bytes.HasPrefix(body, []byte("/host:"))) {
		st.planeName = true
	}
	switch {
	case f.msg != nil:
		return st.walk(body, f.msg, depth+1)
	case f.text:
		if cut { // the last rune may be split by the end of head
			for i := 0; i < utf8.UTFMax && len(body) > 0 && !utf8.Valid(body); i++ {
				body = body[:len(body)-1]
			}
		}
		return utf8.Valid(body)
	}
	return true
}

// truncated reports whether a protowire error code means only that the
// input ended, which a prefix may do.
func truncated(code int) bool {
	return errors.Is(protowire.ParseError(code), io.ErrUnexpectedEOF)
}

// looksText reports whether b is UTF-8 text without control characters
// other than white space. A binary XSpace always has some: its field tags
// and small lengths are control bytes.
func looksText(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 && len(b) >= utf8.UTFMax {
			return false
		}
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f {
			return false
		}
		b = b[n:]
	}
	return true
}
