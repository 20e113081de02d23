package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/realtraces"
)

// TestSummarizeTwoPhases runs a job in two phases, each rank summarized on
// its own and the summaries' directory analysed, and asserts the JSON
// report the traces give together, byte for byte; then a bad summary is
// named on one line with exit status 2.
func TestSummarizeTwoPhases(t *testing.T) {
	traces := writeJob(t, true)
	sums := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(traces, "*.json.gz"))
	for i, f := range files {
		out := filepath.Join(sums, "rank"+string(rune('0'+i))+job.SummarySuffix)
		var stdout, stderr bytes.Buffer
		if got := run([]string{"summarize", "--min-gap", "10us", f, "-o", out}, &stdout, &stderr); got != exitOK {
			t.Fatalf("summarize %s: exit %d: %s", f, got, stderr.String())
		}
	}
	report := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		status := run(append([]string{"analyze", "--format", "json"}, args...), &stdout, &stderr)
		return stdout.String(), stderr.String(), status
	}
	want, _, _ := report("--min-gap", "10us", traces)
	got, errs, status := report("--min-gap", "10us", sums)
	// The job is named after the folder given, the summaries'; the rest
	// is the report of the traces.
	named := strings.Contains(got, `"path": `+strconv.Quote(sums)+`,`)
	got = strings.ReplaceAll(got, strconv.Quote(sums), strconv.Quote(traces))
	if status != exitOK || !named || got != want || !strings.Contains(got, `"straggler": 3`) {
		t.Errorf("analyze of the summaries: exit %d, %s; named %s: %v; want the report of the traces:\n%.400s", status, errs, sums, named, got)
	}
	if _, errs, status := report(sums); status != exitUsage || !strings.Contains(errs, "summarized with other analysis options") {
		t.Errorf("summaries made with another min gap: exit %d, %q; want a refusal", status, errs)
	}
	bad := filepath.Join(sums, "rank9"+job.SummarySuffix)
	if err := os.WriteFile(bad, []byte(`{"format":"tracegap-rank-summary","version":7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, status = report("--min-gap", "10us", sums)
	if lines := strings.Split(strings.TrimSpace(errs), "\n"); status != exitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "tracegap: "+bad+": summary version 7: expected version 2") {
		t.Errorf("a bad summary: exit %d, %q; want one line naming %s", status, errs, bad)
	}
	var stdout, stderr bytes.Buffer
	if got := run([]string{"summarize", files[0]}, &stdout, &stderr); got != exitUsage || !strings.Contains(stderr.String(), "no -o given") {
		t.Errorf("summarize without -o: exit %d, %q", got, stderr.String())
	}
}

// TestSummarizeEveryTrace summarizes every shared trace file: a rank
// summary is made of each readable one (the CPU-only trace, with no device,
// once made the rule panic), and the corrupt one fails on one line, exit 2.
func TestSummarizeEveryTrace(t *testing.T) {
	for _, c := range realtraces.Sample(t) {
		path := realtraces.Path(t, c.File)
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			continue // a job's directory: each rank is summarized alone
		}
		t.Run(c.File, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run([]string{"summarize", path, "-o", filepath.Join(t.TempDir(), "s"+job.SummarySuffix)}, &stdout, &stderr)
			want := exitOK
			if slices.Contains(c.Expect, "error") {
				want = exitUsage
			}
			if got != want || want == exitUsage && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("summarize: exit %d, want %d: %s", got, want, stderr.String())
			}
		})
	}
}
