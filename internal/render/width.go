package render

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/untrusted"
)

// A text report fits a terminal's width when Options.Width says it (the
// CLI takes it from COLUMNS or the terminal): a table elides the cells of
// its widest column rather than wrap its rows, and a line of prose wraps
// at spaces, its continuation indented under it. Without a width (a file,
// a pipe) nothing changes.

// minColumn is the narrowest a table cell is cut to when fitting a width;
// minMiddle that of a column cut in the middle, whose ends tell its cells
// apart ("P...12").
const (
	minColumn = 8
	minMiddle = 6
)

// minWidth returns the narrowest column i of tb is cut to.
func (tb *table) minWidth(i int) int {
	if tb.cutOf(i) == cutMiddle {
		return minMiddle
	}
	return minColumn
}

// fitTable renders tb for the terminal at most width columns wide when
// that can be done by cutting cells: the widest column of text (a
// left-aligned one: figures and cutNever columns are never cut) loses
// what it must, header
// included, down to the width of the next widest (so that wide columns
// shrink together) or minColumn, and so on.
func fitTable(tb *table, width int, esc func(string) string) (string, error) {
	var buf strings.Builder
	tb.cutHeader = true
	// Each round takes at least a column from the widest text column, so
	// the first round's excess bounds the rounds.
	for round, rounds := 0, 1; round < rounds; round++ {
		buf.Reset()
		if err := tb.renderText(&buf, esc); err != nil {
			return "", err
		}
		over := widest(buf.String()) - width
		if width <= 0 || over <= 0 {
			break
		}
		if round == 0 {
			rounds = over + 2
		}
		if !tb.splitHeader && headsWider(tb, esc) {
			tb.splitHeader = true // headers on two lines lose nothing: first
			continue
		}
		col, w, next := widestColumns(tb, esc)
		if col < 0 {
			break
		}
		tb.widths = append(tb.widths, make([]int, max(col+1-len(tb.widths), 0))...)
		tb.widths[col] = max(w-over, next, tb.minWidth(col))
		if tb.widths[col] == w {
			tb.widths[col]-- // next is as wide: take one and go on
		}
	}
	return trimRules(buf.String(), width), nil
}

// headsWider reports whether a header cell of tb is wider than its
// column's cells and could break at a space: a table of figures under
// long names.
func headsWider(tb *table, esc func(string) string) bool {
	top, _ := tb.escaped(esc).splitHeads()
	return slices.ContainsFunc(top, func(s string) bool { return s != "" })
}

// trimRules cuts the rule under a table's header to width: a table of
// figures alone may stay wider than the terminal, its rule need not.
func trimRules(s string, width int) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		body := strings.TrimRight(l, "\n")
		if len(body) > width && strings.Trim(body, " -") == "" {
			lines[i] = body[:width] + l[len(body):]
		}
	}
	return strings.Join(lines, "")
}

// widestColumns returns the column of tb whose cells, escaped and cut as
// the table cuts them, are widest among the text columns wider than their
// least width (minWidth), that width, and the width of the next widest
// such column (its least width when there is none); col is -1 when no
// column can lose width.
func widestColumns(tb *table, esc func(string) string) (col, width, next int) {
	col, next = -1, 0
	for i := range tb.header {
		if i < len(tb.align) && tb.align[i] == 'r' || tb.cutOf(i) == cutNever {
			continue
		}
		w := cellsWidth(tb, i, esc)
		switch {
		case w <= tb.minWidth(i):
		case w > width:
			next = max(next, width)
			col, width = i, w
		default:
			next = max(next, w)
		}
	}
	if col >= 0 {
		next = max(next, tb.minWidth(col))
	}
	return col, width, next
}

// cellsWidth returns the width of column i's widest cell, header included,
// as rendered.
func cellsWidth(tb *table, i int, esc func(string) string) int {
	w := untrusted.Width(tb.cell(tb.header[i], i, esc))
	for _, r := range tb.rows {
		if i < len(r) {
			w = max(w, untrusted.Width(tb.cell(r[i], i, esc)))
		}
	}
	return w
}

// ansi matches the colour codes of a styled line, which take no width.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// lineWidth is the columns a line takes on a terminal.
func lineWidth(s string) int { return untrusted.Width(ansi.ReplaceAllString(s, "")) }

// widest returns the width of the widest line of s.
func widest(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		n = max(n, lineWidth(line))
	}
	return n
}

// wrapWriter wraps the lines written through it at width columns.
type wrapWriter struct {
	w       io.Writer
	width   int
	partial []byte
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.partial = append(ww.partial, p...)
	for {
		i := bytes.IndexByte(ww.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		if _, err := io.WriteString(ww.w, wrapLine(string(ww.partial[:i]), ww.width)); err != nil {
			return 0, err
		}
		ww.partial = ww.partial[i+1:]
	}
}

// raw writes s, whole lines, as it is: a table fitted to the width
// already, whose rows must not be broken at spaces even where it stays
// wider.
func (ww *wrapWriter) raw(s string) error {
	if len(ww.partial) > 0 {
		if err := ww.Flush(); err != nil {
			return err
		}
		if _, err := io.WriteString(ww.w, "\n"); err != nil {
			return err
		}
	}
	_, err := io.WriteString(ww.w, s)
	return err
}

// writeRaw writes s, whole lines, to w as it is: through a wrapWriter's
// raw, which breaks no line of it, else directly.
func writeRaw(w io.Writer, s string) error {
	if ww, ok := w.(*wrapWriter); ok {
		return ww.raw(s)
	}
	_, err := io.WriteString(w, s)
	return err
}

// Flush writes a last line without its newline.
func (ww *wrapWriter) Flush() error {
	if len(ww.partial) == 0 {
		return nil
	}
	s := strings.TrimSuffix(wrapLine(string(ww.partial), ww.width), "\n")
	ww.partial = nil
	_, err := io.WriteString(ww.w, s)
	return err
}

// wrapLine returns line, with its newline, broken at spaces into lines of
// at most width columns, each continuation indented two columns past the
// line's own indentation. A word wider than a line stays whole.
func wrapLine(line string, width int) string {
	if lineWidth(line) <= width {
		return line + "\n"
	}
	body := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(body)]
	next := indent + "  "
	var out strings.Builder
	cur, curWidth := indent, len(indent)
	for _, word := range strings.Fields(body) {
		w := lineWidth(word)
		switch {
		case curWidth == len(indent):
			cur, curWidth = cur+word, curWidth+w
		case curWidth+1+w <= width:
			cur, curWidth = cur+" "+word, curWidth+1+w
		default:
			out.WriteString(cur + "\n")
			cur, curWidth = next+word, len(next)+w
		}
	}
	out.WriteString(cur + "\n")
	return out.String()
}
