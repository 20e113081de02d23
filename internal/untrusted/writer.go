package untrusted

import (
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// JSONWriter returns a writer for JSON output, which can reach a terminal
// or a CI log as well as a program: in each Write it escapes every control,
// format and separator character as a \u escape (\u009b, \u007f, \u2028,
// \u202e), and replaces a byte that is not UTF-8 with \ufffd, as a decoder
// would read it. encoding/json escapes only the controls below U+0020 and,
// with HTML escaping, U+2028 and U+2029; a C1 control such as U+009B is
// taken as CSI by some terminals. These characters occur only inside JSON
// strings (JSON's white space outside them is ' ', tab, CR and LF, which
// are kept), so the output decodes to the same values. Each Write must
// hold whole characters, as json.Encoder's writes (one value each) and
// json.Marshal's output do.
func JSONWriter(w io.Writer) io.Writer { return &escapingWriter{w: w, esc: jsonEscape} }

// JSON returns the JSON text b escaped as JSONWriter escapes it.
func JSON(b []byte) []byte { return escapeText(nil, b, jsonEscape) }

// MarkupWriter returns a writer for an HTML or SVG document whose untrusted
// text (file and trace names) the HTML escaping has already made inert for
// a browser: in each Write it escapes visibly, as Terminal does, every
// control, format and separator character other than newline and tab, and
// every byte that is not UTF-8. html.EscapeString and html/template leave
// ESC, CR and the C1 controls as they are, and a report is also read with
// cat, in a terminal or a CI log. The document's own markup holds none of
// these characters, so all that changes is text that came from outside; a
// \u escape in a script's string literal still means the same character.
// A Write that ends inside a character escapes its bytes one by one:
// garbled, but still inert.
func MarkupWriter(w io.Writer) io.Writer { return &escapingWriter{w: w, esc: markupEscape} }

// Markup returns the HTML or SVG document b escaped as MarkupWriter
// escapes it.
func Markup(b []byte) []byte { return escapeText(nil, b, markupEscape) }

// escapingWriter escapes each Write with esc before writing it to w.
type escapingWriter struct {
	w   io.Writer
	esc escapeFunc
	buf []byte
}

func (e *escapingWriter) Write(p []byte) (int, error) {
	e.buf = escapeText(e.buf[:0], p, e.esc)
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escapeFunc returns the escape of r, or "" when r is kept as it is. r
// is -1 for a byte b that is not UTF-8.
type escapeFunc func(r rune, b byte) string

// escapeText appends b to dst with each character esc escapes escaped.
func escapeText(dst, b []byte, esc escapeFunc) []byte {
	start := 0
	for i := 0; i < len(b); {
		if c := b[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			r = -1
		}
		if e := esc(r, b[i]); e != "" {
			dst = append(append(dst, b[start:i]...), e...)
			start = i + n
		}
		i += n
	}
	return append(dst, b[start:]...)
}

// jsonEscape escapes, as JSON's \u escapes, what JSONWriter escapes.
func jsonEscape(r rune, _ byte) string {
	switch {
	case r < 0:
		return `\ufffd`
	case r == '\t' || r == '\r' || r == '\n' || !unsafeRune(r):
		return ""
	case r > 0xffff:
		r1, r2 := utf16.EncodeRune(r)
		return uEscape(r1) + uEscape(r2)
	}
	return uEscape(r)
}

// uEscape returns the JSON escape \uXXXX of the UTF-16 code unit u.
func uEscape(u rune) string {
	const hex = "0123456789abcdef"
	return string([]byte{'\\', 'u', hex[u>>12&15], hex[u>>8&15], hex[u>>4&15], hex[u&15]})
}

// markupEscape escapes, as Terminal does, what MarkupWriter escapes.
func markupEscape(r rune, b byte) string {
	switch {
	case r < 0:
		return `\x` + strconv.FormatUint(uint64(b)>>4, 16) + strconv.FormatUint(uint64(b)&15, 16)
	case r == '\n' || r == '\t' || !unsafeRune(r):
		return ""
	}
	q := strconv.QuoteRuneToASCII(r)
	return q[1 : len(q)-1]
}
