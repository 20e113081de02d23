// Package report renders an analyze.Result: as text for a terminal, as the
// versioned JSON document (schema tracegap/report/v1), as GitHub-flavoured
// Markdown for a pull-request comment, as one self-contained HTML page with an
// SVG timeline per device, and as a pprof profile of device-idle time.
//
// Report renders results and nothing else: it neither reads traces nor
// analyses them.
package render

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
)

// Options tune how a report is rendered. The zero value is usable.
type Options struct {
	// Width, when positive, is the terminal's width in columns: text
	// reports fit it (tables elide cells, prose wraps; see fitTable).
	Width int
	// Color adds ANSI colours to text output. The caller decides: only
	// for a terminal, never when NO_COLOR is set.
	Color bool
	// Top caps the number of top gaps shown; 0 shows every gap in
	// Result.TopGaps.
	Top int
	// MaxSteps caps the step rows of text and Markdown reports (the
	// others list every step); 0 means 40 for text and 12 for Markdown.
	MaxSteps int
	// AllSteps lists every step and device: in text and Markdown as
	// rows (MaxSteps is ignored), in JSON and HTML past listMax.
	AllSteps bool
	// Array writes JSON as an array even of one result: the command line
	// sets it when its inputs could have held several (more than one
	// argument, or a directory), so that the output's shape follows
	// the command, not how many traces were found or could be read.
	Array bool
	// job is set when the result rendered is a job's Overall: its tables
	// then show the job's rest (job.Rest), so that they add up.
	job *job.Result
}

// listMax is how many steps and devices JSON and HTML reports list at
// most, and htmlMaxTimelines how many device timelines HTML draws, unless
// Options.AllSteps: a trace of a few megabytes can hold a million steps or
// a hundred thousand devices, and the report would grow with them.
const (
	listMax          = 1000
	htmlMaxTimelines = 64
)

// listed returns how many of n steps or devices a JSON or HTML report
// lists.
func (o Options) listed(n int) int {
	if o.AllSteps {
		return n
	}
	return min(n, listMax)
}

// stepRows returns how many step rows a text or Markdown report lists,
// def by default.
func (o Options) stepRows(def int) int {
	switch {
	case o.AllSteps:
		return math.MaxInt
	case o.MaxSteps > 0:
		return o.MaxSteps
	}
	return def
}

// Default row caps where Options leave them at zero.
const (
	textMaxSteps     = 40
	markdownMaxSteps = 12
	markdownMaxGaps  = 5
)

// Write renders one result in format f.
func Write(w io.Writer, res *analyze.Result, f Format, opt Options) error {
	return WriteAll(w, []*analyze.Result{res}, f, opt)
}

// WriteAll renders several results, in order. Text and Markdown put one
// report after another; JSON writes the v1 object for a single result
// (unless Options.Array) and a JSON array of v1 objects for several; HTML writes one page with a section
// per result.
func WriteAll(w io.Writer, results []*analyze.Result, f Format, opt Options) error {
	for i, r := range results {
		if r == nil {
			return fmt.Errorf("report: result %d is nil", i)
		}
	}
	d := lookup(f)
	if d == nil || d.runs == nil {
		return writerError(f, OfRuns)
	}
	bw := bufio.NewWriter(w)
	if err := d.runs(bw, results, opt); err != nil {
		return err
	}
	return bw.Flush()
}

// topGaps returns the gaps Result.TopGaps points at, at most n of them (all
// when n <= 0), skipping indexes out of range.
func topGaps(res *analyze.Result, n int) []*analyze.Gap {
	var out []*analyze.Gap
	for _, i := range res.TopGaps {
		if n > 0 && len(out) == n {
			break
		}
		if i >= 0 && i < len(res.Gaps) {
			out = append(out, &res.Gaps[i])
		}
	}
	return out
}
