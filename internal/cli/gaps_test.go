package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/report"
)

// workers0Clock is the earliest "ts" of the workers0 trace (µs since the
// epoch, 1610366662254282) in ns: the trace clock's time of relative 0.
const workers0Clock = 1610366662254282000

func TestGapsTSV(t *testing.T) {
	w0 := realtraces.Path(t, workers0)
	res, err := addAnalysisFlags(pflag.NewFlagSet("", pflag.ContinueOnError)).analyzeFile(w0)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := tg("gaps", w0)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "device\tstart_ns\tdur_ns\tcause\tthread\tstack\tclock_start_ns" {
		t.Errorf("header %q", lines[0])
	}
	if len(lines)-1 != len(res.Gaps) {
		t.Fatalf("%d rows, want one per gap: %d", len(lines)-1, len(res.Gaps))
	}
	var total, input int64
	prev := int64(-1)
	for i, line := range lines[1:] {
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			t.Fatalf("row %d has %d fields: %q", i+1, len(f), line)
		}
		start, err1 := strconv.ParseInt(f[1], 10, 64)
		dur, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || dur < res.Options.MinGap || start < prev {
			t.Fatalf("row %d: start %q dur %q: want integers in time order, dur >= min-gap", i+1, f[1], f[2])
		}
		if clock, err := strconv.ParseInt(f[6], 10, 64); err != nil || clock != workers0Clock+start {
			t.Fatalf("row %d: clock start %q, want %d + %d", i+1, f[6], workers0Clock, start)
		}
		prev, total = start, total+dur
		if f[3] == "input" {
			input += dur
			if !strings.Contains(f[5], ";enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__") {
				t.Errorf("input gap at %d ns: stack %q does not name the DataLoader", start, f[5])
			}
		}
	}
	var want int64
	for _, g := range res.Gaps {
		want += g.Dur
	}
	if total != want || input == 0 {
		t.Errorf("rows hold %d ns of gaps (%d input), want %d", total, input, want)
	}
}

func TestGapsJSONLines(t *testing.T) {
	w0 := realtraces.Path(t, workers0)
	path := filepath.Join(t.TempDir(), "gaps.jsonl")
	code, out, errOut := tg("gaps", "--format", "json", "--min-gap", "1ms", "-o", path, w0)
	if code != 0 || out != "" || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) < 5 {
		t.Fatalf("%d gaps of 1 ms or more, want at least the 5 DataLoader gaps", len(lines))
	}
	for i, line := range lines {
		var g report.GapV1
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&g); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if g.DurNs < 1_000_000 || g.Device != "GPU:0" || g.Split.IdleNs != g.DurNs || g.ClockStartNs != workers0Clock+g.StartNs {
			t.Errorf("line %d: %+v", i+1, g)
		}
	}
}

// TestOneTraceDirectory: gaps, pprof and compare take a directory holding
// exactly one trace as that trace; a directory of two is refused with one
// line, and compare given the same unusable input twice says so once.
func TestOneTraceDirectory(t *testing.T) {
	var tr bytes.Buffer
	if err := tracetest.WriteChrome(&tr, tracetest.Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000}.Spec()); err != nil {
		t.Fatal(err)
	}
	one, two := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(one, "a.pt.trace.json"), filepath.Join(two, "a.pt.trace.json"), filepath.Join(two, "b.pt.trace.json")} {
		if err := os.WriteFile(p, tr.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(one, "missing")
	tests := []struct {
		args []string
		code int
		want string // in stdout for code 0, in the one line of stderr otherwise
	}{
		{[]string{"gaps", one}, 0, "GPU"},
		{[]string{"pprof", "-o", filepath.Join(t.TempDir(), "p.pb.gz"), one}, 0, ""},
		{[]string{"compare", one, one}, 0, "verdict: data-bound (unchanged)"},
		{[]string{"gaps", two}, 2, "a directory of 2 inputs, expected one trace"},
		{[]string{"compare", two, one}, 2, "BASE: " + two + ": a directory of 2 inputs"},
		{[]string{"compare", missing, missing}, 2, "BASE and NEW: " + missing},
	}
	for _, tt := range tests {
		code, stdout, stderr := tg(tt.args...)
		switch {
		case code != tt.code:
			t.Errorf("%q: exit %d, want %d; stderr %q", tt.args, code, tt.code, stderr)
		case code == 0 && !strings.Contains(stdout, tt.want):
			t.Errorf("%q: stdout %q, want %q in it", tt.args, stdout, tt.want)
		case code != 0 && (strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want)):
			t.Errorf("%q: stderr %q, want one line with %q", tt.args, stderr, tt.want)
		}
	}
}
