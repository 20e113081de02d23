package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompletionBash loads the bash script in a real bash and completes:
// a command's name, a flag from the command's own help (as "tracegap
// check --help" prints it, served here by a stand-in for the binary), and
// help's argument.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "tracegap.bash")
	help := filepath.Join(dir, "check-help.txt")
	code, out, _ := runCmd("completion", "bash")
	if code != exitOK {
		t.Fatalf("completion bash: exit %d", code)
	}
	_, checkHelp, _ := runCmd("help", "check")
	for name, text := range map[string]string{script: out, help: checkHelp} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ words, want string }{
		{"tracegap swe", "sweep"},
		{"tracegap check --fail-on-f", "--fail-on-finding"},
		{"tracegap check --isol", "--isolated"},
		{"tracegap help comp", "compare completion"},
		{"tracegap completion f", "fish"},
	} {
		prog := `tracegap() { cat "$HELP"; }
source "$SCRIPT"
COMP_WORDS=($WORDS); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
cd "$DIR"; _tracegap; echo "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		cmd.Env = append(os.Environ(), "HELP="+help, "SCRIPT="+script, "WORDS="+tt.words, "DIR="+dir)
		got, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(got)) != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.words, got, err, tt.want)
		}
	}
}

// TestCompletionScripts: every shell's script names every command, and an
// unknown shell is a usage error.
func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, _ := runCmd("completion", sh)
		if code != exitOK {
			t.Errorf("%s: exit %d", sh, code)
		}
		for name := range commands {
			if !strings.Contains(out, name) {
				t.Errorf("%s script lacks %s", sh, name)
			}
		}
	}
	if code, _, errs := runCmd("completion", "tcsh"); code != exitUsage || !strings.Contains(errs, "expected one shell, bash, fish, zsh") {
		t.Errorf("tcsh: exit %d, %q; want 2 naming the shells", code, errs)
	}
}

// TestColorEnv: with --color auto, FORCE_COLOR colours output that is no
// terminal (a CI log), NO_COLOR wins over it, and check colours its words
// as analyze colours its report.
func TestColorEnv(t *testing.T) {
	example := filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz")
	for _, tt := range []struct {
		force, no string
		want      bool
	}{
		{"", "", false}, {"1", "", true}, {"0", "", false}, {"1", "1", false},
	} {
		t.Setenv("FORCE_COLOR", tt.force)
		t.Setenv("NO_COLOR", tt.no)
		_, check, _ := runCmd("check", "--isolated", example)
		_, analyze, _ := runCmd("analyze", "--isolated", example)
		for cmd, out := range map[string]string{"check": check, "analyze": analyze} {
			if got := strings.Contains(out, "\x1b["); got != tt.want {
				t.Errorf("FORCE_COLOR=%q NO_COLOR=%q: %s coloured %v, want %v", tt.force, tt.no, cmd, got, tt.want)
			}
		}
	}
}

// TestTextWidth: with COLUMNS=80 no line of the shipped example's text
// report is wider than 80 columns; without it (a pipe, a file) the report
// is as it always was.
func TestTextWidth(t *testing.T) {
	example := filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz")
	t.Setenv("COLUMNS", "")
	_, plain, _ := runCmd("analyze", "--isolated", example)
	t.Setenv("COLUMNS", "80")
	_, fitted, _ := runCmd("analyze", "--isolated", example)
	wide := 0
	for _, line := range strings.Split(plain, "\n") {
		wide = max(wide, len(line))
	}
	if wide <= 80 {
		t.Fatalf("the plain report's widest line is %d: the test shows nothing", wide)
	}
	for _, line := range strings.Split(fitted, "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("a line of %d columns: %q", len([]rune(line)), line)
		}
	}
	if !strings.Contains(fitted, "data-bound (high confidence)") {
		t.Errorf("the fitted report lost its verdict:\n%s", fitted)
	}
}
