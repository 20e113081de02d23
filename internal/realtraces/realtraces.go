// Package realtraces finds, for tests, the real traces that live beside
// the checkout in ../shared/traces (they are never copied into the
// project), and reads the experts' verdicts for them from expected.tsv.
//
// Where the directory is missing a test that needs it is skipped, except
// when the CI environment variable is set: CI has the traces beside its
// checkout, so there a missing directory fails the test rather than
// letting a run pass by skipping what it was meant to check.
package realtraces

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Dir returns the directory of the real traces.
func Dir(t testing.TB) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "..", "shared", "traces")
	if _, err := os.Stat(filepath.Join(dir, "expected.tsv")); err != nil {
		missing(t, err)
	}
	return dir
}

// Path returns the path of the real trace called name.
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir(t), name)
	if _, err := os.Stat(p); err != nil {
		missing(t, err)
	}
	return p
}

// Case is one row of expected.tsv.
type Case struct {
	// File is the trace's name in Dir.
	File string
	// Expect lists the verdicts an expert accepts; "error" means reading
	// the trace must fail.
	Expect []string
	// Why is the expert's reasoning.
	Why string
}

// Expected returns the rows of expected.tsv, in file order.
func Expected(t testing.TB) []Case {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(t), "expected.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := parse(string(b))
	if err != nil {
		t.Fatalf("expected.tsv: %v", err)
	}
	return cases
}

// Sample returns the rows of expected.tsv for a test that puts each trace
// through a whole command: all of them, or under -short the smallest trace
// of each format (by its file name's suffix) among those that read, and
// the smallest of each that must fail to. Every trace's verdict is checked
// in either mode by analyze's TestRealTraces.
func Sample(t testing.TB) []Case {
	t.Helper()
	cases := Expected(t)
	if !testing.Short() {
		return cases
	}
	smallest := map[string]Case{}
	size := map[string]int64{}
	var keys []string
	for _, c := range cases {
		st, err := os.Stat(filepath.Join(Dir(t), c.File))
		if err != nil || st.IsDir() {
			continue
		}
		key := filepath.Ext(strings.TrimSuffix(c.File, ".gz")) + " " + strconv.FormatBool(slices.Contains(c.Expect, "error"))
		if n, ok := size[key]; !ok {
			keys = append(keys, key)
		} else if n <= st.Size() {
			continue
		}
		smallest[key], size[key] = c, st.Size()
	}
	out := make([]Case, len(keys))
	for i, k := range keys {
		out[i] = smallest[k]
	}
	return out
}

// Sets are the subdirectories of Dir with their own expected.tsv: traces
// of a format whose reader the others' tests must not depend on.
var Sets = []string{"nsight"}

// ExpectedIn returns the rows of the expected.tsv in the subdirectory set
// of Dir, each File named relative to Dir ("nsight/x.sqlite").
func ExpectedIn(t testing.TB, set string) []Case {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(t), set, "expected.tsv"))
	if err != nil {
		missing(t, err)
	}
	cases, err := parse(string(b))
	if err != nil {
		t.Fatalf("%s/expected.tsv: %v", set, err)
	}
	for i := range cases {
		cases[i].File = filepath.Join(set, cases[i].File)
	}
	return cases
}

// All returns the rows of expected.tsv and of every set's.
func All(t testing.TB) []Case {
	t.Helper()
	cases := Expected(t)
	for _, set := range Sets {
		cases = append(cases, ExpectedIn(t, set)...)
	}
	return cases
}

// parse reads expected.tsv: a header line, then file, verdicts separated
// by "|", and why, separated by tabs.
func parse(s string) ([]Case, error) {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "file\t") {
		return nil, fmt.Errorf("want a header line starting %q and at least one row", "file\t")
	}
	var cases []Case
	for i, line := range lines[1:] {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 2 || f[0] == "" || f[1] == "" {
			return nil, fmt.Errorf("line %d: %q: want file, verdicts and why separated by tabs", i+2, line)
		}
		c := Case{File: f[0], Expect: strings.Split(f[1], "|")}
		if len(f) == 3 {
			c.Why = f[2]
		}
		cases = append(cases, c)
	}
	return cases, nil
}

func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("real traces missing under CI (expected ../shared/traces beside the checkout): %v", err)
	}
	t.Skipf("real traces not available: %v", err)
}

// moduleRoot returns the directory holding go.mod above the working
// directory (a test runs in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}
