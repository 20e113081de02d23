package chrome

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// scanner validates JSON text held in a window of the input and finds
// where its tokens end. It is as strict as the JSON grammar (RFC 8259):
// commas and colons where they belong, string escapes, no control bytes
// in strings, number syntax, the three literals and a nesting limit. Like
// the reader always was, it checks neither UTF-8 nor duplicate names.
//
// Each scanning method takes the index of a token's first byte and
// returns the index just past its end, or -1 when it stops: at invalid
// JSON, described by stop, or at the end of the window before the token
// ends (stop.why empty), where the caller reads more input and scans the
// token again from its start.
type scanner struct {
	b []byte // the window
	// final is set when b ends where the input does: a number may end
	// there; anything else is cut short.
	final bool
	// esc is set when the last string scanned holds escapes.
	esc bool
	// depth is the number of containers open around the value being
	// scanned, for the nesting limit.
	depth int
	stack []byte // containers open inside a nested value
	stop  scanStop
}

// scanStop says where and why a scan stopped.
type scanStop struct {
	at int
	// why is where the invalid character at b[at] was ("at start of
	// value"); empty when the window ended.
	why string
	// esc is the length of an invalid escape sequence at b[at].
	esc int
	// deep is set when a container at b[at] is nested too deep.
	deep bool
}

// maxDepth bounds the nesting of the document (RFC 8259 allows a limit).
// Scanning a nested value takes no stack; the limit only ends hostile
// input early.
const maxDepth = 10000

// more records that the window ended at i before the token did.
func (s *scanner) more(i int) int {
	s.stop = scanStop{at: i}
	return -1
}

// bad records an invalid character at b[i].
func (s *scanner) bad(i int, why string) int {
	s.stop = scanStop{at: i, why: why}
	return -1
}

// stopErr describes the stop as an error: nil when the window ended
// before the input did, io.ErrUnexpectedEOF-wrapping when the input ends.
func (s *scanner) stopErr() error {
	st := &s.stop
	switch {
	case st.deep:
		return errTooDeep
	case st.esc > 0:
		return fmt.Errorf("invalid escape sequence %s in string", quoteText(s.b[st.at:min(st.at+st.esc, len(s.b))]))
	case st.why != "":
		return fmt.Errorf("invalid character %s %s", quoteChar(s.b[st.at:]), st.why)
	}
	return nil
}

// quoteChar quotes the character starting b as jsontext does.
func quoteChar(b []byte) string {
	r, n := utf8.DecodeRune(b)
	if r == utf8.RuneError && n == 1 {
		return `'\x` + strconv.FormatUint(uint64(b[0]), 16) + `'`
	}
	return strconv.QuoteRune(r)
}

// quoteText quotes an escape sequence for an error message.
func quoteText(b []byte) string { return strconv.Quote(string(b)) }

// space returns the index of the first byte at or after i that is not
// JSON white space. Compact JSON has next to none: the first test ends
// most calls.
func (s *scanner) space(i int) int {
	if i < len(s.b) && s.b[i] > ' ' {
		return i
	}
	return s.skipSpace(i)
}

func (s *scanner) skipSpace(i int) int {
	b := s.b
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
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

// hasLess sets the high bit of the lowest lane of x holding a byte below
// n (n <= 128), like hasByte.
func hasLess(x uint64, n byte) uint64 {
	return (x - ones*uint64(n)) &^ x & highs
}

// str scans the string whose opening quote is b[i] and sets esc.
func (s *scanner) str(i int) int {
	b := s.b
	s.esc = false
	j := i + 1
	for {
		// Eight bytes a step to the first quote, backslash or control
		// byte: what makes long kernel names and argument strings cheap.
		// x^ones*2 turns '"' into ' ' and keeps control bytes below it,
		// so one test finds both.
		for ; j+8 <= len(b); j += 8 {
			x := binary.LittleEndian.Uint64(b[j:])
			if m := hasLess(x^(ones*2), ' '+1) | hasByte(x, '\\'); m != 0 {
				j += bits.TrailingZeros64(m) / 8
				if b[j] == '"' {
					return j + 1
				}
				break
			}
		}
		for j < len(b) && b[j] != '"' && b[j] != '\\' && b[j] >= ' ' {
			j++
		}
		if j >= len(b) {
			return s.more(i)
		}
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			s.esc = true
			if j = s.escape(j); j < 0 {
				return -1
			}
		default:
			return s.bad(j, "in string (expecting non-control character)")
		}
	}
}

// name scans the string starting at b[i] like str, faster for the short
// strings that member names are: their closing quote is most often found
// in the first one or two words, and the scan ends there.
func (s *scanner) name(i int) int {
	b := s.b
	if i+17 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i+1:])
		m := hasLess(x^(ones*2), ' '+1) | hasByte(x, '\\')
		j := i + 1
		if m == 0 {
			x = binary.LittleEndian.Uint64(b[i+9:])
			m = hasLess(x^(ones*2), ' '+1) | hasByte(x, '\\')
			j += 8
		}
		if m != 0 {
			if j += bits.TrailingZeros64(m) / 8; b[j] == '"' {
				s.esc = false
				return j + 1
			}
		}
	}
	return s.str(i)
}

// escape checks the escape sequence at b[j] and returns the index past it.
func (s *scanner) escape(j int) int {
	b := s.b
	if j+1 >= len(b) {
		return s.more(j)
	}
	switch b[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return j + 2
	case 'u':
		for k := j + 2; k < j+6; k++ {
			if k >= len(b) {
				return s.more(j)
			}
			if !isHex(b[k]) {
				s.stop = scanStop{at: j, esc: 6}
				return -1
			}
		}
		return j + 6
	}
	s.stop = scanStop{at: j, esc: 2}
	return -1
}

func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number scans the number starting at b[i].
func (s *scanner) number(i int) int {
	b := s.b
	j := i
	if b[j] == '-' {
		j++
	}
	switch {
	case j >= len(b):
		return s.more(i)
	case b[j] == '0':
		j++
	case '1' <= b[j] && b[j] <= '9':
		j++
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	default:
		return s.bad(j, "in number (expecting digit)")
	}
	if j < len(b) && b[j] == '.' {
		if j = s.digits(i, j+1); j < 0 {
			return -1
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '-' || b[j] == '+') {
			j++
		}
		if j = s.digits(i, j); j < 0 {
			return -1
		}
	}
	if j >= len(b) && !s.final { // more digits may follow
		return s.more(i)
	}
	return j
}

// digits scans one or more digits of the number starting at b[i].
func (s *scanner) digits(i, j int) int {
	b := s.b
	switch {
	case j >= len(b):
		return s.more(i)
	case !isDigit(b[j]):
		return s.bad(j, "in number (expecting digit)")
	}
	for j < len(b) && isDigit(b[j]) {
		j++
	}
	return j
}

// literal scans true, false or null, whichever b[i] starts.
func (s *scanner) literal(i int) int {
	lit := "null"
	switch s.b[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	}
	for k := 0; k < len(lit); k++ {
		switch {
		case i+k >= len(s.b):
			return s.more(i)
		case s.b[i+k] != lit[k]:
			return s.bad(i+k, "in literal "+lit+" (expecting "+strconv.QuoteRune(rune(lit[k]))+")")
		}
	}
	return i + len(lit)
}

// scalar scans a string, number or literal.
func (s *scanner) scalar(i int) int {
	switch c := s.b[i]; {
	case c == '"':
		return s.str(i)
	case c == '-' || isDigit(c):
		return s.number(i)
	case c == 't' || c == 'f' || c == 'n':
		return s.literal(i)
	}
	return s.bad(i, "at start of value")
}

// value scans any value starting at b[i]. Strings and numbers, and the
// empty arrays Kineto writes in every operator's args, are taken without
// the general walk of nested values.
func (s *scanner) value(i int) int {
	b := s.b
	switch c := b[i]; c {
	case '"':
		return s.str(i)
	case '{', '[':
		if i+1 < len(b) && b[i+1] == c+2 && s.depth < maxDepth { // '}' is '{'+2, ']' is '['+2
			return i + 2
		}
		return s.nested(i)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.number(i)
	}
	return s.scalar(i)
}

// States of nested, for what comes next.
const (
	wantValue = iota // a value, or a closing bracket right after an opening one
	wantName         // an object member's name
	wantAfter        // a comma or a closing bracket
)

// nested scans the object or array starting at b[i], and all it holds,
// without recursion: the open containers are kept in s.stack.
func (s *scanner) nested(i int) int {
	b := s.b
	stack := s.stack[:0]
	defer func() { s.stack = stack }()
	state := wantValue
	for {
		if i = s.space(i); i >= len(b) {
			return s.more(i)
		}
		c := b[i]
		switch state {
		case wantValue:
			if c == '{' || c == '[' {
				if s.depth+len(stack) >= maxDepth {
					s.stop = scanStop{at: i, deep: true}
					return -1
				}
				stack = append(stack, c)
				if i = s.space(i + 1); i >= len(b) {
					return s.more(i)
				}
				switch {
				case b[i] == c+2: // '}' is '{'+2, ']' is '['+2
					state = wantAfter
					stack = stack[:len(stack)-1]
					i++
				case c == '{':
					state = wantName
				}
				if len(stack) == 0 {
					return i
				}
				continue
			}
			if i = s.scalar(i); i < 0 {
				return -1
			}
			state = wantAfter
		case wantName:
			if c != '"' {
				return s.bad(i, `at start of string (expecting '"')`)
			}
			if i = s.str(i); i < 0 {
				return -1
			}
			if i = s.space(i); i >= len(b) {
				return s.more(i)
			}
			if b[i] != ':' {
				return s.bad(i, "after object name (expecting ':')")
			}
			i++
			state = wantValue
		case wantAfter:
			top := stack[len(stack)-1]
			switch {
			case c == ',':
				i++
				state = wantValue
				if top == '{' {
					state = wantName
				}
			case c == top+2:
				i++
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i
				}
			case top == '{':
				return s.bad(i, "after object value (expecting ',' or '}')")
			default:
				return s.bad(i, "after array element (expecting ',' or ']')")
			}
		}
	}
}
