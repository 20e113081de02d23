package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// writeLoop writes the loop's trace into dir as name, in the format its
// extension names.
func writeLoop(t *testing.T, dir, name string, l tracetest.Loop) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch {
	case strings.HasSuffix(name, ".xplane.pb"):
		err = tracetest.WriteXPlane(f, l.Spec())
	default:
		t.Fatalf("no writer for %s", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// runCmd runs tracegap with args and returns the exit status and output.
func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCompareRealTraces(t *testing.T) {
	dir := realtraces.Dir(t)
	w0 := filepath.Join(dir, "kineto-resnet50-workers0.pt.trace.json.gz")
	w4 := filepath.Join(dir, "kineto-resnet50-workers4.pt.trace.json.gz")

	// The comparison itself: the single-process DataLoader took 40-60 ms
	// of each step; four workers bring it to 1-2 ms, and the run from
	// data-bound to parallel.
	af := addAnalysisFlags(pflag.NewFlagSet("", pflag.ContinueOnError))
	base, err := af.analyzeFile(w0)
	if err != nil {
		t.Fatal(err)
	}
	next, err := af.analyzeFile(w4)
	if err != nil {
		t.Fatal(err)
	}
	c := compare.Compare(compare.Summarize(base), compare.Summarize(next), compare.Options{})
	if c.Base.Input < 40*ms || c.Base.Input > 60*ms || c.New.Input < 1*ms || c.New.Input > 2*ms {
		t.Errorf("input per step %d -> %d ns, want 40-60 ms -> 1-2 ms", c.Base.Input, c.New.Input)
	}
	if c.Base.Verdict != analyze.Sequential || c.New.Verdict != analyze.Parallel {
		t.Errorf("verdict %s -> %s, want sequential -> parallel", c.Base.Verdict, c.New.Verdict)
	}
	if r := c.Rows[0]; r.Metric != "input per step" || r.Diff > -38*ms {
		t.Errorf("largest change = %+v, want input per step, down by more than 38 ms", r)
	}
	if c.New.StepTime >= c.Base.StepTime || c.Synthetic != nil {
		t.Errorf("step time %d -> %d, synthetic %v: want faster steps and no synthetic test", c.Base.StepTime, c.New.StepTime, c.Synthetic)
	}

	// The same through the command, as text.
	code, out, errs := runCmd("compare", w0, w4)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, re := range []string{
		`(?m)^verdict: sequential -> parallel$`,
		`(?m)^  input per step +[4-5]\d\.\d ms +1\.\d\d ms +-[34]\d\.\d ms +0\.0\dx$`,
		`(?m)^base  .*workers0\.pt\.trace\.json\.gz \(chrome\): sequential, high confidence, \d+ steps$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("text does not match %s:\n%s", re, out)
		}
	}

	// As JSON, to a file.
	path := filepath.Join(t.TempDir(), "cmp.json")
	if code, _, errs := runCmd("compare", "--format", "json", "-o", path, w0, w4); code != exitOK {
		t.Fatalf("json: exit %d, stderr %q", code, errs)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string `json:"schema"`
		Base   struct {
			Verdict string `json:"verdict"`
			Input   int64  `json:"input_ns"`
		} `json:"base"`
		New struct {
			Verdict string `json:"verdict"`
			Input   int64  `json:"input_ns"`
		} `json:"new"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if doc.Schema != "tracegap/compare/v1" || doc.Base.Input != c.Base.Input || doc.New.Input != c.New.Input ||
		doc.Base.Verdict != "sequential" || doc.New.Verdict != "parallel" {
		t.Errorf("JSON = %+v, want the comparison's figures", doc)
	}
}

func TestCompareRegression(t *testing.T) {
	dir := realtraces.Dir(t)
	w0 := filepath.Join(dir, "kineto-resnet50-workers0.pt.trace.json.gz")
	w4 := filepath.Join(dir, "kineto-resnet50-workers4.pt.trace.json.gz")
	tests := []struct {
		args   []string
		code   int
		stderr []string
	}{
		// workers0 is slower, and idler, than workers4.
		{[]string{"--fail-on-regression", "5%", w4, w0}, exitCheck,
			[]string{"REGRESSION step time grew", "REGRESSION attributed idle share grew"}},
		{[]string{"--fail-on-regression", "5%", w0, w4}, exitOK, nil},
		{[]string{w4, w0}, exitOK, nil},
		{[]string{"--fail-on-regression", "50%", w4, w0}, exitOK, nil},
	}
	for _, tt := range tests {
		code, out, errs := runCmd(append([]string{"compare"}, tt.args...)...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", tt.args, code, tt.code, errs)
		}
		for _, want := range tt.stderr {
			if !strings.Contains(errs, want) {
				t.Errorf("%q: stderr lacks %q:\n%s", tt.args, want, errs)
			}
		}
		if len(tt.stderr) == 0 && errs != "" {
			t.Errorf("%q: unexpected stderr %q", tt.args, errs)
		}
		if strings.Contains(tt.args[0], "fail-on-regression") && !strings.Contains(out, "regressions (limit ") {
			t.Errorf("%q: the report does not show the regression check:\n%s", tt.args, out)
		}
	}
}

func TestCompareSyntheticCommand(t *testing.T) {
	dir := t.TempDir()
	// The synthetic base keeps its device busy: a 20 ms kernel every
	// 20 ms. The real run reads 5 ms of input, which would fit, but syncs
	// on each step's kernel: a step every 26 ms.
	base := writeLoop(t, dir, "synthetic.xplane.pb", tracetest.Loop{Steps: 6, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, SyncPrevious: true})
	real := writeLoop(t, dir, "real.xplane.pb", tracetest.Loop{Steps: 6, Input: 5 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true})
	slow := writeLoop(t, dir, "slow.xplane.pb", tracetest.Loop{Steps: 6, Input: 30 * ms, Dispatch: 1 * ms, Compute: 20 * ms, Sync: true, SyncPrevious: true})
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{base, real}, exitOK, []string{
			"synthetic-data test (base has no input-pipeline time: read as fed with synthetic data):",
			"  target step 20.0 ms (base); base compute 20.0 ms per step\n",
			"  new step 26.0 ms; new input 5.00 ms per step\n",
			"fits inside the synthetic run's compute (20.0 ms per step), yet its step (26.0 ms) is 30.0% slower than the target (20.0 ms): the input pipeline is not the bottleneck, and a forced synchronization is the likely cause",
		}},
		{[]string{"--fail-on-regression", "10%", base, slow}, exitCheck, []string{
			"the new run's input (30.0 ms per step) is longer than the synthetic run's compute (20.0 ms per step): the input pipeline is the bottleneck",
			"regressions (limit 10.0%): step time grew 55.0% (20.0 ms -> 31.0 ms)",
		}},
		// A real base is read as synthetic only when asked.
		{[]string{real, base}, exitOK, nil},
		{[]string{"--synthetic-base", real, base}, exitOK, []string{
			"synthetic-data test (base taken as fed with synthetic data):",
			// The new run shows no input: no input figure to conclude on.
			"the new run's step (20.0 ms) reaches the target (26.0 ms): it keeps up, though its input time cannot be seen: its trace shows no input-pipeline event",
		}},
	}
	for _, tt := range tests {
		code, out, errs := runCmd(append([]string{"compare"}, tt.args...)...)
		if code != tt.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", tt.args, code, tt.code, errs)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: output lacks %q:\n%s", tt.args, w, out)
			}
		}
		if tt.want == nil && strings.Contains(out, "synthetic-data test") {
			t.Errorf("%q: real base read as synthetic:\n%s", tt.args, out)
		}
	}
}

func TestCompareAcrossFormats(t *testing.T) {
	dir := realtraces.Dir(t)
	jax := filepath.Join(dir, "tracelens-jax-te-fused-attn.xplane.pb")
	w4 := filepath.Join(dir, "kineto-resnet50-workers4.pt.trace.json.gz")
	code, out, errs := runCmd("compare", "--format", "markdown", jax, w4)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"## tracegap compare: parallel (unchanged)\n", "(xplane): **parallel**", "(chrome): **parallel**", "| step time |"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestCompareBadInput(t *testing.T) {
	dir := realtraces.Dir(t)
	w4 := filepath.Join(dir, "kineto-resnet50-workers4.pt.trace.json.gz")
	bad := filepath.Join(dir, "xprof-tpu-inference-corrupted-upstream.xplane.pb")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{w4, bad}, "tracegap compare: NEW: " + bad},
		{[]string{w4}, "expected two traces, BASE and NEW, got 1 argument\n"},
		{[]string{"--format", "html", w4, w4}, "cannot be written as html"},
		{[]string{"--fail-on-regression", "x", w4, w4}, `invalid percentage "x"`},
		{[]string{filepath.Join(dir, "hta-cpu-only.pt.trace.json.gz"), w4}, "tracegap compare: BASE: " + filepath.Join(dir, "hta-cpu-only.pt.trace.json.gz") + ": no device activity in the trace"},
	}
	for _, tt := range tests {
		code, out, errs := runCmd(append([]string{"compare"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(errs, tt.want) || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d stdout %q stderr %q; want exit 2 and one line with %q", tt.args, code, out, errs, tt.want)
		}
	}
}

// TestSweepNoDevice: a sweep over a run without device work says so in one
// line and exits 2, rather than calling it the fastest run.
func TestSweepNoDevice(t *testing.T) {
	dir := realtraces.Dir(t)
	cpu := filepath.Join(dir, "hta-cpu-only.pt.trace.json.gz")
	code, out, errs := runCmd("sweep", cpu, filepath.Join(dir, "kineto-resnet50-workers4.pt.trace.json.gz"))
	want := "tracegap sweep: " + cpu + ": no device activity in the trace"
	if code != exitUsage || out != "" || !strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d stdout %q stderr %q; want exit 2 and one line starting %q", code, out, errs, want)
	}
}

// TestCompareSweepColourAndWidth: compare and sweep take --color as
// analyze does (colour where asked, none by default in a pipe), and on a
// terminal of 80 columns (COLUMNS) their prose wraps and the sweep's table
// is fitted: only a table row of figures may stay wider.
func TestCompareSweepColourAndWidth(t *testing.T) {
	t.Chdir(t.TempDir()) // short paths: a word wider than the line stays whole
	slow := writeLoop(t, ".", "loader-slow-with-a-long-name.xplane.pb", tracetest.Loop{Steps: 6, Input: 4_000_000, Compute: 2_000_000})
	fast := writeLoop(t, ".", "loader-fast-with-a-long-name.xplane.pb", tracetest.Loop{Steps: 6, Input: 200_000, Compute: 2_000_000})
	t.Setenv("NO_COLOR", "")
	t.Setenv("FORCE_COLOR", "")
	for _, args := range [][]string{{"compare", slow, fast}, {"sweep", "--labels", "slow,fast", slow, fast}} {
		t.Setenv("COLUMNS", "")
		_, plain, _ := runCmd(append(args, "--isolated")...)
		_, coloured, _ := runCmd(append(args, "--isolated", "--color", "always")...)
		if strings.Contains(plain, "\x1b[") || !strings.Contains(coloured, "\x1b[1m") {
			t.Errorf("%s: colour in a pipe %v, with --color always %v; want false, true", args[0], strings.Contains(plain, "\x1b["), strings.Contains(coloured, "\x1b[1m"))
		}
		t.Setenv("COLUMNS", "80")
		_, fitted, _ := runCmd(append(args, "--isolated")...)
		lines := strings.Split(fitted, "\n")
		for i, line := range lines {
			if len([]rune(line)) > 80 && !inTableRow(lines, i) {
				t.Errorf("%s: a line of %d columns outside a table: %q", args[0], len([]rune(line)), line)
			}
		}
		if fitted == plain {
			t.Errorf("%s: COLUMNS=80 changed nothing: the test shows nothing", args[0])
		}
	}
	if code, _, stderr := runCmd("sweep", "--color", "sometimes", slow, fast); code != exitUsage || !strings.Contains(stderr, "sometimes") {
		t.Errorf("sweep --color sometimes: exit %d, %q; want 2 naming the value", code, stderr)
	}
}

// inTableRow reports whether line i of lines is in a table: below its
// rule ("  ---") in the same block, or a header line just above it.
func inTableRow(lines []string, i int) bool {
	for j := i; j < len(lines) && j <= i+2; j++ {
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
