package advice

import (
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
)

// TestJobStackHint: a job takes its first active rank's stack hint, says
// where the call sites are when its ranks name them, and says nothing
// without device work.
func TestJobStackHint(t *testing.T) {
	hint := stackHintFor(analyze.PyTorch, false)
	none := &analyze.Result{Verdict: analyze.NoDevice, StackHint: "never"}
	named := &analyze.Result{Verdict: analyze.HostBound}
	bare := &analyze.Result{Verdict: analyze.HostBound, StackHint: hint}
	tests := []struct {
		name  string
		ranks []*analyze.Result
		want  string
	}{
		{"no frames", []*analyze.Result{none, bare, named}, hint},
		{"frames on every rank", []*analyze.Result{named, named}, jobSitesHint},
		{"no device work", []*analyze.Result{none, nil}, ""},
	}
	for _, tt := range tests {
		if got := JobStackHint(tt.ranks); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
