package render

import (
	"io"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/untrusted"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// table collects rows for one tablewriter table. The column alignment is
// given as a string, one letter per column: 'l' left, 'r' right.
type table struct {
	header []string
	align  string
	// widths holds, per column, the widest a cell may be (untrusted.Width) as
	// written, escaped for its channel; 0 or no entry is no limit. Cells
	// are cut when the table is rendered, after escaping, so that a cut
	// never splits an escape and the escapes count in the width.
	widths []int
	// cuts says, per column, where its cells lose columns when cut; no
	// entry cuts the end.
	cuts []cut
	// cutHeader cuts the header cells to widths too (see fitTable).
	cutHeader bool
	// splitHeader writes the header cell of a column of figures wider
	// than its cells on two lines, broken at a space (see fitTable).
	splitHeader bool
	rows        [][]string
}

func newTable(align string, header ...string) *table {
	return &table{header: header, align: align}
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// clip sets the widths of the first columns, one per column (see
// table.widths), and returns the table.
func (t *table) clip(widths ...int) *table {
	t.widths = widths
	return t
}

// cut is where a column's cells lose columns when the table cuts them.
type cut uint8

const (
	cutEnd    cut = iota // the start shows (untrusted.Clip)
	cutStart             // the end shows: a stack's innermost event (untrusted.ClipStart)
	cutMiddle            // both ends show: "ProfilerStep#12" (untrusted.ClipMiddle)
	cutNever             // never cut: a verdict, a word that must read whole
)

// cutAt sets where column i's cells are cut and returns the table.
func (t *table) cutAt(i int, c cut) *table {
	t.cuts = append(t.cuts, make([]cut, max(i+1-len(t.cuts), 0))...)
	t.cuts[i] = c
	return t
}

// cutOf returns where column i's cells are cut.
func (t *table) cutOf(i int) cut {
	if i < len(t.cuts) {
		return t.cuts[i]
	}
	return cutEnd
}

// cell returns row cell c of column i escaped by esc (nil for none) and
// cut to the column's width.
func (t *table) cell(c string, i int, esc func(string) string) string {
	n := 0
	if i < len(t.widths) {
		n = t.widths[i]
	}
	switch t.cutOf(i) {
	case cutStart:
		return untrusted.ClipStart(c, n, esc)
	case cutMiddle:
		return untrusted.ClipMiddle(c, n, esc)
	case cutNever:
		return untrusted.Clip(c, 0, esc)
	}
	return untrusted.Clip(c, n, esc)
}

func (t *table) aligns() []tw.Align {
	a := make([]tw.Align, len(t.header))
	for i := range a {
		a[i] = tw.AlignLeft
		if i < len(t.align) && t.align[i] == 'r' {
			a[i] = tw.AlignRight
		}
	}
	return a
}

// renderText writes the table for a terminal: no outer border, a rule under
// the header, two spaces of indentation; esc escapes each cell.
func (t *table) renderText(w io.Writer, esc func(string) string) error {
	var buf strings.Builder
	tb := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: t.aligns()}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: t.aligns()}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
	)
	et := t.escaped(esc)
	if t.splitHeader {
		// Two header lines as the first rows, the rule added below.
		top, bottom := et.splitHeads()
		et.rows = append([][]string{top, bottom}, et.rows...)
		et.header = nil
	}
	if err := et.fill(tb); err != nil {
		return err
	}
	// Indent the table under its heading and drop the padding tablewriter
	// leaves at line ends, which golden files and editors dislike.
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	for i, line := range lines {
		lines[i] = " " + strings.TrimRight(line, " ")
		if strings.Trim(lines[i], " -") == "" && len(lines[i]) > 3 {
			lines[i] = "  " + lines[i][3:] // the rule under the header, flush with the cells
		}
	}
	if t.splitHeader && len(lines) >= 2 {
		rule := "  " + strings.Repeat("-", max(widest(strings.Join(lines, "\n"))-2, 0))
		lines = slices.Insert(lines, 2, rule)
	}
	for _, line := range lines {
		if _, err := io.WriteString(w, line+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// splitHeads returns the escaped header as two lines: the cell of a
// column of figures (right-aligned) wider than its widest row cell is
// broken at the space that makes its wider part narrowest; the rest go on
// the second line, next to the rule.
func (t *table) splitHeads() (top, bottom []string) {
	top, bottom = make([]string, len(t.header)), make([]string, len(t.header))
	for i, h := range t.header {
		bottom[i] = h
		if t.Align(i) != "r" {
			continue
		}
		cells := 0
		for _, r := range t.rows {
			if i < len(r) {
				cells = max(cells, untrusted.Width(r[i]))
			}
		}
		if untrusted.Width(h) <= cells {
			continue
		}
		best := untrusted.Width(h)
		for j := range len(h) {
			if h[j] != ' ' {
				continue
			}
			if w := max(untrusted.Width(h[:j]), untrusted.Width(h[j+1:])); w < best {
				best, top[i], bottom[i] = w, h[:j], h[j+1:]
			}
		}
	}
	return top, bottom
}

// renderMarkdown writes the table as a GitHub-flavoured Markdown table.
func (t *table) renderMarkdown(w io.Writer) error {
	esc := t.escaped(mdEscape)
	tb := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: t.aligns()}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: t.aligns()}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	return esc.fill(tb)
}

func (t *table) fill(tb *tablewriter.Table) error {
	if t.header != nil {
		tb.Header(t.header)
	}
	for _, r := range t.rows {
		if err := tb.Append(r); err != nil {
			return err
		}
	}
	return tb.Render()
}

// escaped returns the table with every cell passed through esc and the
// row cells cut to their column's width.
func (t *table) escaped(esc func(string) string) *table {
	header := make([]string, len(t.header))
	for i, c := range t.header {
		if t.cutHeader {
			header[i] = t.cell(c, i, esc)
		} else {
			header[i] = esc(c)
		}
	}
	return &table{header: header, align: t.align, rows: t.cut(esc)}
}

// cut returns the rows, each cell escaped by esc (nil for none) and cut to
// its column's width.
func (t *table) cut(esc func(string) string) [][]string {
	rows := make([][]string, len(t.rows))
	for j, r := range t.rows {
		rows[j] = make([]string, len(r))
		for i, c := range r {
			rows[j][i] = t.cell(c, i, esc)
		}
	}
	return rows
}

// mdEscape makes text, the tool's own or quoting the trace, inert inline
// Markdown or a table cell: no markup, link, image, mention or line break
// comes of it.
func mdEscape(s string) string { return untrusted.Markdown(s) }

// Head returns the header cells, for templates.
func (t *table) Head() []string { return t.header }

// Body returns the rows cut to their columns' widths, for templates, which
// escape them for HTML after the cut.
func (t *table) Body() [][]string { return t.cut(nil) }

// Align returns "r" for a right-aligned column i, "l" otherwise.
func (t *table) Align(i int) string {
	if i < len(t.align) && t.align[i] == 'r' {
		return "r"
	}
	return "l"
}
