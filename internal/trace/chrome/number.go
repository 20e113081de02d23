package chrome

import (
	"encoding/binary"
	"math"
	"strconv"
)

// maxMicros is the largest whole number of microseconds whose nanosecond
// count, plus rounding, fits an int64.
const maxMicros = (math.MaxInt64 - 1000) / 1000

// parseMicros converts a decimal count of microseconds to nanoseconds. s is
// JSON number text or the content of a JSON string. The decimal text itself
// is converted, not a float64 approximation of it: a long float such as
// 1712345678901234.567 keeps its nanoseconds. Digits past the third decimal
// round the nanosecond on the fourth one. Exponent forms fall back to float
// arithmetic. ok is false for anything that is not a finite number in range.
func parseMicros(s []byte) (ns int64, ok bool) {
	s = trimSpace(s)
	i := 0
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	start := i
	var whole int64
	for ; i < len(s) && isDigit(s[i]); i++ {
		if whole > maxMicros/10 {
			return 0, false
		}
		whole = whole*10 + int64(s[i]-'0')
	}
	if i == start || whole > maxMicros {
		return 0, false
	}
	var frac int64
	digits := 0
	roundUp := false
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for ; i < len(s) && isDigit(s[i]); i++ {
			switch {
			case digits < 3:
				frac = frac*10 + int64(s[i]-'0')
			case digits == 3:
				roundUp = s[i] >= '5'
			}
			digits++
		}
		if i == fs {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		return parseMicrosFloat(s, i+1)
	}
	if i != len(s) {
		return 0, false
	}
	for ; digits < 3; digits++ {
		frac *= 10
	}
	ns = whole*1000 + frac
	if roundUp {
		ns++
	}
	if neg {
		ns = -ns
	}
	return ns, true
}

// fastMicros reads, in one pass, the number at b[i] in the form Kineto
// writes times in: digits, without a leading zero, and at most three
// decimals, such as 1610366728298088.0. It returns the time in nanoseconds
// and the index past the number. ok is false for any other text, which the
// caller then scans and parses in full: a sign, an exponent, more
// decimals, a time out of range, the window's end.
func fastMicros(b []byte, i int) (ns int64, end int, ok bool) {
	j := i
	var whole int64
	// Eight digits at a time first: a time in microseconds since the
	// epoch has sixteen.
	for k := 0; k < 2 && j+8 <= len(b); k++ {
		x := binary.LittleEndian.Uint64(b[j:])
		if !eightDigits(x) {
			break
		}
		whole = whole*1e8 + int64(digitsValue(x))
		j += 8
	}
	for j < len(b) && isDigit(b[j]) && j-i < 16 {
		whole = whole*10 + int64(b[j]-'0')
		j++
	}
	if j == i || b[i] == '0' && j-i > 1 || whole > maxTime/1000 {
		return 0, 0, false
	}
	var frac int64
	scale := int64(1000)
	if j < len(b) && b[j] == '.' {
		j++
		k := j
		for j < len(b) && isDigit(b[j]) && j-k < 3 {
			frac = frac*10 + int64(b[j]-'0')
			scale /= 10
			j++
		}
		if j == k {
			return 0, 0, false
		}
	}
	if j >= len(b) {
		return 0, 0, false
	}
	switch b[j] {
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.', 'e', 'E':
		return 0, 0, false
	}
	if ns = whole*1000 + frac*scale; ns > maxTime {
		return 0, 0, false
	}
	return ns, j, true
}

// eightDigits reports whether the eight bytes of x are all ASCII digits:
// each byte's high nibble is 3, and stays 3 when 6 is added to it.
func eightDigits(x uint64) bool {
	return x&0xf0f0f0f0f0f0f0f0|(x+0x0606060606060606)&0xf0f0f0f0f0f0f0f0>>4 == 0x3333333333333333
}

// digitsValue returns the value of the eight ASCII digits in x, the first
// in the lowest byte: pairs, then fours, then the eight are combined by
// multiplications.
func digitsValue(x uint64) uint64 {
	x = (x & 0x0f0f0f0f0f0f0f0f) * (10<<8 + 1) >> 8
	x = (x & 0x00ff00ff00ff00ff) * (100<<16 + 1) >> 16
	return (x & 0x0000ffff0000ffff) * (10000<<32 + 1) >> 32
}

// parseMicrosFloat handles a number with an exponent; exp indexes the byte
// after the 'e'. The exponent's syntax is checked here so that ParseFloat
// never sees text JSON would not allow (NaN, Inf, hex floats).
func parseMicrosFloat(s []byte, exp int) (int64, bool) {
	i := exp
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == start || i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return 0, false
	}
	f = math.Round(f * 1000)
	if math.IsNaN(f) || f >= math.MaxInt64 || f <= math.MinInt64 {
		return 0, false
	}
	return int64(f), true
}

// parseUint parses a non-negative integer, as JSON number text or string
// content. A number written with a zero fraction ("7.0") is accepted.
func parseUint(s []byte) (uint64, bool) {
	s = trimSpace(s)
	if len(s) == 0 {
		return 0, false
	}
	var n uint64
	i := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		if n > (math.MaxUint64-9)/10 {
			return 0, false
		}
		n = n*10 + uint64(s[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] == '0'; i++ {
		}
	}
	return n, i == len(s)
}

// parseID parses a flow id: a decimal integer, or a string holding one in
// decimal or in hexadecimal with a 0x prefix (Chrome's own traces).
func parseID(s []byte) (uint64, bool) {
	s = trimSpace(s)
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		var n uint64
		for _, c := range s[2:] {
			var d byte
			switch {
			case isDigit(c):
				d = c - '0'
			case c >= 'a' && c <= 'f':
				d = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				d = c - 'A' + 10
			default:
				return 0, false
			}
			if n>>60 != 0 {
				return 0, false
			}
			n = n<<4 | uint64(d)
		}
		return n, true
	}
	return parseUint(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func trimSpace(s []byte) []byte {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
