package chrome

import (
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
