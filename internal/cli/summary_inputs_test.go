package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze/job"
	irun "github.com/tracegap/tracegap/internal/run"
)

// writeSummaries summarizes each rank of writeJob's job with the default
// options into a directory of its own, and copies rank 0's alone into
// another; it returns both directories and rank 0's summary in the second.
func writeSummaries(t *testing.T) (all, one, alone string) {
	t.Helper()
	traces := writeJob(t, true)
	all, one = t.TempDir(), t.TempDir()
	files, _ := filepath.Glob(filepath.Join(traces, "*.json.gz"))
	for i, f := range files {
		out := filepath.Join(all, fmt.Sprintf("rank%d%s", i, job.SummarySuffix))
		var stdout, stderr bytes.Buffer
		if got := run([]string{"summarize", f, "-o", out}, &stdout, &stderr); got != exitOK {
			t.Fatalf("summarize %s: exit %d: %s", f, got, stderr.String())
		}
	}
	data, err := os.ReadFile(filepath.Join(all, "rank0"+job.SummarySuffix))
	if err != nil {
		t.Fatal(err)
	}
	alone = filepath.Join(one, "w0"+job.SummarySuffix)
	if err := os.WriteFile(alone, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return all, one, alone
}

// TestSummaryInputs runs the commands on rank summaries as a user gives
// them: a directory of every rank's summaries is one job for check as for
// analyze; a summary alone, or with --no-job, and summaries made with
// other options are refused on one line per file naming it and saying
// what to give, exit 2. writeJob's job has 4 ranks, rank 3 the slow one.
func TestSummaryInputs(t *testing.T) {
	all, one, alone := writeSummaries(t)
	empty := t.TempDir()
	aloneErr := alone + ": " + irun.ErrSummaryAlone.Error()
	var optErrs []string
	for i := range 4 {
		optErrs = append(optErrs, filepath.Join(all, fmt.Sprintf("rank%d%s", i, job.SummarySuffix))+
			": summarized with other analysis options (min-gap: summarized with 20.0 us, asked for 50.0 us): expected both phases given the same options")
	}
	tests := []struct {
		args   []string
		status int
		stdout string // in stdout
		stderr []string
	}{
		// The job is data-bound, which check's default rules fail.
		{[]string{"check", all}, exitCheck, "FAIL " + all + ": verdict: measured data-bound", nil},
		{[]string{"check", "--job", all + "/"}, exitCheck, "FAIL " + all + ": verdict: measured data-bound", nil},
		{[]string{"analyze", "-q", all}, exitOK, ": job of 4 ranks: data-bound", nil},
		{[]string{"analyze", alone}, exitUsage, "", []string{"tracegap: " + aloneErr}},
		{[]string{"analyze", one}, exitUsage, "", []string{"tracegap: " + aloneErr}},
		{[]string{"check", alone}, exitUsage, "", []string{"ERROR " + aloneErr}},
		{[]string{"analyze", "--no-job", one}, exitUsage, "", []string{"tracegap: " + aloneErr}},
		{[]string{"check", "--no-job", one}, exitUsage, "", []string{"ERROR " + aloneErr}},
		{[]string{"analyze", "--min-gap", "50us", all}, exitUsage, "", prefixed("tracegap: ", optErrs)},
		{[]string{"check", "--min-gap", "50us", all}, exitUsage, "", prefixed("ERROR ", optErrs)},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := run(tt.args, &stdout, &stderr)
			var errs []string
			if s := strings.TrimSpace(stderr.String()); s != "" {
				errs = strings.Split(s, "\n")
			}
			if status != tt.status || !strings.Contains(stdout.String(), tt.stdout) || strings.Join(errs, "\n") != strings.Join(tt.stderr, "\n") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stdout with %q, stderr:\n%s",
					status, stdout.String(), stderr.String(), tt.status, tt.stdout, strings.Join(tt.stderr, "\n"))
			}
		})
	}
	t.Run("empty directory", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		status := run([]string{"check", empty}, &stdout, &stderr)
		if status != exitUsage || !strings.Contains(stderr.String(), "*"+job.SummarySuffix+" (rank summaries)") {
			t.Errorf("check of an empty directory: exit %d, %q; want exit 2 listing *%s among the files expected", status, stderr.String(), job.SummarySuffix)
		}
	})
}

func prefixed(prefix string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}
