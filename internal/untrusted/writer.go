package untrusted

import (
	"bytes"
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
//
// It also makes inert the CI log commands that act anywhere in a line
// (see InertCI): the '[' of "##[" and "##vso[" is written \u005b, which
// decodes to the same string.
func JSONWriter(w io.Writer) io.Writer {
	return &escapingWriter{w: w, esc: jsonEscape, cmd: jsonCommands}
}

// JSON returns the JSON text b escaped as JSONWriter escapes it.
func JSON(b []byte) []byte {
	out, _ := jsonCommands.inert(nil, escapeText(nil, b, jsonEscape), true)
	return out
}

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
//
// It also makes inert the CI log commands the document could start
// (see InertCI), as character references that a browser and an XML
// reader decode to the same text: the '[' of "##[" and "##vso[" anywhere,
// and the first ':' of a line starting "::" (after white space). The
// document's own markup holds neither; the escaping of names keeps a
// newline, which may start such a line.
func MarkupWriter(w io.Writer) io.Writer {
	return &escapingWriter{w: w, esc: markupEscape, cmd: markupCommands, start: true}
}

// Markup returns the HTML, SVG or XML document b escaped as MarkupWriter
// escapes it.
func Markup(b []byte) []byte {
	out, _ := markupCommands.inert(nil, escapeText(nil, b, markupEscape), true)
	return out
}

// escapingWriter escapes each Write with esc, and the CI log commands
// with cmd, before writing it to w. start is whether the next Write
// begins a line (white space aside).
type escapingWriter struct {
	w     io.Writer
	esc   escapeFunc
	cmd   commands
	start bool
	buf   []byte
	out   []byte
}

// commands is how a document format writes the characters that make a
// CI log command inert: bracket for the '[' of "##[" and "##vso[", colon
// for the first ':' of a line starting "::" (empty: such a line cannot
// come of the format's escaping).
type commands struct{ bracket, colon string }

var (
	jsonCommands   = commands{bracket: `\u005b`}
	markupCommands = commands{bracket: "&#91;", colon: "&#58;"}
)

// inert appends b to dst with its CI log commands made inert; start is
// whether b begins a line, and the result's bool whether its end does.
func (c commands) inert(dst, b []byte, start bool) ([]byte, bool) {
	from := 0
	for i := 0; i < len(b); i++ {
		switch ch := b[i]; {
		case ch == '\n':
			start = true
		case ch == ' ' || ch == '\t':
		case ch == ':' && start && c.colon != "" && i+1 < len(b) && b[i+1] == ':':
			dst = append(append(dst, b[from:i]...), c.colon...)
			from, start = i+1, false
		case ch == '#':
			start = false
			if j := bracketAfter(b, i); j > 0 {
				dst = append(append(dst, b[from:j]...), c.bracket...)
				from, i = j+1, j
			}
		default:
			start = false
		}
	}
	return append(dst, b[from:]...), start
}

// bracketAfter returns the index of the '[' of a "##[" or "##vso[" (in
// any case) at b[i:], or -1.
func bracketAfter(b []byte, i int) int {
	if i+2 >= len(b) || b[i+1] != '#' {
		return -1
	}
	j := i + 2
	if j+3 < len(b) && bytes.EqualFold(b[j:j+3], []byte("vso")) {
		j += 3
	}
	if b[j] == '[' {
		return j
	}
	return -1
}

func (e *escapingWriter) Write(p []byte) (int, error) {
	e.buf = escapeText(e.buf[:0], p, e.esc)
	e.out, e.start = e.cmd.inert(e.out[:0], e.buf, e.start)
	e.buf, e.out = e.out, e.buf
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
