package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// writeJob writes every rank of a job whose rank 3 loads its input slower
// than it computes as <dir>/rank-N.pt.trace.json (gzipped when gz).
func writeJob(t *testing.T, gz bool) string {
	t.Helper()
	dir := t.TempDir()
	job := tracetest.Job{Steps: 6, Input: []int64{200_000, 200_000, 200_000, 3_000_000}, Dispatch: 100_000,
		CollectiveDispatch: 50_000, Compute: 1_000_000, Transfer: 200_000}
	for r, s := range job.Specs() {
		var buf bytes.Buffer
		if err := tracetest.WriteChrome(&buf, s); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("rank-%d.pt.trace.json", r)
		data := buf.Bytes()
		if gz {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(data)
			zw.Close()
			name, data = name+".gz", z.Bytes()
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAnalyzeJobMode: files that name their ranks are one job by default;
// --no-job analyses them one by one; --job with --no-job is a usage error.
func TestAnalyzeJobMode(t *testing.T) {
	dir := writeJob(t, true)
	tests := []struct {
		name   string
		args   []string
		status int
		check  func(t *testing.T, out string)
	}{
		{"default", []string{"analyze", "--format", "json", dir}, exitOK, func(t *testing.T, out string) {
			var r struct {
				Verdict string
				Job     struct{ Steps []struct{ Straggler int } }
				Ranks   []struct{ Rank int }
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			if r.Verdict != "data-bound" || len(r.Ranks) != 4 || len(r.Job.Steps) != 5 || r.Job.Steps[0].Straggler != 3 {
				t.Errorf("verdict %s, %d ranks, steps %+v; want data-bound, 4 ranks, 5 steps held back by rank 3", r.Verdict, len(r.Ranks), r.Job.Steps)
			}
		}},
		{"quiet", []string{"analyze", "-q", dir}, exitOK, func(t *testing.T, out string) {
			if !strings.HasPrefix(out, dir+": job of 4 ranks: data-bound") || !strings.Contains(out, "straggler rank 3 (5 of 5 steps)") {
				t.Errorf("quiet output %q", out)
			}
		}},
		{"no job", []string{"analyze", "--no-job", "--format", "json", dir}, exitOK, func(t *testing.T, out string) {
			var rs []struct{ Verdict string }
			if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 4 || rs[0].Verdict != "parallel" || rs[3].Verdict != "data-bound" {
				t.Errorf("%v: %+v; want 4 reports, rank 0 parallel alone, rank 3 data-bound", err, rs)
			}
		}},
		{"both", []string{"analyze", "--job", "--no-job", dir}, exitUsage, nil},
		{"job of one", []string{"analyze", "--job", filepath.Join(dir, "rank-0.pt.trace.json.gz")}, exitUsage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tt.args, &stdout, &stderr); got != tt.status {
				t.Fatalf("exit %d, want %d; stderr %s", got, tt.status, stderr.String())
			}
			if tt.status != exitOK && !strings.Contains(stderr.String(), "tracegap") {
				t.Errorf("stderr %q: want one line saying what was wrong", stderr.String())
			}
			if tt.check != nil {
				tt.check(t, stdout.String())
			}
		})
	}
}

// TestJobFormatFirst: a format a job cannot be written in is refused
// before any rank is read. The ranks name themselves and are cut before
// their first event: a format a job has is refused only by their reading.
func TestJobFormatFirst(t *testing.T) {
	dir := t.TempDir()
	for r := range 2 {
		head := fmt.Sprintf(`{"distributedInfo": {"rank": %d, "world_size": 2}, "traceEvents": [{"ph": "X", "name": 7`, r)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank-%d.pt.trace.json", r)), []byte(head), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		format render.Format
		want   string
	}{
		{"csv", "tracegap analyze: a job cannot be written as csv: expected text, json, markdown or html\n"},
		{render.JSON, "tracegap: " + filepath.Join(dir, "rank-0.pt.trace.json") + ": truncated at byte 87 before any event\n" +
			"tracegap: " + filepath.Join(dir, "rank-1.pt.trace.json") + ": truncated at byte 87 before any event\n"},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			fs := pflag.NewFlagSet("analyze", pflag.ContinueOnError)
			f := &analyzeFlags{analysis: addAnalysisFlags(fs), format: "text", color: "never", jobs: 1}
			jf := addJobFlags(fs)
			if err := fs.Parse([]string{dir}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.check(fs); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			status, ok := runJob(fs.Args(), f, jf, tt.format, &stdout, &stderr)
			if !ok || status != exitUsage || stdout.Len() != 0 {
				t.Errorf("runJob = %d, %t, stdout %q; want exit %d as a job, nothing on stdout", status, ok, stdout.String(), exitUsage)
			}
			if got := stderr.String(); got != tt.want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
