package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/report"
)

// tg runs tracegap with args and returns the exit status and output.
func tg(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

const (
	workers0 = "kineto-resnet50-workers0.pt.trace.json.gz"
	workers4 = "kineto-resnet50-workers4.pt.trace.json.gz"
)

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := tg("--version")
	if code != 0 || out != "tracegap "+version+"\n" {
		t.Errorf("--version: %d %q", code, out)
	}
	for _, cmd := range []string{"analyze", "gaps", "pprof"} {
		code, out, errOut := tg(cmd, "--help")
		if code != 0 || errOut != "" {
			t.Errorf("%s --help: exit %d, stderr %q", cmd, code, errOut)
		}
		for _, w := range []string{"Usage: tracegap " + cmd, "Examples:", "--min-gap", "Exit status:"} {
			if !strings.Contains(out, w) {
				t.Errorf("%s --help lacks %q", cmd, w)
			}
		}
	}
	if _, out, _ := tg("--help"); !strings.Contains(out, "analyze ") || !strings.Contains(out, "pprof ") {
		t.Errorf("tracegap --help does not list analyze and pprof:\n%s", out)
	}
}

func TestAnalyzeUnusableInput(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("\x00\x01 this is no trace \xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.pt.trace.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{garbage, empty, filepath.Join(dir, "missing.json")} {
		for _, args := range [][]string{{"analyze", path}, {"gaps", path}, {"pprof", "-o", filepath.Join(dir, "x.pb.gz"), path}} {
			code, out, errOut := tg(args...)
			if code != exitUsage || out != "" {
				t.Errorf("%v: exit %d, stdout %q; want 2 and nothing", args, code, out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tracegap: "+path+": ") {
				t.Errorf("%v: stderr %q, want one line naming the file", args, errOut)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.pb.gz")); err == nil {
		t.Error("pprof wrote a profile for an unusable input")
	}
}

// TestUnusableInputWording gives each command an empty file and a missing
// one: every command names the file once, with the same words after it
// as analyze ("PATH: no such file or directory"), whatever it puts before.
func TestUnusableInputWording(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pt.trace.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	good := realtraces.Path(t, workers0)
	for _, path := range []string{empty, filepath.Join(dir, "missing.json")} {
		_, _, want := tg("analyze", path)
		want = strings.TrimPrefix(want, "tracegap: ")
		for _, args := range [][]string{
			{"gaps", path},
			{"summarize", "-o", filepath.Join(dir, "s.summary.json.gz"), path},
			{"check", path},
			{"sweep", path, good},
			{"compare", path, good},
			{"compare", good, path},
		} {
			_, _, errOut := tg(args...)
			i := strings.Index(errOut, path)
			if i < 0 || strings.Count(errOut, path) != 1 || !strings.HasPrefix(errOut[i:], want) {
				t.Errorf("%v: stderr %q, want the file named once, then as analyze: %q", args, errOut, want)
			}
		}
	}
}

func TestAnalyzeSeveralInputs(t *testing.T) {
	w0, w4 := realtraces.Path(t, workers0), realtraces.Path(t, workers4)
	bad := filepath.Join(t.TempDir(), "bad.xplane.pb")
	os.WriteFile(bad, []byte("not a protobuf at all"), 0o644)
	code, out, errOut := tg("analyze", "-j", "2", "--format", "json", w0, bad, w4)
	if code != exitUsage {
		t.Errorf("exit %d, want 2 (one input unusable)", code)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "tracegap: "+bad+": ") {
		t.Errorf("stderr %q, want one line naming %s", errOut, bad)
	}
	var reports []report.Report
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&reports); err != nil {
		t.Fatalf("stdout is not a JSON array of reports: %v\n%.300s", err, out)
	}
	if len(reports) != 2 || reports[0].Source.Path != w0 || reports[1].Source.Path != w4 {
		t.Fatalf("reports %d, want workers0 then workers4", len(reports))
	}
	if reports[0].Verdict != "sequential" || reports[1].Verdict != "parallel" {
		t.Errorf("verdicts %s, %s; want sequential, parallel", reports[0].Verdict, reports[1].Verdict)
	}

	// The same inputs, one verdict line each, in input order; a bare path
	// means analyze.
	code, out, _ = tg("--quiet", w4, w0)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], w4+": parallel (") || !strings.HasPrefix(lines[1], w0+": sequential (") {
		t.Errorf("--quiet: exit %d, output\n%s", code, out)
	}
}

func TestAnalyzeOutputFile(t *testing.T) {
	// The shipped example, a small data-bound run: this is about -o.
	example := filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz")
	dir := t.TempDir()
	tests := []struct {
		format, name, want string
	}{
		{"text", "r.txt", "data-bound (high confidence): the GPU waited on the input pipeline"},
		{"json", "r.json", `"schema": "tracegap/report/v1"`},
		{"markdown", "r.md", "### tracegap: `example.pt.trace.json.gz` is **data-bound**"},
		{"html", "r.html", `<span class="verdict v-data-bound">data-bound</span>`},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.name)
		code, out, errOut := tg("analyze", "--format", tt.format, "-o", path, example)
		if code != 0 || out != "" || errOut != "tracegap: wrote "+tt.format+" report to "+path+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tt.format, code, out, errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(data), tt.want) {
			t.Errorf("%s: %s lacks %q (%v)", tt.format, path, tt.want, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != len(tests) {
		t.Errorf("%d files in the output directory, want %d (temporary files left?)", len(ents), len(tests))
	}
	code, _, errOut := tg("analyze", "-o", filepath.Join(dir, "missing", "r.txt"), example)
	if code != exitUsage || !strings.Contains(errOut, "missing") {
		t.Errorf("-o into a missing directory: exit %d, stderr %q", code, errOut)
	}
}

func TestAnalyzeColor(t *testing.T) {
	w0 := realtraces.Path(t, workers0)
	_, plain, _ := tg("analyze", w0)
	_, colored, _ := tg("analyze", "--color", "always", w0)
	if strings.Contains(plain, "\x1b[") {
		t.Error("output to a non-terminal holds ANSI escapes")
	}
	if !strings.Contains(colored, "\x1b[") {
		t.Error("--color always gave no ANSI escapes")
	}
	t.Setenv("NO_COLOR", "1")
	if useColor("auto", os.Stdout) {
		t.Error("auto colour with NO_COLOR set")
	}
	if !useColor("always", os.Stdout) || useColor("never", os.Stdout) {
		t.Error("always and never not obeyed")
	}
	t.Setenv("NO_COLOR", "")
	if useColor("auto", &bytes.Buffer{}) {
		t.Error("auto colour for a buffer")
	}
	// A dumb terminal shows no colours, unless FORCE_COLOR says so.
	t.Setenv("FORCE_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
	if !colorFor("auto", true) {
		t.Error("no auto colour on a terminal")
	}
	t.Setenv("TERM", "dumb")
	if colorFor("auto", true) {
		t.Error("auto colour on a dumb terminal")
	}
	t.Setenv("FORCE_COLOR", "1")
	if !colorFor("auto", true) {
		t.Error("FORCE_COLOR did not win over TERM=dumb")
	}
}

// TestStdinHint: "-" with a terminal on standard input says on stderr that
// a trace is read from there, instead of seeming to hang; a pipe does not.
func TestStdinHint(t *testing.T) {
	defer func(r io.Reader, f func() bool) { stdin, stdinIsTerminal = r, f }(stdin, stdinIsTerminal)
	for _, term := range []bool{true, false} {
		stdin = strings.NewReader("")
		stdinIsTerminal = func() bool { return term }
		_, _, stderr := tg("analyze", "-")
		hint := strings.HasPrefix(stderr, "tracegap: reading a trace from standard input (a terminal)")
		if hint != term {
			t.Errorf("stdin a terminal %t: stderr %q", term, stderr)
		}
	}
}

func TestAnalyzeBadUsage(t *testing.T) {
	tests := [][]string{
		{"analyze"},
		{"analyze", "--format", "xml", "x.json"},
		{"analyze", "--color", "sometimes", "x.json"},
		{"analyze", "-j", "0", "x.json"},
		{"analyze", "--steps", "-1", "x.json"},
		{"analyze", "--min-gap", "soon", "x.json"},
		{"analyze", "--no-such-flag", "x.json"},
		{"gaps", "--format", "csv", "x.json"},
		{"gaps", "a.json", "b.json"},
		{"pprof", "x.json"},
	}
	for _, args := range tests {
		code, out, errOut := tg(args...)
		if code != exitUsage || out != "" || errOut == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and a message", args, code, out, errOut)
		}
	}
}

// TestAnalyzeStdin reads a trace piped in as "-": the same verdict as from
// the file, reported as standard input; unusable input fails in one line.
func TestAnalyzeStdin(t *testing.T) {
	data, err := os.ReadFile(realtraces.Path(t, workers0))
	if err != nil {
		t.Fatal(err)
	}
	defer func(r io.Reader) { stdin = r }(stdin)
	for _, tc := range []struct {
		name       string
		in         []byte
		args       []string
		code       int
		out, errln string
	}{
		{"gzip trace", data, []string{"analyze", "--format", "json", "-"}, exitOK, `"verdict": "sequential"`, ""},
		{"check fails", data, []string{"check", "--max-input-idle", "10%", "-"}, exitCheck, "", ""},
		{"garbage", []byte("garbage\n"), []string{"analyze", "-"}, exitUsage, "", "tracegap: standard input: unrecognised format"},
		{"empty", nil, []string{"-"}, exitUsage, "", "tracegap: standard input: empty file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdin = bytes.NewReader(tc.in)
			code, stdout, stderr := tg(tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.HasPrefix(stderr, tc.errln) {
				t.Fatalf("exit %d, stdout %.300q, stderr %q; want exit %d, stdout with %q, stderr starting %q", code, stdout, stderr, tc.code, tc.out, tc.errln)
			}
			if strings.Count(stderr, "\n") > 1 {
				t.Errorf("error spans several lines: %q", stderr)
			}
		})
	}
}

// TestStdinOnce: standard input named twice is refused up front, with one
// line and exit 2, by every command that reads several inputs; before,
// analyze reported the first and then failed on the empty second.
func TestStdinOnce(t *testing.T) {
	var tr bytes.Buffer
	if err := tracetest.WriteChrome(&tr, tracetest.Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000}.Spec()); err != nil {
		t.Fatal(err)
	}
	defer func(r io.Reader) { stdin = r }(stdin)
	for _, args := range [][]string{
		{"analyze", "-", "-"},
		{"analyze", "--format", "json", "-", "x.json", "-"},
		{"check", "-", "-"},
		{"compare", "-", "-"},
		{"sweep", "-", "-"},
	} {
		stdin = bytes.NewReader(tr.Bytes())
		code, stdout, stderr := tg(args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "standard input (-) given") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line", args, code, stdout, stderr)
		}
	}
}

// TestAnalyzeJSONShape: JSON is an array whenever the command line could
// name several traces (two arguments, a directory), however many were read
// or found, and the object for one file: a jq script's shape follows the
// command, not the data.
func TestAnalyzeJSONShape(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "one"), 0o755)
	good := writeLoop(t, filepath.Join(dir, "one"), "good.xplane.pb", tracetest.Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000})
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		args  []string
		array bool
		code  int
	}{
		{[]string{good}, false, exitOK},
		{[]string{good, missing}, true, exitUsage},
		{[]string{filepath.Dir(good)}, true, exitOK},
		{[]string{good, good}, true, exitOK},
	} {
		code, out, _ := tg(append([]string{"analyze", "--format", "json"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.args, code, tc.code)
		}
		isArray := strings.HasPrefix(out, "[")
		if isArray != tc.array || !json.Valid([]byte(out)) {
			t.Errorf("%v: output starts %.20q; want an array: %t", tc.args, out, tc.array)
		}
	}
}

// TestEveryHelp: every command's --help goes to stdout with exit 0 (so
// that "tracegap check --help | less" shows it), has a description,
// examples and exit statuses, fits 80 columns and states a default once;
// a usage error stays one line on stderr with exit 2.
func TestEveryHelp(t *testing.T) {
	for name := range commands {
		code, out, errOut := tg(name, "--help")
		if code != exitOK || errOut != "" {
			t.Errorf("%s --help: exit %d, stderr %q; want 0 and nothing", name, code, errOut)
		}
		for _, w := range []string{"Usage: tracegap " + name, "\n\n", "Examples:\n"} {
			if !strings.Contains(out, w) && (name != "completion" || w != "Examples:\n") { // completion shows one per shell
				t.Errorf("%s --help lacks %q", name, w)
			}
		}
		if name != "completion" && !strings.Contains(out, "Exit status:") {
			t.Errorf("%s --help does not give the exit statuses", name)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := len([]rune(line)); n > 80 || strings.Count(line, "(default") > 1 {
				t.Errorf("%s --help: a line of %d columns, or a default given twice: %q", name, n, line)
			}
		}
		if name == "completion" {
			continue
		}
		code, out, errOut = tg(name, "--no-such-flag")
		if code != exitUsage || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q; want 2 and one line on stderr", name, code, out, errOut)
		}
	}
	_, out, _ := tg("--help")
	col := -1
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("tracegap --help: a line of %d columns: %q", n, line)
		}
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(line, "  ") || commands[f[0]].run == nil {
			continue
		}
		at := strings.Index(line[2+len(f[0]):], f[1]) + 2 + len(f[0])
		if col >= 0 && at != col {
			t.Errorf("tracegap --help: %s's summary starts at column %d, the others at %d", f[0], at, col)
		}
		col = at
	}
	_, out, _ = tg("analyze", "--help")
	for _, w := range []string{"Nsight", "stalled", "no-device", "FORCE_COLOR"} {
		if !strings.Contains(out, w) {
			t.Errorf("analyze --help does not mention %s", w)
		}
	}
}
