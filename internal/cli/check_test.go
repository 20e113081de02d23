package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

const ms = 1_000_000

// Generated loops whose figures follow from their fields (see
// tracetest.Loop); the first of six steps is dropped as warm-up.
var (
	// Each step reads input for 30 ms, dispatches for 1 ms and runs a
	// 20 ms kernel that overlaps the next step's input: a step every
	// 31 ms, the device idle 10 ms in input and 1 ms in dispatch. The
	// window runs from the end of the warm-up step's kernel (51 ms) to the
	// end of step 6's kernel (5*31+51 = 206 ms), 155 ms holding five
	// kernels (100 ms): input idle 50/155 = 32.3%, all idle 55/155 =
	// 35.5%, utilization 64.5%.
	dataBoundLoop = tracetest.Loop{Steps: 6, Input: 30 * ms, Dispatch: 1 * ms, Compute: 20 * ms}
	// Each step dispatches for 4 ms, runs a 16 ms kernel and waits for
	// it: the device idles 4 ms of every 20 right after the sync, 20%.
	sequentialLoop = tracetest.Loop{Steps: 6, Dispatch: 4 * ms, Compute: 16 * ms, Sync: true}
	// The same on two devices, GPU:1's kernels 4 ms shorter: GPU:1 is
	// busy 12 ms of every 20, 60%, and GPU:0 80%.
	twoDeviceLoop = tracetest.Loop{Steps: 6, Dispatch: 4 * ms, Compute: 16 * ms, Sync: true, Devices: 2, Skew: 4 * ms}
	// Three steps (none dropped) where the host runs ahead of 20 ms
	// kernels: parallel.
	shortLoop = tracetest.Loop{Steps: 3, Input: 1 * ms, Dispatch: 1 * ms, Compute: 20 * ms}
)

func TestRuleFlags(t *testing.T) {
	def := check.DefaultRules()
	tests := []struct {
		args []string
		want check.Rules
	}{
		{nil, def},
		{[]string{"--fail-on", "none"}, check.Rules{}},
		{[]string{"--fail-on", "Host-Bound,sequential", "--fail-on", "host-bound"}, check.Rules{FailOn: []analyze.Verdict{analyze.HostBound, analyze.Sequential}}},
		{[]string{"--max-idle", "30%", "--max-sync-idle", "0%", "--max-input-idle", "0.25", "--min-utilization", "70%", "--min-steps", "4"},
			check.Rules{FailOn: def.FailOn, MaxIdle: check.Limit{Share: 0.3, On: true}, MaxSyncIdle: check.Limit{Share: 0, On: true},
				MaxInputIdle: check.Limit{Share: 0.25, On: true}, MinUtilization: check.Limit{Share: 0.7, On: true}, MinSteps: 4}},
		{[]string{"--allow-no-device"}, check.Rules{FailOn: def.FailOn, AllowNoDevice: true}},
	}
	for _, tt := range tests {
		fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
		var got check.Rules
		addRuleFlags(fs, &got)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatalf("parsing %q: %v", tt.args, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: rules %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func TestCheckBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "no trace given"},
		{[]string{"check", "--fail-on", "slow", "x.json"}, `unknown verdict "slow"`},
		{[]string{"check", "--max-idle", "200%", "x.json"}, `invalid percentage "200%"`},
		{[]string{"check", "--max-idle", "1", "x.json"}, `invalid percentage "1": a bare number is ambiguous; expected a percentage like "1%" or a fraction below 1 like 0.05`},
		{[]string{"check", "--max-idle", "2", "x.json"}, `invalid percentage "2": a bare number is ambiguous`},
		{[]string{"check", "--input-threshold", "1", "x.json"}, `invalid percentage "1": a bare number is ambiguous`},
		{[]string{"check", "--min-gap", "5", "x.json"}, `invalid duration "5": no unit`},
		{[]string{"check", "--sync-slack", "50", "x.json"}, `invalid duration "50": no unit`},
		{[]string{"compare", "--fail-on-regression", "5", "a.json", "b.json"}, `invalid percentage "5": a bare number is ambiguous`},
		{[]string{"sweep", "--tolerance", "5", "a.json", "b.json"}, `invalid percentage "5": a bare number is ambiguous`},
		{[]string{"analyze", "--min-gap", "5", "x.json"}, `invalid duration "5": no unit`},
		{[]string{"check", "--format", "xml", "x.json"}, `unknown --format "xml": expected text, github or sarif`},
		{[]string{"check", "-j", "0", "x.json"}, "invalid --parallel 0"},
		{[]string{"check", "--min-steps", "-1", "x.json"}, "invalid min-steps -1: expected 0 (off) or more"},
		{[]string{"check", "--config", "/nonexistent/tracegap.toml", "x.json"}, "/nonexistent/tracegap.toml"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(tt.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// junitReport is what CI systems read of a JUnit file.
type junitReport struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Class   string `xml:"classname,attr"`
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r junitReport
	if err := xml.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s is not JUnit XML: %v\n%s", path, err, data)
	}
	return r
}

func TestCheckRealTraces(t *testing.T) {
	dir := realtraces.Dir(t)
	w0 := filepath.Join(dir, "kineto-resnet50-workers0.pt.trace.json.gz")
	w4 := filepath.Join(dir, "kineto-resnet50-workers4.pt.trace.json.gz")
	bad := filepath.Join(dir, "xprof-tpu-inference-corrupted-upstream.xplane.pb")
	cpu := filepath.Join(dir, "hta-cpu-only.pt.trace.json.gz")
	junit := filepath.Join(t.TempDir(), "out", "..", "check.xml")
	os.MkdirAll(filepath.Dir(junit), 0o755)

	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // lines, in order
		stderr string
	}{
		{"workers4 passes the defaults", []string{w4}, exitOK,
			[]string{"ok   " + w4 + ": parallel (high confidence), 1 rule passed"}, ""},
		{"workers0 is sequential", []string{w0, w4}, exitCheck,
			[]string{"FAIL " + w0 + ": verdict: measured sequential (high confidence), limit not sequential,data-bound",
				"ok   " + w4 + ": parallel (high confidence), 1 rule passed"}, ""},
		{"input idle rule", []string{"--fail-on=none", "--max-input-idle", "10%", w4, w0}, exitCheck,
			[]string{"ok   " + w4 + ": parallel (high confidence), 1 rule passed",
				"FAIL " + w0 + ": max-input-idle: measured 22.9%, limit 10.0%"}, ""},
		// A CPU-only capture fails unless allowed (TestCheckNoDevice).
		{"cpu-only trace fails", []string{cpu}, exitCheck,
			[]string{"FAIL " + cpu + ": no-device: measured no device activity (high confidence), limit device activity" + noDeviceNote}, ""},
		{"cpu-only trace allowed", []string{"--allow-no-device", cpu}, exitOK,
			[]string{"ok   " + cpu + ": no-device (high confidence), 2 rules passed"}, ""},
		{"unusable input is reported, the rest still checked", []string{"-j", "2", bad, w4, w0}, exitUsage,
			[]string{"ok   " + w4 + ": parallel (high confidence), 1 rule passed",
				"FAIL " + w0 + ": verdict: measured sequential (high confidence), limit not sequential,data-bound"},
			"ERROR " + bad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"check", "--junit", junit}, tt.args...), &stdout, &stderr)
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			if code != tt.code || !slices.Equal(lines, tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", code, tt.code, stdout.String(), strings.Join(tt.stdout, "\n"), stderr.String())
			}
			if tt.stderr != "" && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("want one error line, got:\n%s", stderr.String())
			}
		})
	}

	// The last run's JUnit report: one error case, then a case per file
	// and rule in input order.
	r := readJUnit(t, junit)
	if r.Tests != 3 || r.Failures != 1 || r.Errors != 1 || len(r.Suites) != 1 || r.Suites[0].Name != "tracegap check" {
		t.Fatalf("JUnit tests=%d failures=%d errors=%d suites=%d", r.Tests, r.Failures, r.Errors, len(r.Suites))
	}
	cs := r.Suites[0].Cases
	if cs[0].Class != bad || cs[0].Name != "input" || cs[0].Error == nil || !strings.Contains(cs[0].Error.Message, bad) {
		t.Errorf("case 0 = %+v, want an input error for %s", cs[0], bad)
	}
	if cs[1].Class != w4 || cs[1].Name != "verdict" || cs[1].Failure != nil || cs[1].Error != nil {
		t.Errorf("case 1 = %+v, want a passing verdict for %s", cs[1], w4)
	}
	if cs[2].Class != w0 || cs[2].Failure == nil || cs[2].Failure.Message != "verdict: measured sequential (high confidence), limit not sequential,data-bound" {
		t.Errorf("case 2 = %+v, want the failed verdict of %s", cs[2], w0)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(junit), ".check.xml.tmp*")); len(m) != 0 {
		t.Errorf("temporary files left behind: %q", m)
	}
}

func TestCheckGitHubFormat(t *testing.T) {
	dir := realtraces.Dir(t)
	w0 := filepath.Join(dir, "kineto-resnet50-workers0.pt.trace.json.gz")
	var stdout, stderr bytes.Buffer
	code := run([]string{"check", "--format", "github", "--max-idle", "10%", w0}, &stdout, &stderr)
	prop := strings.NewReplacer(":", "%3A", ",", "%2C").Replace(w0)
	want := "::error file=" + prop + ",title=tracegap verdict::" + w0 + ": verdict: measured sequential (high confidence), limit not sequential,data-bound\n" +
		"::error file=" + prop + ",title=tracegap max-idle::" + w0 + ": max-idle: measured 30.9%25, limit 10.0%25\n"
	if code != exitCheck || stdout.String() != want {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 1 and:\n%s", code, stdout.String(), want)
	}
}

func TestCheckConfigFile(t *testing.T) {
	dir := realtraces.Dir(t)
	w4 := filepath.Join(dir, "kineto-resnet50-workers4.pt.trace.json.gz")
	cfg := filepath.Join(t.TempDir(), "tracegap.toml")
	text := "[check]\nfail_on = [\"host-bound\"]\nmin_utilization = \"90%\"\n\n[analysis]\nmin_gap = \"20us\"\n"
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		out  string
	}{
		// workers4 keeps its GPU 86.1% busy over the steps.
		{[]string{"--config", cfg, w4}, exitCheck, "FAIL " + w4 + ": min-utilization: measured 89.3% (GPU:0), limit 90.0%\n"},
		{[]string{"--config", cfg, "--min-utilization", "85%", w4}, exitOK, "ok   " + w4 + ": parallel (high confidence), 2 rules passed\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"check"}, tt.args...), &stdout, &stderr)
		if code != tt.code || stdout.String() != tt.out {
			t.Errorf("%q: exit %d stdout %q stderr %q; want %d %q", tt.args, code, stdout.String(), stderr.String(), tt.code, tt.out)
		}
	}
	if err := os.WriteFile(cfg, []byte("[check]\nmax_idle = \"ten\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"check", "--config", cfg, w4}, &stdout, &stderr)
	if want := cfg + `:2: max_idle: invalid percentage "ten"`; code != exitUsage || !strings.Contains(stderr.String(), want) {
		t.Errorf("bad config: exit %d stderr %q; want 2 and %q", code, stderr.String(), want)
	}
}

func TestCheckGeneratedFiles(t *testing.T) {
	dir := t.TempDir()
	seq := writeLoop(t, dir, "a-sequential.xplane.pb", sequentialLoop)
	data := writeLoop(t, dir, "b-data-bound.xplane.pb", dataBoundLoop)
	short := writeLoop(t, dir, "c-short.xplane.pb", shortLoop)
	two := writeLoop(t, t.TempDir(), "two-devices.xplane.pb", twoDeviceLoop)
	missing := filepath.Join(dir, "missing.xplane.pb")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"defaults on a directory", []string{dir}, exitCheck,
			"FAIL " + seq + ": verdict: measured sequential (high confidence), limit not sequential,data-bound\n" +
				"FAIL " + data + ": verdict: measured data-bound (high confidence), limit not sequential,data-bound\n" +
				"ok   " + short + ": parallel (high confidence), 1 rule passed\n", ""},
		{"every rule passes", []string{"--fail-on", "host-bound", "--max-idle", "36%", "--max-sync-idle", "20%", "--max-input-idle", "33%",
			"--min-utilization", "60%", "--min-steps", "3", "-j", "1", seq, data, short}, exitOK,
			"ok   " + seq + ": sequential (high confidence), 6 rules passed\n" +
				"ok   " + data + ": data-bound (high confidence), 6 rules passed\n" +
				"ok   " + short + ": parallel (high confidence), 6 rules passed\n", ""},
		{"every rule fails somewhere", []string{"--fail-on", "none", "--max-idle", "35%", "--max-sync-idle", "19%", "--max-input-idle", "32%",
			"--min-utilization", "70%", "--min-steps", "4", "-j", "3", seq, data, short}, exitCheck,
			"FAIL " + seq + ": max-sync-idle: measured 20.0%, limit 19.0%\n" +
				"FAIL " + data + ": max-idle: measured 35.5%, limit 35.0%\n" +
				"FAIL " + data + ": max-input-idle: measured 32.3%, limit 32.0%\n" +
				"FAIL " + data + ": min-utilization: measured 64.5% (GPU:0), limit 70.0%\n" +
				"FAIL " + short + ": min-steps: measured 3 steps, limit 4 steps\n", ""},
		// The least busy device is the one held to --min-utilization.
		{"two devices", []string{"--fail-on", "none", "--min-utilization", "70%", two}, exitCheck,
			"FAIL " + two + ": min-utilization: measured 60.0% (GPU:1), limit 70.0%\n", ""},
		{"two devices pass", []string{"--fail-on", "none", "--min-utilization", "60%", two}, exitOK,
			"ok   " + two + ": sequential (high confidence), 1 rule passed\n", ""},
		{"a missing file", []string{missing, short}, exitUsage,
			"ok   " + short + ": parallel (high confidence), 1 rule passed\n", "ERROR " + missing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCmd(append([]string{"check"}, tt.args...)...)
			if code != tt.code || out != tt.stdout || !strings.Contains(errs, tt.stderr) || (tt.stderr == "") != (errs == "") {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr: %q, want %q", code, tt.code, out, tt.stdout, errs, tt.stderr)
			}
		})
	}
}

// noDeviceNote ends the no-device rule's failure.
const noDeviceNote = ": a profiler that could not record the device (CUPTI without permission) or a trace cut before its device events looks like this; " +
	"if the run really has no device, allow it with --allow-no-device or allow_no_device = true in [check]"

// TestCheckNoDevice: a trace without device activity fails by default, as
// a capture whose profiler could not see the device looks exactly like
// it, and passes with --allow-no-device or allow_no_device in the config.
// A cut trace says it was cut, at low confidence.
func TestCheckNoDevice(t *testing.T) {
	dir := t.TempDir()
	spec := &tracetest.Spec{Threads: []tracetest.Thread{{TID: 1, Name: "python"}}}
	for i := range 100 {
		spec.Events = append(spec.Events, tracetest.Event{Role: tracetest.CPUOp, Name: "aten::add", Thread: 1, Start: int64(i) * 2000, Dur: 1000})
	}
	var buf bytes.Buffer
	if err := tracetest.WriteChrome(&buf, spec); err != nil {
		t.Fatal(err)
	}
	whole, cut := filepath.Join(dir, "cpu.json"), filepath.Join(dir, "cut.json")
	if err := os.WriteFile(whole, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, buf.Bytes()[:buf.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	allow := writeConfig(t, "[check]\nallow_no_device = true\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"fails by default", []string{whole}, exitCheck,
			"FAIL " + whole + ": no-device: measured no device activity (high confidence), limit device activity" + noDeviceNote + "\n"},
		{"a cut trace says so", []string{cut}, exitCheck,
			"FAIL " + cut + ": no-device: measured no device activity in a trace cut short (low confidence), limit device activity" + noDeviceNote + "\n"},
		{"allowed by flag", []string{"--allow-no-device", whole}, exitOK, "ok   " + whole + ": no-device (high confidence), 2 rules passed\n"},
		{"allowed by config", []string{"--config", allow, cut}, exitOK, "ok   " + cut + ": no-device (low confidence), 2 rules passed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCmd(append([]string{"check"}, tt.args...)...)
			if code != tt.code || out != tt.stdout {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", code, tt.code, out, tt.stdout, errs)
			}
		})
	}
}

// TestCheckSARIFUnreadable: an unreadable input makes SARIF's error result,
// naming the file once, and the same line on stderr, as text gives.
func TestCheckSARIFUnreadable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	code, stdout, stderr := tg("check", "--format", "sarif", missing)
	want := missing + ": no such file or directory"
	if code != exitUsage || stderr != "tracegap: "+want+"\n" {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, "tracegap: "+want)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 {
		t.Fatalf("stdout is not a SARIF log of one result: %v\n%s", err, stdout)
	}
	if got := log.Runs[0].Results[0].Message.Text; got != want {
		t.Errorf("SARIF message %q, want %q", got, want)
	}
}
