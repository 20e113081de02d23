package render

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/untrusted"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

func TestWrapLine(t *testing.T) {
	for _, tt := range []struct {
		line  string
		width int
		want  string
	}{
		{"short", 20, "short\n"},
		{"one two three four five", 13, "one two three\n  four five\n"},
		{"  - a reason that is long", 14, "  - a reason\n    that is\n    long\n"},
		// A word wider than the line stays whole, on a line of its own.
		{"see enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ now", 20,
			"see\n  enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__\n  now\n"},
		// Colour codes take no width.
		{"\x1b[1mdata-bound\x1b[0m (high)", 17, "\x1b[1mdata-bound\x1b[0m (high)\n"},
	} {
		if got := wrapLine(tt.line, tt.width); got != tt.want {
			t.Errorf("wrapLine(%q, %d) = %q, want %q", tt.line, tt.width, got, tt.want)
		}
	}
}

// TestFitTable: the widest text columns shrink together, headers with
// them, figures never; a table that fits is left as it is.
func TestFitTable(t *testing.T) {
	tb := func() *table {
		tb := newTable("lrl", "thread", "idle", "what it was doing")
		tb.add("thread 1 (python)", "18.0 ms", "ProfilerStep#2 > enumerate(DataLoader)#__next__")
		return tb
	}
	wide, err := fitTable(tb(), 200, untrusted.Terminal)
	if err != nil {
		t.Fatal(err)
	}
	var plain strings.Builder
	if err := tb().renderText(&plain, untrusted.Terminal); err != nil {
		t.Fatal(err)
	}
	if wide != plain.String() {
		t.Errorf("a table that fits changed:\n%s\nwant\n%s", wide, plain.String())
	}
	narrow, err := fitTable(tb(), 40, untrusted.Terminal)
	if err != nil {
		t.Fatal(err)
	}
	want := "  thread            idle  what it was...\n" +
		"  --------------------------------------\n" +
		"  thread 1 (...  18.0 ms  ProfilerSte...\n"
	if narrow != want {
		t.Errorf("fitted to 40:\n%s\nwant\n%s", narrow, want)
	}
}

// TestFitTableKeepsWhatTellsRowsApart: step names are cut in the middle,
// so their numbers show; a verdict is never cut; a table of figures
// under long names puts those names on two lines before any text is cut.
func TestFitTableKeepsWhatTellsRowsApart(t *testing.T) {
	tb := newTable("lrrl", "step", "device busy", "input wait", "verdict").cutAt(0, cutMiddle).cutAt(3, cutNever)
	tb.add("ProfilerStep#11", "45.0 ms", "60.0 ms", "data-bound")
	tb.add("ProfilerStep#12", "45.0 ms", "60.0 ms", "data-bound")
	got, err := fitTable(tb, 40, untrusted.Terminal)
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"             device    input\n" +
		"  step         busy     wait  verdict\n" +
		"  --------------------------------------\n" +
		"  Pr...#11  45.0 ms  60.0 ms  data-bound\n" +
		"  Pr...#12  45.0 ms  60.0 ms  data-bound\n"
	if got != want {
		t.Errorf("fitted to 40:\n%s\nwant\n%s", got, want)
	}
}

// TestJobTextWidth: the job's report wraps its prose and fits its
// tables of text to the width, as a run's does; only a table of figures
// wider than the width may stay wider.
func TestJobTextWidth(t *testing.T) {
	jr := slowInputJob(t)
	var b strings.Builder
	if err := WriteJob(&b, jr, Text, Options{Width: 80}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for i, line := range lines {
		if lineWidth(line) <= 80 {
			continue
		}
		if !inTable(lines, i) {
			t.Errorf("line %d is %d columns wide, not in a table:\n%s", i+1, lineWidth(line), line)
		}
	}
}

// inTable reports whether line i of lines is in a table: a header line
// just above its rule ("  ---") or a row below it.
func inTable(lines []string, i int) bool {
	for j := max(i-2, 0); j < len(lines) && j <= i+2; j++ {
		if strings.HasPrefix(lines[j], "  --") {
			return true
		}
	}
	for j := i; j >= 0 && strings.TrimSpace(lines[j]) != ""; j-- {
		if strings.HasPrefix(lines[j], "  --") {
			return true
		}
	}
	return false
}

// TestStepChart: a bar per step as tall as the step, stacked busy then
// each cause's idle: the example's five 63 ms steps are 45 ms busy, the
// rest idle on input (and a little host work), each part a rect with its
// tooltip; all steps are the longest, so the median line is at the top.
func TestStepChart(t *testing.T) {
	tr, err := trace.Open(filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz"), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := advice.Analyze(tr, analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	svg := stepChartSVG(res, len(res.Steps))
	if n := strings.Count(svg, `data-step="0"`); n < 2 {
		t.Errorf("step 0 has %d parts, want busy and its idle:\n%s", n, svg)
	}
	for _, want := range []string{`fill="` + busyColor + `"`, `fill="` + causeColor[analyze.Input] + `"`, "busy 45.0 ms of 63.0 ms", "median step 63.0 ms", `y1="0.00"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("step chart lacks %q", want)
		}
	}
	if stepChartSVG(res, 0) != "" {
		t.Error("a chart of no steps")
	}
}

// TestSweepChartPalette: the sweep's bars are in the report's colours,
// each part's the timeline's for the same thing.
func TestSweepChartPalette(t *testing.T) {
	s := &compare.Sweep{Runs: []compare.SweepRun{{Label: "2", Summary: compare.Summary{StepTime: 100, Utilization: 0.5,
		Idle: []compare.CauseIdle{{Cause: "input", Share: 0.3}, {Cause: "in-sync", Share: 0.1}}}}}}
	svg := string(sweepChart(s))
	for _, c := range []string{busyColor, causeColor[analyze.Input], causeColor[analyze.InSync], neutralGrey} {
		if !strings.Contains(svg, `fill="`+c+`"`) {
			t.Errorf("sweep chart lacks %s:\n%s", c, svg)
		}
	}
}
