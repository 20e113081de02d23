package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// Format names an output format.
type Format string

// The output formats; formats holds what each is.
const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "markdown"
	HTML     Format = "html"
)

// Of says what a report is written of. A format supports some of them:
// those it has a writer for in formats.
type Of uint8

// What reports are written of.
const (
	OfRuns       Of = iota // one result or several: Write, WriteAll
	OfJob                  // the ranks of a distributed job: WriteJob
	OfComparison           // two runs compared: WriteComparison
	OfSweep                // runs of a sweep: WriteSweep
)

// String names what is written, for errors: "a job".
func (o Of) String() string {
	switch o {
	case OfRuns:
		return "a report"
	case OfJob:
		return "a job"
	case OfComparison:
		return "a comparison"
	case OfSweep:
		return "a sweep"
	}
	return fmt.Sprintf("Of(%d)", uint8(o))
}

// formatDef is a row of formats: a format's names, the file-name endings
// that pick it, and its writer of each thing it can write (nil: it cannot).
type formatDef struct {
	format   Format
	names    []string // what ParseFormat accepts, the format's own name first
	suffixes []string // file-name endings, the one help shows first
	runs     func(io.Writer, []*analyze.Result, Options) error
	job      func(io.Writer, *job.Result, Options) error
	compare  func(io.Writer, *compare.Comparison, Options) error
	sweep    func(io.Writer, *compare.Sweep, Options) error
}

// formats is every output format, in the order help and errors list them.
// ParseFormat, Suffixes, the writers, the help text and the errors read
// it: a format is added here and nowhere else in this list's users.
var formats = []formatDef{
	{format: Text, names: []string{"text", "txt"}, suffixes: []string{".txt"},
		runs: writeText, job: writeJobText, compare: compareText, sweep: sweepText},
	{format: JSON, names: []string{"json"}, suffixes: []string{".json"},
		runs: writeJSON, job: plain(writeJobJSON), compare: plain(compareJSON), sweep: plain(sweepJSON)},
	{format: Markdown, names: []string{"markdown", "md"}, suffixes: []string{".md", ".markdown"},
		runs: writeMarkdown, job: writeJobMarkdown, compare: plain(compareMarkdown), sweep: plain(sweepMarkdown)},
	{format: HTML, names: []string{"html"}, suffixes: []string{".html", ".htm"},
		runs: writeHTML, job: writeJobHTML, sweep: plain(sweepHTML)},
}

// supports reports whether d has a writer for o.
func (d *formatDef) supports(o Of) bool {
	switch o {
	case OfRuns:
		return d.runs != nil
	case OfJob:
		return d.job != nil
	case OfComparison:
		return d.compare != nil
	case OfSweep:
		return d.sweep != nil
	}
	return false
}

// lookup returns f's row, nil for a format not in formats.
// plain adapts a writer that takes no Options (the formats whose output
// does not depend on a terminal) to the table's writers.
func plain[T any](write func(io.Writer, T) error) func(io.Writer, T, Options) error {
	return func(w io.Writer, v T, _ Options) error { return write(w, v) }
}

func lookup(f Format) *formatDef {
	for i := range formats {
		if formats[i].format == f {
			return &formats[i]
		}
	}
	return nil
}

// Formats returns the formats that can write o, in the order help shows
// them.
func Formats(o Of) []Format {
	var out []Format
	for i := range formats {
		if formats[i].supports(o) {
			out = append(out, formats[i].format)
		}
	}
	return out
}

// FormatNames lists the formats that can write o for help and errors:
// "text, json, markdown or html".
func FormatNames(o Of) string {
	var names []string
	for _, f := range Formats(o) {
		names = append(names, string(f))
	}
	return human.OrList(names)
}

// SuffixNames lists the file-name endings that pick a format that can
// write o, one a format: ".txt, .json, .md or .html".
func SuffixNames(o Of) string {
	var names []string
	for _, f := range Formats(o) {
		names = append(names, lookup(f).suffixes[0])
	}
	return human.OrList(names)
}

// Suffix returns the file-name ending that names f (".md"), "" for a
// format not in the table.
func (f Format) Suffix() string {
	if d := lookup(f); d != nil {
		return d.suffixes[0]
	}
	return ""
}

// Suffixes returns every file-name ending that names f, the one help
// shows first.
func (f Format) Suffixes() []string {
	if d := lookup(f); d != nil {
		return append([]string(nil), d.suffixes...)
	}
	return nil
}

// For returns nil when f can write o, else an error that says which
// formats can: commands call it before analysing anything, so that a
// format a job cannot be written in is refused before the job is read.
func (f Format) For(o Of) error {
	if d := lookup(f); d != nil && d.supports(o) {
		return nil
	}
	return fmt.Errorf("%s cannot be written as %s: expected %s", o, f, FormatNames(o))
}

// writerError is the error of a writer asked for a format it cannot
// write: an unknown format is named as such.
func writerError(f Format, o Of) error {
	if lookup(f) == nil && (o == OfRuns || o == OfJob) {
		return fmt.Errorf("report: unknown format %q: expected %s", f, FormatNames(o))
	}
	return fmt.Errorf("report: %s cannot be written as %q: expected %s", o, f, FormatNames(o))
}

// ParseFormat returns the format named s (a name in formats: "text",
// "md"), ignoring case and surrounding space.
func ParseFormat(s string) (Format, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	var all []string
	for i := range formats {
		for _, n := range formats[i].names {
			if n == name {
				return formats[i].format, nil
			}
		}
		all = append(all, string(formats[i].format))
	}
	return "", fmt.Errorf("unknown report format %q: expected %s", s, human.OrList(all))
}

// sweepJSON writes the sweep's v1 JSON document.
func sweepJSON(w io.Writer, s *compare.Sweep) error {
	enc := json.NewEncoder(untrusted.JSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Schema string `json:"schema"`
		*compare.Sweep
	}{SweepSchema, s})
}
