package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
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
	// Every rank's need at once: more than a budget that admits one.
	e.Budget = NewBudget(fixedNeed * 2)
	if _, err := e.AnalyzeJob(context.Background(), ranks); err == nil || !strings.Contains(err.Error(), "more than the whole memory budget") {
		t.Errorf("eight ranks in a budget of two: %v, want a refusal", err)
	}
}
