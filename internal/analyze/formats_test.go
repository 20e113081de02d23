package analyze

import (
	"bytes"
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// writers are the formats the scenarios round-trip through: the generator
// writes the Spec, the registered reader reads it back.
var writers = []struct {
	name  string
	write func(io.Writer, *tracetest.Spec) error
}{
	{"chrome", tracetest.WriteChrome},
	{"xplane", tracetest.WriteXPlane},
}

func readBack(t *testing.T, write func(io.Writer, *tracetest.Spec) error, s *tracetest.Spec) *Result {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf, s); err != nil {
		t.Fatalf("write: %v", err)
	}
	tr, err := trace.Read(&buf, int64(buf.Len()), trace.Options{})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	res, err := analyzeAdvised(tr, DefaultOptions())
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return res
}

// TestScenarioFormats runs the scenarios through every format's writer and
// reader: same verdicts and splits as the direct build.
func TestScenarioFormats(t *testing.T) {
	for _, w := range writers {
		for _, sc := range scenarios {
			t.Run(w.name+"/"+sc.name, func(t *testing.T) {
				checkScenario(t, sc, readBack(t, w.write, sc.loop.Spec()))
			})
		}
	}
}

// formatNeutral strips from r what legitimately differs between formats: the
// source, thread names and indexes, and stream names (each format names threads its
// own way), which findings' messages quote.
func formatNeutral(r *Result) *Result {
	c := *r
	c.Source = Source{}
	c.Gaps = append([]Gap(nil), r.Gaps...)
	for i := range c.Gaps {
		c.Gaps[i].Thread, c.Gaps[i].Track = "", 0
		if w := c.Gaps[i].Waits; w != nil {
			c.Gaps[i].Waits = &Waited{Kind: w.Kind, Call: w.Call}
		}
	}
	// Copies are compared: their sizes reach XPlane through
	// memcpy_details ("size:704") and Chrome through args.bytes. A copy
	// whose name gives no direction is one in Chrome only (XPlane knows
	// copies by their names and details), and is left out.
	c.Copies = slices.DeleteFunc(slices.Clone(r.Copies), func(c CopyStat) bool { return c.Direction == "" })
	if len(c.Copies) == 0 {
		c.Copies = nil
	}
	// Dependencies name their stream by its device track, which each
	// format names its own way.
	c.Dependencies = slices.Clone(r.Dependencies)
	for i := range c.Dependencies {
		c.Dependencies[i].Stream = ""
	}
	c.Facts = neutralFacts(r.Facts)
	c.Findings = nil
	for _, f := range r.Findings {
		c.Findings = append(c.Findings, Finding{ID: f.ID, Severity: f.Severity})
	}
	return &c
}

// neutralFacts strips the thread names and indexes from f.
func neutralFacts(f Facts) Facts {
	th := func(t *Thread) { t.Track, t.Name = min(t.Track, 0), "" }
	for c := range f.Causes {
		th(&f.Causes[c].Thread)
	}
	th(&f.Sync.Thread)
	th(&f.InputThread)
	th(&f.Loop)
	for c, w := range f.Elsewhere {
		if w != nil {
			x := *w
			x.Thread = ""
			f.Elsewhere[c] = &x
		}
	}
	return f
}

// TestFormatsAgree checks that a scenario gives the same Result, gap by gap
// and segment by segment, built directly and read back from each format.
func TestFormatsAgree(t *testing.T) {
	for _, w := range writers {
		for _, sc := range scenarios {
			t.Run(w.name+"/"+sc.name, func(t *testing.T) {
				want := formatNeutral(analyzeSpec(t, sc.loop.Spec()))
				got := formatNeutral(readBack(t, w.write, sc.loop.Spec()))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("results differ:\n got %+v\nwant %+v", got, want)
				}
			})
		}
	}
}

// TestWideCorrelationIDs moves every correlation id of each scenario past
// what an Event keeps as itself (trace.WideCorr), past 2^63, with low 32
// bits that many ids share, and wants the same Result: built directly and
// read back from each format, wide ids link launches to their work as
// small ones do, and cutting them to 32 bits would not.
func TestWideCorrelationIDs(t *testing.T) {
	for _, sc := range scenarios {
		want := formatNeutral(analyzeSpec(t, sc.loop.Spec()))
		wide := sc.loop.Spec()
		for i := range wide.Events {
			if c := &wide.Events[i].Corr; *c != 0 {
				*c = 1<<63 | *c<<32 | *c%5
			}
		}
		t.Run("build/"+sc.name, func(t *testing.T) {
			if got := formatNeutral(analyzeSpec(t, wide)); !reflect.DeepEqual(got, want) {
				t.Errorf("results differ:\n got %+v\nwant %+v", got, want)
			}
		})
		for _, w := range writers {
			t.Run(w.name+"/"+sc.name, func(t *testing.T) {
				if got := formatNeutral(readBack(t, w.write, wide)); !reflect.DeepEqual(got, want) {
					t.Errorf("results differ:\n got %+v\nwant %+v", got, want)
				}
			})
		}
	}
}
