package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/realtraces"
)

// writeConfig writes text as a config file in a new directory.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tracegap.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// configFlags parses args into fresh check and analysis flags and applies
// the config text.
func configFlags(t *testing.T, text string, args ...string) (*check.Rules, *analysisFlags, error) {
	t.Helper()
	set := pflag.NewFlagSet("check", pflag.ContinueOnError)
	r := &check.Rules{}
	addRuleFlags(set, r)
	af := addAnalysisFlags(set)
	if err := set.Parse(args); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(writeConfig(t, text))
	if err != nil {
		t.Fatal(err)
	}
	return r, af, c.apply(set, map[string][]string{"check": checkKeys, "analysis": analysisKeys})
}

func TestConfigApply(t *testing.T) {
	text := "[check]\nfail_on = [\"host-bound\"]\nmax_idle = \"10%\"\nmin_steps = 3\n[analysis]\nmin_gap = \"50us\"\nsync_pattern = [\"a\", \"b\"]\n[compare]\nfail_on_regression = \"5%\"\n"
	r, af, err := configFlags(t, text, "--max-idle", "20%", "--sync-pattern", "c")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.FailOn, []analyze.Verdict{analyze.HostBound}) {
		t.Errorf("fail-on = %v, want the file's [host-bound]", r.FailOn)
	}
	if !r.MaxIdle.On || r.MaxIdle.Share != 0.2 {
		t.Errorf("max-idle = %+v, want the flag's 20%% over the file's 10%%", r.MaxIdle)
	}
	if r.MinSteps != 3 || af.minGap != 50_000 {
		t.Errorf("min-steps %d min-gap %d, want 3 and 50000 from the file", r.MinSteps, af.minGap)
	}
	if !slices.Equal(af.syncPatterns, []string{"c"}) {
		t.Errorf("sync patterns = %q, want the flag's [c] alone", af.syncPatterns)
	}

	tests := []struct {
		text string
		ok   func(*check.Rules, *analysisFlags) bool
	}{
		{"[check]\nfail_on = []\n", func(r *check.Rules, _ *analysisFlags) bool { return len(r.FailOn) == 0 }},
		{"[check]\nmax_idle = 0.15\n", func(r *check.Rules, _ *analysisFlags) bool { return r.MaxIdle.Share == 0.15 }},
		{"[check]\nallow_no_device = true\n", func(r *check.Rules, _ *analysisFlags) bool { return r.AllowNoDevice }},
		{"[check]\n", func(r *check.Rules, _ *analysisFlags) bool { return !r.AllowNoDevice }},
		{"[check]\nmax_idle = \"15%\"\n", func(r *check.Rules, _ *analysisFlags) bool { return r.MaxIdle.Share == 0.15 }},
		{"[analysis]\nmin_gap = \"20us\"\nsync_threshold = 0.07\ntop = 3\n", func(_ *check.Rules, af *analysisFlags) bool {
			return af.minGap == 20_000 && af.syncThr == 0.07 && af.top == 3
		}},
		{"[analysis]\nmin_gap = 0\n", func(_ *check.Rules, af *analysisFlags) bool {
			return af.minGap == 0
		}},
	}
	for _, tt := range tests {
		r, af, err := configFlags(t, tt.text)
		if err != nil || !tt.ok(r, af) {
			t.Errorf("%q gave %+v %+v, %v", tt.text, r, af, err)
		}
	}
}

func TestConfigApplyErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"[check]\nmax_idel = \"1%\"", ":2: unknown key max_idel in [check]: expected one of allow_no_device, fail_on, fail_on_finding, max_idle"},
		{"[analysis]\nmax_idle = \"1%\"", ":2: unknown key max_idle in [analysis]"},
		{"[check]\n\nfail_on = [\"slow\"]", `:3: fail_on: unknown verdict "slow"`},
		{"[check]\nmax_idle = \"lots\"", `:2: max_idle: invalid percentage "lots"`},
		{"[check]\nmin_steps = []", ":2: min_steps in [check]: expected an integer, got an array"},
		{"[analysis]\nmin_gap = \"fast\"", `:2: min_gap: invalid duration "fast"`},
		// A bare number is ambiguous: 1 could be 100% or 1%, 5 µs or 5 s.
		{"[check]\nmax_idle = 15", `:2: max_idle: invalid percentage "15": a bare number is ambiguous; expected a percentage like "15%" or a fraction below 1 like 0.05`},
		{"[analysis]\ninput_threshold = 1", `:2: input_threshold: invalid percentage "1": a bare number is ambiguous`},
		{"[analysis]\nmin_gap = 20", `:2: min_gap: invalid duration "20": no unit; expected a number with a unit (ns, us, ms, s), like 50us`},
		{"[analysis]\nmax_bytes = 1.5", ":2: max_bytes in [analysis]: expected a size like \"64GiB\" or a number of bytes, got a float"},
	}
	for _, tt := range tests {
		_, _, err := configFlags(t, tt.text)
		if err == nil || !strings.Contains(err.Error(), "tracegap.toml"+tt.want) {
			t.Errorf("config %q: error = %v, want one containing %q", tt.text, err, tt.want)
		}
	}
}

// TestCheckFindsConfig: without --config, check reads the first
// tracegap.toml from the working directory up.
func TestCheckFindsConfig(t *testing.T) {
	w4 := filepath.Join(realtraces.Dir(t), "kineto-resnet50-workers4.pt.trace.json.gz")
	root := filepath.Dir(writeConfig(t, "[check]\nmin_utilization = \"90%\"\n"))
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	fail := "FAIL " + w4 + ": min-utilization: measured 89.3% (GPU:0), limit 90.0%\n"
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{w4}, exitCheck, fail},
		// --config wins over the file found.
		{[]string{"--config", writeConfig(t, "[check]\nmin_steps = 1\n"), w4}, exitOK, "ok   " + w4 + ": parallel (high confidence), 2 rules passed\n"},
	}
	for _, tt := range tests {
		code, out, errs := runCmd(append([]string{"check"}, tt.args...)...)
		if code != tt.code || out != tt.out {
			t.Errorf("%q: exit %d stdout %q stderr %q; want %d %q", tt.args, code, out, errs, tt.code, tt.out)
		}
	}
	// A broken file found is an error, not passed over.
	if err := os.WriteFile(filepath.Join(root, "a", "tracegap.toml"), []byte("[check\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCmd("check", w4)
	if want := filepath.Join(root, "a", "tracegap.toml") + ":1:"; code != exitUsage || !strings.Contains(errs, want) {
		t.Errorf("broken config: exit %d stderr %q; want 2 and %q", code, errs, want)
	}
}

// TestOneConfigEveryCommand: one tracegap.toml, found from the working
// directory, sets the analysis of every command alike. The shipped example
// (each step's 18 ms of idle on its inline DataLoader, 28.4% of the
// window: data-bound by default) with input_threshold 50% is parallel in
// analyze, check, compare and sweep; with min_gap 20ms none of its gaps is
// attributed, and gaps lists none. A pyproject.toml's [tool.tracegap]
// does the same; --isolated reads neither.
func TestOneConfigEveryCommand(t *testing.T) {
	example, err := filepath.Abs(filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	settings := "input_threshold = \"50%\"\nmin_gap = \"20ms\"\n"
	for _, file := range []struct{ name, text string }{
		{check.ConfigName, "[analysis]\n" + settings},
		{check.PyprojectName, "[project]\nname = \"trainer\"\n\n[tool.tracegap.analysis]\n" + settings},
	} {
		t.Run(file.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, file.name), []byte(file.text), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			verdicts := commandVerdicts(t, example)
			for cmd, v := range verdicts {
				if v != "parallel" {
					t.Errorf("%s: %s, want parallel under the config", cmd, v)
				}
			}
			if _, out, _ := runCmd("gaps", example); strings.Count(out, "\n") != 1 {
				t.Errorf("gaps: %q, want the header alone (no gap of 20 ms or more)", out)
			}
			isolated := commandVerdicts(t, example, "--isolated")
			for cmd, v := range isolated {
				if v != "data-bound" {
					t.Errorf("%s --isolated: %s, want the default data-bound", cmd, v)
				}
			}
		})
	}
}

// commandVerdicts returns the verdict analyze, check, compare and sweep
// give path, each run with the extra flags.
func commandVerdicts(t *testing.T, path string, extra ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	run := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCmd(append(args[:1:1], append(slices.Clone(extra), args[1:]...)...)...)
		if code != exitOK && code != exitCheck {
			t.Fatalf("%q: exit %d, %s", args, code, stderr)
		}
		return stdout
	}
	verdictOf := func(cmd, text, before string) {
		t.Helper()
		i := strings.Index(text, before)
		if i < 0 {
			t.Fatalf("%s: no %q in %q", cmd, before, text)
		}
		v, _, _ := strings.Cut(text[i+len(before):], "\"")
		v, _, _ = strings.Cut(v, " ")
		out[cmd] = v
	}
	verdictOf("analyze", run("analyze", "--format", "json", path), `"verdict": "`)
	verdictOf("check", run("check", "--fail-on", "none", path), path+": ")
	verdictOf("compare", run("compare", "--format", "json", path, path), `"verdict": "`)
	verdictOf("sweep", run("sweep", "--format", "json", path, path), `"verdict": "`)
	return out
}
