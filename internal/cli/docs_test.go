package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
)

// Examples of tracegap's output in the docs are checked against the tool:
// a fenced block right after a line
//
//	<!-- example: analyze testdata/example.pt.trace.json.gz -->
//
// shows what `tracegap analyze testdata/example.pt.trace.json.gz`, run from
// the repository root, prints; `<!-- example in ../shared/traces: ... -->`
// runs it in that directory (from the root). A first line "$ tracegap
// ARGS" is the command itself. A line "..." stands for any lines, and
// "..." inside a line for any text; every other character must be the
// tool's. `go test ./internal/cli -run TestDocExamples -update` rewrites
// the lines that no longer match with the tool's, keeping the elisions.

// exampleMarker introduces a checked example.
var exampleMarker = regexp.MustCompile(`^<!-- example(?: in (\S+))?: (.+) -->$`)

// docFiles are the files whose examples are checked, from the root.
var docFiles = []string{"README.md", "docs/*.md"}

func TestDocExamples(t *testing.T) {
	realtraces.Dir(t) // examples read the shared traces: skip without them
	t.Setenv("COLUMNS", "")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	n := 0
	for _, pattern := range docFiles {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			n += checkDocExamples(t, f)
		}
	}
	if n < 3 {
		t.Errorf("%d doc examples checked: the markers are gone", n)
	}
}

// checkDocExamples checks (or, with -update, rewrites) the examples of
// one file and returns how many it holds. An example without a "..." line
// is the whole output, which -update writes anew; an excerpt is checked
// line by line and, when -update finds a line changed, rewritten at that
// line, its elisions kept (an excerpt whose runs no longer match anywhere
// is left to be edited by hand).
func checkDocExamples(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	n, changed := 0, false
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		m := exampleMarker.FindStringSubmatch(lines[i])
		if m == nil || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			continue
		}
		end := i + 2
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		n++
		block := lines[i+2 : end]
		var cmd []string
		if len(block) > 0 && strings.HasPrefix(block[0], "$ ") {
			if block[0] != "$ tracegap "+m[2] {
				t.Errorf("%s:%d: the example shows `%s` but runs `tracegap %s`", path, i+3, block[0], m[2])
			}
			cmd, block = block[:1], block[1:]
		}
		got := exampleOutput(t, m[1], m[2])
		fixed, ok := matchExample(block, got)
		switch {
		case ok:
		case *update:
			changed = true
		default:
			t.Errorf("%s:%d: the example of `tracegap %s` no longer matches the tool (run with -update to rewrite it):\nexample:\n%s\ntool:\n%s",
				path, i+1, m[2], strings.Join(block, "\n"), strings.Join(got, "\n"))
		}
		if *update && !ok {
			block = fixed
		}
		out = append(out, lines[i+1])
		out = append(append(out, cmd...), block...)
		i = end - 1
	}
	if changed {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// exampleOutput runs tracegap with args in dir (relative to the root,
// which is the working directory; "" for the root) and returns its lines.
func exampleOutput(t *testing.T, dir, args string) []string {
	t.Helper()
	if dir != "" {
		root, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chdir(dir); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(root)
	}
	_, out, stderr := runCmd(strings.Fields(args)...)
	return strings.Split(strings.TrimRight(out+stderr, "\n"), "\n")
}

// matchExample reports whether the example lines match the output got.
// Without a "..." line the example is the whole output, and the fix is
// the output. Else each run of lines between "..." lines matches
// consecutive output lines, the runs in order, anywhere in the output;
// the fix replaces the lines of a run that changed, where the run's first
// line still matches.
func matchExample(example, got []string) ([]string, bool) {
	if !slices.Contains(example, "...") {
		return got, slices.Equal(example, got)
	}
	fixed := slices.Clone(example)
	ok, j := true, 0
	for k := 0; k < len(example); {
		if example[k] == "..." {
			k++
			continue
		}
		end := k
		for end < len(example) && example[end] != "..." {
			end++
		}
		start := j
		for start < len(got) && !lineMatches(example[k], got[start]) {
			start++
		}
		if start+end-k > len(got) {
			return fixed, false
		}
		for ; k < end; k, start = k+1, start+1 {
			if !lineMatches(example[k], got[start]) {
				ok, fixed[k] = false, got[start]
			}
		}
		j = start
	}
	return fixed, ok
}

// lineMatches reports whether an example line matches an output line,
// "..." in it standing for any text.
func lineMatches(example, got string) bool {
	parts := strings.Split(example, "...")
	if len(parts) == 1 {
		return example == got
	}
	last := parts[len(parts)-1]
	if !strings.HasPrefix(got, parts[0]) || !strings.HasSuffix(got, last) || len(got) < len(parts[0])+len(last) {
		return false
	}
	rest := got[len(parts[0]) : len(got)-len(last)]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}
