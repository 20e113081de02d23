package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run/runtest"
)

// dlrmRanks returns the eight ranks of the DLRM job, rank order.
func dlrmRanks(t *testing.T) []string {
	t.Helper()
	ranks, err := filepath.Glob(filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks", "worker*.pt.trace.json.gz"))
	if err != nil || len(ranks) != 8 {
		t.Fatalf("%d DLRM ranks (%v), want 8", len(ranks), err)
	}
	return ranks
}

func TestLooksLikeJob(t *testing.T) {
	ranks := dlrmRanks(t)
	for _, tc := range []struct {
		name  string
		paths []string
		want  bool
	}{
		{"eight ranks", ranks, true},
		{"two ranks", ranks[5:7], true},
		{"one rank", ranks[:1], false},
		{"a rank twice", []string{ranks[0], ranks[1], ranks[0]}, false},
		{"a trace of no rank", []string{ranks[0], example}, false},
	} {
		if got := LooksLikeJob(tc.paths); got != tc.want {
			t.Errorf("%s: LooksLikeJob = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAnalyzeJob analyses the DLRM ranks as one job, within a budget that
// admits them together, and names every rank that cannot be read.
func TestAnalyzeJob(t *testing.T) {
	ranks := dlrmRanks(t)
	e := &Engine{Analysis: analyze.DefaultOptions(), Jobs: 3, Budget: NewBudget(1 << 30)}
	jr, err := e.AnalyzeJob(context.Background(), ranks)
	if err != nil {
		t.Fatal(err)
	}
	if len(jr.Ranks) != 8 || jr.WorldSize != 8 || jr.Overall.Verdict != analyze.HostBound {
		t.Errorf("%d ranks of %d, verdict %s; want 8 of 8, host-bound", len(jr.Ranks), jr.WorldSize, jr.Overall.Verdict)
	}
	if e.Budget.InUse() != 0 {
		t.Errorf("%d bytes of the budget still in use after the job", e.Budget.InUse())
	}

	missing := filepath.Join(t.TempDir(), "rank9.json")
	bug := writeFile(t, t.TempDir(), "bug.json", []byte(runtest.PanicMagic))
	_, err = e.AnalyzeJob(context.Background(), []string{ranks[0], missing, bug})
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], missing+": ") || !errors.Is(err, os.ErrNotExist) ||
		lines[1] != bug+": internal error while reading: "+runtest.PanicValue {
		t.Errorf("job with a missing and a panicking rank: %q, want one line naming each", lines)
	}
	// Ranks stream through their summaries: a budget of two ranks admits
	// the eight, two at a time, and the job is the same.
	e.Budget = NewBudget(fixedNeed * 2)
	small, err := e.AnalyzeJob(context.Background(), ranks)
	if err != nil {
		t.Fatalf("eight ranks in a budget of two: %v", err)
	}
	if !reflect.DeepEqual(small, jr) {
		t.Error("eight ranks in a budget of two: another result than in a budget of all")
	}
}

// TestAnalyzeJobSummaries: ranks given as their summaries, alone or with
// traces, give the job the traces give; a bad summary is named.
func TestAnalyzeJobSummaries(t *testing.T) {
	ranks := dlrmRanks(t)
	e := &Engine{Analysis: analyze.DefaultOptions(), Jobs: 2}
	want, err := e.AnalyzeJob(context.Background(), ranks)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var sums []string
	for i, p := range ranks {
		s, err := e.Summarize(context.Background(), Input{Path: p})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := job.WriteSummary(&buf, s); err != nil {
			t.Fatal(err)
		}
		sums = append(sums, writeFile(t, dir, fmt.Sprintf("rank%d.summary.json.gz", i), buf.Bytes()))
	}
	if !IsSummary(sums[0]) || IsSummary(ranks[0]) || !LooksLikeJob(sums) {
		t.Error("summaries not told from traces")
	}
	// The job is named after its inputs, the summaries' folder; the rest
	// is the traces' job.
	tests := []struct {
		name, job string
		paths     []string
	}{
		{"summaries", dir, sums},
		{"mixed", sums[0] + " and 7 more", append(slices.Clone(sums[:4]), ranks[4:]...)},
	}
	for _, tt := range tests {
		name := tt.name
		got, err := e.AnalyzeJob(context.Background(), tt.paths)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Overall.Source.Path != tt.job {
			t.Errorf("%s: job named %q, want %q", name, got.Overall.Source.Path, tt.job)
		}
		got.Overall.Source.Path = want.Overall.Source.Path
		if g, w := jobJSON(t, got), jobJSON(t, want); !bytes.Equal(g, w) {
			t.Errorf("%s: another result than the traces'", name)
		}
	}
	bad := writeFile(t, dir, "bad.summary.json", []byte(`{"format":"tracegap-rank-summary","version":3}`))
	_, err = e.AnalyzeJob(context.Background(), []string{sums[0], bad})
	if err == nil || err.Error() != bad+": summary version 3: expected version 2 (summarize the trace again with this tracegap)" {
		t.Errorf("a summary of another version: %v, want one line naming it", err)
	}
}

// jobJSON is the job's JSON report: its every figure, the ranks' gaps and
// what the host was doing in them included. (The results themselves keep
// their gaps' segments in tables whose order depends on the way they were
// built.)
func jobJSON(t *testing.T, jr *job.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := render.WriteJob(&b, jr, render.JSON, render.Options{AllSteps: true}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
