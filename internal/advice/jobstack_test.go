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

// TestStackHintWithPrograms: frames all in library code give the hint
// that no line can be named, unless a sync's site names the program it
// waited on: then the hint says what that site is and that the calls' own
// lines are what is missing.
func TestStackHintWithPrograms(t *testing.T) {
	for _, tt := range []struct {
		name  string
		sites []analyze.CallSite
		want  string
	}{
		{"no program", []analyze.CallSite{{}}, stackHintFor(analyze.JAX, true)},
		{"a program", []analyze.CallSite{{}, {Program: analyze.ProgramLine{Name: "jit_step", File: "/w/train.py", Line: 23}}}, programsHint},
	} {
		r := &analyze.Result{Verdict: analyze.Sequential, Framework: analyze.JAX, CallSites: tt.sites}
		r.Facts.HasFrames, r.Facts.CallFrames = true, true
		if stackHint(r); r.StackHint != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, r.StackHint, tt.want)
		}
	}
}
