package render

import (
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// TestGapsTableClipsEscaped: a thread name from the trace is escaped for
// its channel before it is cut to the column, so the cell is never wider
// than the column and never ends in part of an escape. Each want is worked
// out by hand for a 40-column cell.
func TestGapsTableClipsEscaped(t *testing.T) {
	ts := func(n int) string { return strings.Repeat("t", n) }
	tests := []struct {
		name, thread string
		esc          func(string) string
		want         string
	}{
		// 36+4+7+2 escaped runes: `\x1b` does not fit in the 37 before
		// the marker and goes whole (cut first, it was `\x1b...`, 43).
		{"terminal osc", ts(36) + "\x1b]0;pwned\a", untrusted.Terminal, ts(36) + "..."},
		// 33 runes fit uncut, but escaped they are 42.
		{"terminal escapes widen", ts(30) + "\x1b\x1b\x1b", untrusted.Terminal, ts(30) + `\x1b...`},
		{"markdown escapes widen", ts(35) + "_____", mdEscape, ts(35) + `\_...`},
		{"fits", ts(40), untrusted.Terminal, ts(40)},
		// HTML is escaped by the template after the cut: whole runes,
		// two columns each for these wide ones.
		{"html runes", strings.Repeat("計", 50), nil, strings.Repeat("計", 18) + "..."},
	}
	for _, tt := range tests {
		res, g := gapOf()
		g.Device, g.Thread = "GPU:0", tt.thread
		tb := gapsTable(res, []*analyze.Gap{g}, 40, 100)
		var got string
		if tt.esc == nil {
			got = tb.Body()[0][6]
		} else {
			got = tb.escaped(tt.esc).rows[0][6]
		}
		if got != tt.want {
			t.Errorf("%s: thread cell %q, want %q", tt.name, got, tt.want)
		}
		if n := untrusted.Width(got); n > 40 {
			t.Errorf("%s: thread cell %q is %d columns, over the column's 40", tt.name, got, n)
		}
	}
}

// TestTextGapsTableEscaped: the text report's gap table carries the cut,
// escaped thread name and no control character.
func TestTextGapsTableEscaped(t *testing.T) {
	res, g := gapOf()
	g.Device, g.Thread = "GPU:0", strings.Repeat("t", 36)+"\x1b]0;pwned\a"
	var b strings.Builder
	if err := gapsTable(res, []*analyze.Gap{g}, 40, 100).renderText(&b, untrusted.Terminal); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, " "+strings.Repeat("t", 36)+"... ") {
		t.Errorf("table lacks the cut thread name:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\a") || strings.Contains(out, `\x1`) {
		t.Errorf("table holds an escape or part of one:\n%q", out)
	}
}

// TestTimelineStepNameEscaped: a step name in the step timeline is escaped
// and then cut to the 18-rune column, in text and in Markdown alike.
func TestTimelineStepNameEscaped(t *testing.T) {
	res := &analyze.Result{Steps: []analyze.Step{{Name: "step\x1b[2J" + strings.Repeat("x", 20), Dur: 1, DeviceBusy: 1}}}
	// "step" 4, `\x1b` 4, "[2J" 3, then 4 x fill the 15 before the marker.
	const want = `step\x1b[2Jxxxx... |`
	for _, md := range []bool{false, true} {
		var b strings.Builder
		tw := &textWriter{w: &b, terminal: !md}
		if md {
			tw.mdInsights(res, 10)
		} else {
			tw.insights(res, 10)
		}
		if out := b.String(); !strings.Contains(out, want) || strings.Contains(out, "\x1b") {
			t.Errorf("markdown %v: timeline lacks %q or holds ESC:\n%q", md, want, out)
		}
	}
}

// TestGapsTableKeepsInnermost: a host stack too long for its column loses
// its start, not its end: the column promises the innermost event last.
func TestGapsTableKeepsInnermost(t *testing.T) {
	long := strings.Repeat("o", 60)
	res, g := gapOf(analyze.NamedSegment{Dur: 10, Stack: []string{"step", long, long, "PjRtStreamExecutorLoadedExecutable::Execute"}})
	g.Device = "GPU:0"
	got := gapsTable(res, []*analyze.Gap{g}, 40, 100).escaped(untrusted.Terminal).rows[0][7]
	// describeStack keeps the innermost three, 169 columns; the cell
	// keeps the last 97 of them after the marker.
	full := long + " > " + long + " > PjRtStreamExecutorLoadedExecutable::Execute"
	want := "..." + full[len(full)-97:]
	if got != want {
		t.Errorf("stack cell\n %q\nwant\n %q", got, want)
	}
}

// TestOpsTableUnlinkedLaunches: where no op launched any work, the trace
// does not link work to calls (JAX, TPU), and launches per call are
// unknown ("-"), not 0.0; where one did, every op's figure shows.
func TestOpsTableUnlinkedLaunches(t *testing.T) {
	ops := []analyze.OpCost{{Name: "Execute", Calls: 4, Host: 400}, {Name: "pjit", Calls: 2, Host: 100}}
	lpc := func(ops []analyze.OpCost) []string {
		var out []string
		for _, row := range opsTable(&analyze.Result{Ops: ops}).rows {
			out = append(out, row[3])
		}
		return out
	}
	if got := lpc(ops); strings.Join(got, ",") != "-,-" {
		t.Errorf("unlinked: launches/call %q, want -,-", got)
	}
	ops[1].Launches = 3
	if got := lpc(ops); strings.Join(got, ",") != "0.0,1.5" {
		t.Errorf("linked: launches/call %q, want 0.0,1.5", got)
	}
}

// TestCounted: counts agree with their nouns.
func TestCounted(t *testing.T) {
	for n, want := range map[int]string{0: "0 gaps", 1: "1 gap", 2: "2 gaps", 1234: "1,234 gaps"} {
		if got := counted(n, "gap"); got != want {
			t.Errorf("counted(%d) = %q, want %q", n, got, want)
		}
	}
}
