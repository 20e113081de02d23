package chrome

import (
	"encoding/binary"
	"math/bits"
)

// scanner walks the members of one JSON object that the jsontext decoder
// has already read and validated as a whole (one event). It relies on that
// validation for speed, but it bounds every index, so that no input can
// make it panic or loop: a byte it does not expect ends the walk.
type scanner struct {
	b []byte
	i int
	// esc is set when the last string scanned holds escapes.
	esc bool
}

// open positions the scanner inside the object b; it reports false when b
// is not an object.
func (s *scanner) open(b []byte) bool {
	s.b, s.i = b, 0
	if s.peek() != '{' {
		return false
	}
	s.i++
	return true
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.b) && s.b[s.i] > ' ' { // compact JSON: no space to skip
		return s.b[s.i]
	}
	return s.skipSpace()
}

func (s *scanner) skipSpace() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// name returns the next member's name (quoted) and moves to its value; ok
// is false at the closing brace (left unread) or on anything unexpected.
func (s *scanner) name() (name []byte, ok bool) {
	c := s.peek()
	if c == ',' {
		s.i++
		c = s.peek()
	}
	if c != '"' {
		return nil, false
	}
	name = s.str()
	if name == nil || s.peek() != ':' {
		return nil, false
	}
	s.i++
	return name, true
}

// close consumes the closing brace of an object whose members have all been
// read; it reports false if something else is there.
func (s *scanner) close() bool {
	if s.peek() != '}' {
		s.i = len(s.b)
		return false
	}
	s.i++
	return true
}

// str returns the string starting at the current byte, quotes included,
// and sets esc; nil if it does not end.
func (s *scanner) str() []byte {
	start := s.i
	s.esc = false
	for j := s.i + 1; ; j += 2 { // j += 2 steps over an escaped byte
		j = s.quoteOrEscape(j)
		if j >= len(s.b) {
			s.i = len(s.b)
			return nil
		}
		if s.b[j] == '"' {
			s.i = j + 1
			return s.b[start:s.i]
		}
		s.esc = true
	}
}

// Masks for looking at eight bytes at once: a word with the byte c in
// every lane is ones*c.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasByte sets the high bit of the lowest lane of x that holds c (and maybe
// of lanes above it, which callers never look at); it is zero when no lane
// holds c.
func hasByte(x uint64, c byte) uint64 {
	y := x ^ (ones * uint64(c))
	return (y - ones) &^ y & highs
}

// quoteOrEscape returns the index of the first '"' or '\\' at or after j,
// len(s.b) if there is none. It looks at eight bytes a step, which is what
// makes long kernel names and argument strings cheap.
func (s *scanner) quoteOrEscape(j int) int {
	for ; j < len(s.b); j += 8 {
		x := s.word(j)
		if m := hasByte(x, '"') | hasByte(x, '\\'); m != 0 {
			return min(j+bits.TrailingZeros64(m)/8, len(s.b))
		}
	}
	return len(s.b)
}

// structural returns the index of the first quote or bracket at or after
// j, len(s.b) if there is none.
func (s *scanner) structural(j int) int {
	for ; j < len(s.b); j += 8 {
		x := s.word(j)
		// '[' and ']' are '{' and '}' without bit 0x20: fold them.
		y := x | ones*0x20
		if m := hasByte(x, '"') | hasByte(y, '{') | hasByte(y, '}'); m != 0 {
			return min(j+bits.TrailingZeros64(m)/8, len(s.b))
		}
	}
	return len(s.b)
}

// numberEnd returns the index of the first byte at or after j that can
// follow a scalar: a comma, a closing bracket or white space.
func (s *scanner) numberEnd(j int) int {
	for ; j < len(s.b); j += 8 {
		x := s.word(j)
		m := hasByte(x, ',') | hasByte(x|ones*0x20, '}') | hasLess(x, '!')
		if m != 0 {
			return min(j+bits.TrailingZeros64(m)/8, len(s.b))
		}
	}
	return len(s.b)
}

// word returns the eight bytes from j as a little-endian word. Near the end
// of the buffer the missing lanes are zero, which none of the searches
// above matches except hasLess, whose callers clamp to len(s.b).
func (s *scanner) word(j int) uint64 {
	if j+8 <= len(s.b) {
		return binary.LittleEndian.Uint64(s.b[j:])
	}
	if len(s.b) >= 8 {
		// Load the last eight bytes and shift out those before j: no
		// lane below j is left to disturb the ones above.
		return binary.LittleEndian.Uint64(s.b[len(s.b)-8:]) >> (8 * (j + 8 - len(s.b)))
	}
	var x uint64
	for k := len(s.b) - 1; k >= j; k-- {
		x = x<<8 | uint64(s.b[k])
	}
	return x
}

// hasLess sets the high bit of the lowest lane of x holding a byte below
// n (n <= 128), like hasByte.
func hasLess(x uint64, n byte) uint64 {
	return (x - ones*uint64(n)) &^ x & highs
}

// value returns the raw value starting at the next non-space byte; nil
// when there is none.
func (s *scanner) value() []byte {
	switch s.peek() {
	case '"':
		return s.str()
	case '{', '[':
		return s.nested()
	case 0:
		return nil
	}
	start := s.i
	s.i = s.numberEnd(s.i)
	return s.b[start:s.i]
}

// nested returns an object or array, skipping the strings inside it so
// that brackets within them do not count.
func (s *scanner) nested() []byte {
	start := s.i
	depth := 0
	for j := s.i; ; j++ {
		j = s.structural(j)
		if j >= len(s.b) {
			s.i = len(s.b)
			return nil
		}
		switch s.b[j] {
		case '"':
			s.i = j
			if s.str() == nil {
				return nil
			}
			j = s.i - 1 // the loop steps past the closing quote
		case '{', '[':
			depth++
		default:
			depth--
			if depth == 0 {
				s.i = j + 1
				return s.b[start:s.i]
			}
		}
	}
}
