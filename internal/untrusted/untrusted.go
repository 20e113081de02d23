// Package untrusted makes text that came from outside (event, thread and
// device names from a trace, file names, request paths) safe to write to
// each output channel: a terminal, a CI annotation, Markdown, a TSV cell, a
// log line. A trace is input like any other: a name can carry escape
// sequences that retitle a terminal, a newline that starts a GitHub
// workflow command, or Markdown that renders a remote image in a pull
// request. Each function here keeps the text readable and makes it inert
// for its channel; trusted text (the tool's own words) needs none of them.
package untrusted

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Terminal returns s with every character that could drive a terminal or
// disguise what is shown written visibly escaped, as a Go string literal
// would write it, after InertCI has made CI log commands inert: control characters (NUL, ESC and so the OSC and CSI
// sequences it starts, CR, LF, tab, DEL, the C1 controls), format
// characters (the bidirectional overrides and isolates, zero-width
// characters), line and paragraph separators, and bytes that are not
// UTF-8. "\x1b]0;title\a" becomes `\x1b]0;title\a`; "a\u202eb" becomes
// `a\u202eb`. Everything else, backslashes included, is kept as is.
func Terminal(s string) string {
	s = InertCI(s)
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case unsafeRune(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// CI runners act on commands written in their logs: GitHub Actions on a
// line starting with "::" after white space (::error::, ::add-mask::,
// ::stop-commands::) and, in its older syntax, on "##[" anywhere; Azure
// Pipelines on "##vso[" anywhere in a line (##vso[task.setvariable ...])
// and on "##[" formatting commands. GitLab's only markers (section_start,
// section_end) need a CR and an ESC, which Terminal escapes.

// InertCI returns s with every CI log command it could start made inert,
// wherever s is written in a line: the '[' after "##" or "##vso" (in any
// case), and the first ':' of a leading "::", written as a Go literal
// would escape it (\x5b, \x3a). A name placed mid-line cannot start a
// GitHub command, but where it lands is not known here, and C++ names
// (at::native::add) are kept, as only a leading "::" is touched. Other
// text is returned as it is.
func InertCI(s string) string {
	if !strings.Contains(s, "##") && !strings.Contains(s, "::") {
		return s
	}
	var b strings.Builder
	rest := s
	if t := strings.TrimLeft(s, " \t\v\f\r\n"); strings.HasPrefix(t, "::") {
		b.WriteString(s[:len(s)-len(t)])
		b.WriteString(`\x3a`)
		rest = t[1:]
	}
	for {
		i := strings.Index(rest, "##")
		if i < 0 {
			break
		}
		j := i + 2
		if k := j + 3; k < len(rest) && strings.EqualFold(rest[j:k], "vso") {
			j = k
		}
		if j < len(rest) && rest[j] == '[' {
			b.WriteString(rest[:j])
			b.WriteString(`\x5b`)
			rest = rest[j+1:]
			continue
		}
		b.WriteString(rest[:i+1])
		rest = rest[i+1:]
	}
	b.WriteString(rest)
	return b.String()
}

// Log is Terminal for a log line: a name or request path written to a log
// cannot end the line and forge another, or drive the terminal tailing it.
func Log(s string) string { return Terminal(s) }

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			// Slow path only for text that may hold something to escape.
			for _, r := range s[i:] {
				if r == utf8.RuneError || unsafeRune(r) {
					return true
				}
			}
			return false
		}
	}
	return false
}

// GitHub workflow commands ("::error file=F,title=T::message") unescape
// %25 in the message, and also %3A and %2C in a property; CR and LF are
// escaped visibly before these apply.
var (
	annotationData     = strings.NewReplacer("%", "%25")
	annotationProperty = strings.NewReplacer("%", "%25", ":", "%3A", ",", "%2C")
)

// AnnotationMessage returns the message of a GitHub workflow command
// (what follows "::"): control characters escaped visibly as by Terminal,
// so that no line break ends the command and starts another, and '%'
// escaped as GitHub unescapes it.
func AnnotationMessage(s string) string { return annotationData.Replace(Terminal(s)) }

// AnnotationProperty returns a property value of a GitHub workflow command
// (file=..., title=...): as AnnotationMessage, and ':' and ',' escaped too,
// which would end the value.
func AnnotationProperty(s string) string { return annotationProperty.Replace(Terminal(s)) }

// markdown escapes what renders as markup in GitHub-flavoured Markdown,
// inline or in a table cell: backslash escapes for emphasis, code, link and
// image brackets, table pipes and strike-through; entities for HTML and
// for '&', which could spell an entity; and a word joiner after '@', which
// leaves "@name" readable but no longer a mention that notifies anyone.
var markdown = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`|`, `\|`, `~`, `\~`, `<`, `&lt;`, `>`, `&gt;`, `&`, `&amp;`,
	`@`, "@\u2060",
)

// Markdown returns s for inline GitHub-flavoured Markdown or a table cell:
// control characters, CR and LF included, escaped visibly as by Terminal
// (a CR or LF would end a table row), then the markup characters escaped,
// so that no link, image, mention, code span, HTML or table column comes
// of it.
func Markdown(s string) string { return markdown.Replace(Terminal(s)) }

// TSV returns s as a cell of tab-separated values: backslash, tab, CR and
// LF (which would end the cell or the row) and other control characters
// escaped visibly, and a cell starting with '=', '+', '-' or '@', which a
// spreadsheet would evaluate as a formula, prefixed with a quote.
func TSV(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = Terminal(s)
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		s = "'" + s
	}
	return s
}

// MarkdownCode returns s as a Markdown code span, in which nothing renders
// as markup: control characters escaped visibly as by Terminal (a line
// break would end the span), and fenced by a run of backticks longer than
// any in s, so that none closes it early.
func MarkdownCode(s string) string {
	s = Terminal(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// Ellipsis marks where Clip cut a name.
const Ellipsis = "..."

// Clip returns s escaped by esc and, when the escaped text is wider than n
// columns, cut to at most n columns ending in Ellipsis. Widths are a
// terminal's (see Width): a Chinese or Japanese name takes two columns a
// character. It escapes before it cuts, so the width holds for what is
// written, and it cuts only between the escapes of whole runes of s: never
// inside an escape (`\x1b` is kept or dropped whole) nor inside a UTF-8
// sequence. esc must escape rune by rune, as Terminal and Markdown do; a
// nil esc escapes nothing, for a channel that escapes later (an HTML
// template). n of 3 or less leaves s uncut.
func Clip(s string, n int, esc func(string) string) string {
	s = inertFor(s, esc)
	out, esc, fits := escapeFor(s, n, esc)
	if fits {
		return out
	}
	head, _, _ := headOf(s, n-len(Ellipsis), esc)
	return head + Ellipsis
}

// ClipStart is Clip cutting the start instead of the end: it keeps the
// last columns of s, after Ellipsis. It is for text whose end matters
// most, a host stack whose innermost event is last.
func ClipStart(s string, n int, esc func(string) string) string {
	s = inertFor(s, esc)
	out, esc, fits := escapeFor(s, n, esc)
	if fits {
		return out
	}
	tail, _, _ := tailOf(s, n-len(Ellipsis), esc)
	return Ellipsis + tail
}

// ClipMiddle is Clip cutting the middle: it keeps the first and the last
// columns of s around Ellipsis, the end getting the larger half when the
// room is odd. It is for names told apart by their ends: "ProfilerStep#12"
// cut to 9 columns is "Pro...#12", not "Profil...".
func ClipMiddle(s string, n int, esc func(string) string) string {
	s = inertFor(s, esc)
	out, esc, fits := escapeFor(s, n, esc)
	if fits {
		return out
	}
	room := n - len(Ellipsis)
	tail, from, used := tailOf(s, room-room/2, esc)
	head, _, _ := headOf(s[:from], room-used, esc) // what the tail left
	return head + Ellipsis + tail
}

// headOf returns the longest start of s whose escapes, rune by rune, fit
// room columns: that text escaped, the length of s it covers, and the
// columns it takes. Escaped rune by rune, as measured, a cut never splits
// an escape, and no part gains an escape that escaping it whole would add
// (a tail starting with "::", mid-line after Ellipsis).
func headOf(s string, room int, esc func(string) string) (text string, to, width int) {
	var b strings.Builder
	for to < len(s) {
		_, size := utf8.DecodeRuneInString(s[to:])
		unit := esc(s[to : to+size])
		if width+Width(unit) > room {
			break
		}
		b.WriteString(unit)
		width += Width(unit)
		to += size
	}
	return b.String(), to, width
}

// tailOf is headOf for the end of s: the escaped text, where in s it
// starts, and its width.
func tailOf(s string, room int, esc func(string) string) (text string, from, width int) {
	var units []string
	for from = len(s); from > 0; {
		_, size := utf8.DecodeLastRuneInString(s[:from])
		unit := esc(s[from-size : from])
		if width+Width(unit) > room {
			break
		}
		units = append(units, unit)
		width += Width(unit)
		from -= size
	}
	slices.Reverse(units)
	return strings.Join(units, ""), from, width
}

// escapeFor returns s escaped by esc (nil: not escaped), the escape it
// used, and whether the result needs no cut to n columns.
func escapeFor(s string, n int, esc func(string) string) (string, func(string) string, bool) {
	if esc == nil {
		esc = func(s string) string { return s }
	}
	out := esc(s)
	return out, esc, n <= len(Ellipsis) || Width(out) <= n
}

// inertFor returns s made inert for CI logs (InertCI) before a channel's
// escape esc applies to it rune by rune, as Clip does: a command spans
// runes. A nil esc (text escaped later) keeps s as it is.
func inertFor(s string, esc func(string) string) string {
	if esc == nil {
		return s
	}
	return InertCI(s)
}

// Width returns how many columns of a terminal s takes: two for an East
// Asian wide rune, one for the rest, as the tables (tablewriter) measure
// cells. A rune of no width (a combining mark, or a control character a
// channel escapes later) counts as one, so that nothing goes uncounted.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += max(runewidth.RuneWidth(r), 1)
	}
	return n
}

// Pad returns s followed by the spaces that make it n columns wide, or s
// when it is as wide already: fmt's %-18s counts runes, not columns.
func Pad(s string, n int) string { return s + strings.Repeat(" ", max(n-Width(s), 0)) }
