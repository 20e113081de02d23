package main

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/analyze"
)

func TestParseConfig(t *testing.T) {
	text := `# tracegap rules for this repository
[check]
fail_on = ["sequential",   # the mission's verdicts
           "data-bound",]
max_idle = "10%"  # a comment
min_steps = 3

[analysis]
min_gap = '50us'
sync_pattern = ["wait#for\"me\"", 'raw\d+']
sync_threshold = 0.07
`
	c, err := parseConfig("tracegap.toml", text)
	if err != nil {
		t.Fatal(err)
	}
	want := []configEntry{
		{"check", "fail_on", 3, []string{"sequential", "data-bound"}},
		{"check", "max_idle", 5, []string{"10%"}},
		{"check", "min_steps", 6, []string{"3"}},
		{"analysis", "min_gap", 9, []string{"50us"}},
		{"analysis", "sync_pattern", 10, []string{`wait#for"me"`, `raw\d+`}},
		{"analysis", "sync_threshold", 11, []string{"0.07"}},
	}
	if len(c.entries) != len(want) {
		t.Fatalf("got %d entries %+v, want %d", len(c.entries), c.entries, len(want))
	}
	for i, e := range c.entries {
		w := want[i]
		if e.section != w.section || e.key != w.key || e.line != w.line || !slices.Equal(e.values, w.values) {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"max_idle = 1", "ci.toml:1: key max_idle outside a section"},
		{"[checks]", "ci.toml:1: unknown section [checks]: expected one of [analysis], [check], [compare]"},
		{"[check]\nmax_idle 10", `ci.toml:2: expected key = value or [section], got "max_idle 10"`},
		{"[check]\n\nmax_idle = 10%", `ci.toml:3: max_idle: invalid value "10%": expected a quoted string`},
		{"[check]\nmax_idle = \"10%", "ci.toml:2: max_idle: string \"10% not closed"},
		{"[check]\nfail_on = [\"sequential\"", "ci.toml:2: fail_on: array not closed: expected ]"},
		{"[check]\nfail_on = [\"a\" \"b\"]", `ci.toml:2: fail_on: expected , or ] after array element "a"`},
		{"[check]\nmax_idle = \"1\" x", `ci.toml:2: max_idle: unexpected "x" after the value`},
		{"[check]\nmin_steps = 1\nmin_steps = 2", "ci.toml:3: min_steps set again in [check] (first on line 2)"},
		{"[check]\nx = \"a\\q\"", `ci.toml:2: x: invalid escape \q`},
	}
	for _, tt := range tests {
		_, err := parseConfig("ci.toml", tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) error = %v, want one containing %q", tt.text, err, tt.want)
		}
	}
}

// ruleFlags parses args into fresh check and analysis flags and applies
// the config text.
func ruleFlags(t *testing.T, text string, args ...string) (*checkRules, *analysisFlags, error) {
	t.Helper()
	set := pflag.NewFlagSet("check", pflag.ContinueOnError)
	r := &checkRules{}
	addRuleFlags(set, r)
	af := addAnalysisFlags(set)
	if err := set.Parse(args); err != nil {
		t.Fatal(err)
	}
	c, err := parseConfig("tracegap.toml", text)
	if err != nil {
		t.Fatal(err)
	}
	return r, af, c.apply(set, map[string][]string{"check": checkKeys, "analysis": analysisKeys})
}

func TestConfigApply(t *testing.T) {
	text := "[check]\nfail_on = [\"host-bound\"]\nmax_idle = \"10%\"\nmin_steps = 3\n[analysis]\nmin_gap = \"50us\"\nsync_pattern = [\"a\", \"b\"]\n[compare]\nfail_on_regression = \"5%\"\n"
	r, af, err := ruleFlags(t, text, "--max-idle", "20%", "--sync-pattern", "c")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.failOn.v, []analyze.Verdict{analyze.HostBound}) {
		t.Errorf("fail-on = %v, want the file's [host-bound]", r.failOn.v)
	}
	if !r.maxIdle.set || r.maxIdle.v != 0.2 {
		t.Errorf("max-idle = %+v, want the flag's 20%% over the file's 10%%", r.maxIdle)
	}
	if r.minSteps != 3 || af.minGap != 50_000 {
		t.Errorf("min-steps %d min-gap %d, want 3 and 50000 from the file", r.minSteps, af.minGap)
	}
	if !slices.Equal(af.syncPatterns, []string{"c"}) {
		t.Errorf("sync patterns = %q, want the flag's [c] alone", af.syncPatterns)
	}

	r, _, err = ruleFlags(t, "[check]\nfail_on = []\n")
	if err != nil || len(r.failOn.v) != 0 {
		t.Errorf("fail_on = [] gave %v, %v; want no verdict rule", r.failOn.v, err)
	}
	r, _, err = ruleFlags(t, "[check]\nmax_idle = 0.15\n")
	if err != nil || r.maxIdle.v != 0.15 {
		t.Errorf("max_idle = 0.15 gave %v, %v; want 15%%", r.maxIdle.v, err)
	}
}

func TestConfigApplyErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"[check]\nmax_idel = \"1%\"", "tracegap.toml:2: unknown key max_idel in [check]: expected one of fail_on, max_idle"},
		{"[analysis]\nmax_idle = \"1%\"", "tracegap.toml:2: unknown key max_idle in [analysis]"},
		{"[check]\n\nfail_on = [\"slow\"]", `tracegap.toml:3: fail_on: unknown verdict "slow"`},
		{"[check]\nmax_idle = \"lots\"", `tracegap.toml:2: max_idle: invalid percentage "lots"`},
		{"[check]\nmin_steps = []", "tracegap.toml:2: min_steps: expected a value, got an empty array"},
		{"[analysis]\nmin_gap = \"fast\"", `tracegap.toml:2: min_gap: invalid duration "fast"`},
	}
	for _, tt := range tests {
		_, _, err := ruleFlags(t, tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("config %q: error = %v, want one containing %q", tt.text, err, tt.want)
		}
	}
}

func TestLoadConfigMissing(t *testing.T) {
	_, err := loadConfig(filepath.Join(t.TempDir(), "nope.toml"))
	if err == nil || !strings.Contains(err.Error(), "nope.toml") {
		t.Errorf("loadConfig of a missing file: %v, want an error naming it", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap the not-exist error", err)
	}
}
