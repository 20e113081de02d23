package check

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// keys are the keys of the tests' sections, one of each kind.
var keys = map[string]map[string]Kind{
	"check": {"fail_on": Strings, "max_idle": Percent, "min_steps": Int},
	"analysis": {"min_gap": Duration, "sync_pattern": Strings, "sync_threshold": Percent,
		"step_regex": String, "top": Int},
	"compare": {"synthetic_base": Bool},
}

// sections parses text and returns its settings by section.
func sections(t *testing.T, text string) (map[string][]Setting, error) {
	t.Helper()
	c, err := parseConfig("ci.toml", []byte(text))
	if err != nil {
		return nil, err
	}
	out := map[string][]Setting{}
	for name, k := range keys {
		s, err := c.Section(name, k)
		if err != nil {
			return nil, err
		}
		for i := range s {
			s[i].path = "" // compared below through Wrap
		}
		out[name] = s
	}
	return out, nil
}

func TestConfigSections(t *testing.T) {
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
"step_regex" = """
step"""
top = 1_000

[compare]
synthetic_base = true
`
	got, err := sections(t, text)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Setting{
		"check": {
			{Key: "fail_on", Line: 3, Values: []string{"sequential", "data-bound"}},
			{Key: "max_idle", Line: 5, Values: []string{"10%"}},
			{Key: "min_steps", Line: 6, Values: []string{"3"}},
		},
		"analysis": {
			{Key: "min_gap", Line: 9, Values: []string{"50us"}},
			{Key: "sync_pattern", Line: 10, Values: []string{`wait#for"me"`, `raw\d+`}},
			{Key: "sync_threshold", Line: 11, Values: []string{"0.07"}},
			{Key: "step_regex", Line: 12, Values: []string{"step"}},
			{Key: "top", Line: 14, Values: []string{"1000"}},
		},
		"compare": {{Key: "synthetic_base", Line: 17, Values: []string{"true"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings:\n%+v\nwant:\n%+v", got, want)
	}
}

// TestConfigForms: TOML's other ways of writing the same keys.
func TestConfigForms(t *testing.T) {
	tests := []struct {
		text string
		want []Setting
	}{
		{"check.max_idle = 0.1\ncheck.min_steps = 2", []Setting{{Key: "max_idle", Line: 1, Values: []string{"0.1"}}, {Key: "min_steps", Line: 2, Values: []string{"2"}}}},
		{"check = { fail_on = [], max_idle = 15 }", []Setting{{Key: "fail_on", Line: 1, Values: []string{}}, {Key: "max_idle", Line: 1, Values: []string{"15"}}}},
		{"[check]\nfail_on = 'sequential,host-bound'", []Setting{{Key: "fail_on", Line: 2, Values: []string{"sequential,host-bound"}}}},
		{"[analysis]\n[check]\n\n", nil},
	}
	for _, tt := range tests {
		got, err := sections(t, tt.text)
		if err != nil || !reflect.DeepEqual(got["check"], tt.want) {
			t.Errorf("%q: %+v, %v; want %+v", tt.text, got["check"], err, tt.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		// Syntax, as go-toml reports it.
		{"[check]\nmax_idle = 10%", "ci.toml:2:"},
		{"[check]\nmax_idle = \"10%", "ci.toml:2:"},
		{"[check]\nmin_steps = 1\nmin_steps = 2", "ci.toml:3:1: toml: key min_steps is already defined"},
		// Layout.
		{"max_idle = 1", "ci.toml:1: key max_idle outside a section: expected a [check], [compare] or [analysis] header first"},
		{"\n[checks]", "ci.toml:2: unknown section [checks]: expected one of [analysis], [check], [compare]"},
		{"[[check]]\nmax_idle = 1", "ci.toml:1: [[check]]: expected a [check] table"},
		{"[\"\\u001b[2J\"]", `ci.toml:1: unknown section ["\x1b[2J"]`},
		// Keys and kinds.
		{"[check]\nmax_idel = \"1%\"", "ci.toml:2: unknown key max_idel in [check]: expected one of fail_on, max_idle, min_steps"},
		{"[analysis]\nmax_idle = \"1%\"", "ci.toml:2: unknown key max_idle in [analysis]"},
		{"[check]\n\"\\u001b]0;x\" = 1", `ci.toml:2: unknown key "\x1b]0;x" in [check]`},
		{"[check]\nmin_steps = \"3\"", "ci.toml:2: min_steps in [check]: expected an integer, got a string"},
		{"[check]\nmin_steps = []", "ci.toml:2: min_steps in [check]: expected an integer, got an array"},
		{"[check]\nmin_steps = 2.5", "ci.toml:2: min_steps in [check]: expected an integer, got a float"},
		{"[check]\nfail_on = [\"sequential\", 3]", "ci.toml:2: fail_on in [check]: expected a string or an array of strings, got an array holding an integer"},
		{"[check]\nmax_idle = true", `ci.toml:2: max_idle in [check]: expected a percentage like "10%" or a fraction below 1 like 0.1, got a boolean`},
		{"[check.max_idle]\nx = 1", "ci.toml:1: max_idle in [check]: expected a percentage"},
		{"[analysis]\nmin_gap = 2025-01-01", `ci.toml:2: min_gap in [analysis]: expected a duration with its unit like "50us", got a date or time`},
		{"[analysis]\nstep_regex = 1", "ci.toml:2: step_regex in [analysis]: expected a string, got an integer"},
		{"[compare]\nsynthetic_base = \"yes\"", "ci.toml:2: synthetic_base in [compare]: expected true or false, got a string"},
		{"[check]\nfail_on = [\"x\", \"" + strings.Repeat("a", maxSettingLen+1) + "\"]", "ci.toml:2: fail_on in [check]: a value of 4097 bytes, expected at most 4096"},
		// Size: the decoder's time grows as the square of a table's keys.
		{manyKeys("[check]\n", "k%d = 1\n", maxConfigKeys-1, ""), "ci.toml:2: unknown key k0 in [check]"},
		{manyKeys("[check]\n", "k%d = 1\n", maxConfigKeys, ""), "ci.toml: more than 10000 keys and tables: expected a small settings file"},
		{manyKeys("[check]\nx = {", "k%d = 1, ", maxConfigKeys, "z = 1}"), "ci.toml: more than 10000 keys"},
		{manyKeys("[check]\nx = [", "{k%d = 1}, ", maxConfigKeys, "]"), "ci.toml: more than 10000 keys"},
		{manyKeys("", "[t%d]\n", maxConfigKeys+1, ""), "ci.toml: more than 10000 keys"},
	}
	for _, tt := range tests {
		_, err := sections(t, tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("config %q: error = %v, want one containing %q", tt.text, err, tt.want)
		}
	}
}

// manyKeys returns head, then line formatted with each of 0 to n-1, then
// tail.
func manyKeys(head, line string, n int, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		fmt.Fprintf(&b, line, i)
	}
	return b.String() + tail
}

func TestSettingWrap(t *testing.T) {
	c, err := parseConfig("ci.toml", []byte("[check]\n\nmax_idle = \"lots\""))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Section("check", keys["check"])
	if err != nil || len(s) != 1 {
		t.Fatalf("%+v, %v; want one setting", s, err)
	}
	inner := errors.New(`invalid percentage "lots"`)
	err = s[0].Wrap(inner)
	if want := `ci.toml:3: max_idle: invalid percentage "lots"`; err.Error() != want || !errors.Is(err, inner) {
		t.Errorf("Wrap = %v, want %q wrapping the error", err, want)
	}
}

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), ConfigName)
	if err := os.WriteFile(path, []byte("[check]\nmin_steps = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil || c.Path != path {
		t.Fatalf("LoadConfig = %+v, %v", c, err)
	}
	if s, err := c.Section("check", keys["check"]); err != nil || len(s) != 1 || s[0].Values[0] != "2" {
		t.Errorf("[check] = %+v, %v; want min_steps 2", s, err)
	}

	_, err = LoadConfig(filepath.Join(t.TempDir(), "nope.toml"))
	if err == nil || !strings.Contains(err.Error(), "nope.toml") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadConfig of a missing file: %v, want a not-exist error naming it", err)
	}
}

// foundPath returns the path of the config file FindConfig finds from
// dir, "" for none.
func foundPath(dir string) (string, error) {
	c, err := FindConfig(dir)
	if c == nil {
		return "", err
	}
	return c.Path, err
}

func TestFindConfig(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir string) string {
		t.Helper()
		p := filepath.Join(dir, ConfigName)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	find := func(dir, want string) {
		t.Helper()
		if got, err := foundPath(dir); got != want || err != nil {
			t.Errorf("FindConfig(%s) = %q, %v; want %q", dir, got, err, want)
		}
	}
	// Nothing from root up, unless the machine has one above the
	// temporary directory: then that one.
	above, err := foundPath(filepath.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	find(deep, above)
	// A directory of that name is not a config file.
	if err := os.Mkdir(filepath.Join(root, "a", ConfigName), 0o755); err != nil {
		t.Fatal(err)
	}
	find(deep, above)
	top := write(root)
	find(deep, top)
	find(root, top)
	// The nearest wins.
	mid := write(filepath.Join(root, "a", "b"))
	find(deep, mid)
	find(filepath.Join(root, "a"), top)
}

// TestPyproject: a pyproject.toml holds the settings under [tool.tracegap]
// (its tables are the sections, with their lines); the project's other
// tables, whatever they hold, are not tracegap's.
func TestPyproject(t *testing.T) {
	text := `[project]
name = "trainer"
dependencies = ["jax>=0.4", "grain"]

[tool.ruff]
line-length = 100
lint.select = ["E", "F"]

[tool.tracegap.check]
fail_on = ["sequential"]
max_idle = "10%"

[tool.tracegap.analysis]
min_gap = "50us"
`
	c, err := parseConfig(filepath.Join(t.TempDir(), PyprojectName), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	chk, err := c.Section("check", keys["check"])
	if err != nil {
		t.Fatal(err)
	}
	an, err := c.Section("analysis", keys["analysis"])
	if err != nil {
		t.Fatal(err)
	}
	if len(chk) != 2 || chk[0].Key != "fail_on" || chk[1].Key != "max_idle" || chk[1].Values[0] != "10%" ||
		len(an) != 1 || an[0].Key != "min_gap" || an[0].Values[0] != "50us" {
		t.Errorf("check %+v, analysis %+v; want fail_on and max_idle 10%%, min_gap 50us", chk, an)
	}
	if err := an[0].Wrap(errors.New("bad")); !strings.Contains(err.Error(), PyprojectName+":14:") {
		t.Errorf("error %q: want it to name line 14", err)
	}
	// An unknown table under [tool.tracegap] is an error, as in
	// tracegap.toml, named as the file writes it.
	want := "pyproject.toml:1: unknown section [tool.tracegap.chek]: expected one of [tool.tracegap.analysis], [tool.tracegap.check], [tool.tracegap.compare]"
	if _, err := parseConfig(PyprojectName, []byte("[tool.tracegap.chek]\nmax_idle = \"1%\"\n")); err == nil || err.Error() != want {
		t.Errorf("misspelt section: %v, want %q", err, want)
	}
	c, err = parseConfig(PyprojectName, []byte("[tool.tracegap.check]\nmax_idel = \"1%\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Section("check", map[string]Kind{"max_idle": Percent}); err == nil || !strings.Contains(err.Error(), "unknown key max_idel in [tool.tracegap.check]") {
		t.Errorf("misspelt key: %v", err)
	}
	c, err = parseConfig(PyprojectName, []byte("[tool.tracegap.analysis]\nstep_regex = \""+strings.Repeat("a", maxSettingLen+1)+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Section("analysis", map[string]Kind{"step_regex": String}); err == nil || !strings.Contains(err.Error(), "step_regex in [tool.tracegap.analysis]: a value of 4097 bytes") {
		t.Errorf("a value too long: %v", err)
	}
}

// TestFindPyproject: in each directory tracegap.toml wins over
// pyproject.toml, and a pyproject.toml without [tool.tracegap] is passed
// over for one further up.
func TestFindPyproject(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir, name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	top := write(root, PyprojectName, "[tool.tracegap.analysis]\nmin_gap = \"50us\"\n")
	write(deep, PyprojectName, "[project]\nname = \"x\"\n[tool.black]\nline-length = 88\n")
	if got, err := foundPath(deep); got != top || err != nil {
		t.Errorf("FindConfig = %q, %v; want %q", got, err, top)
	}
	both := write(deep, ConfigName, "")
	if got, err := foundPath(deep); got != both || err != nil {
		t.Errorf("FindConfig = %q, %v; want %q", got, err, both)
	}
}
