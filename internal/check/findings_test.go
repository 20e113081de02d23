package check

import (
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
)

// TestFailOnFinding: the rule fails on a listed kind of high or medium
// severity, never on an info finding or an unlisted kind.
func TestFailOnFinding(t *testing.T) {
	res := &analyze.Result{Verdict: analyze.Sequential, Findings: []analyze.Finding{
		{ID: "blocking-copy", Severity: "medium", Idle: 277_000_000},
		{ID: "costly-op", Severity: "info", Idle: 1_000_000},
	}}
	tests := []struct {
		list   string
		failed bool
		figure string
	}{
		{"blocking-copy", true, "blocking-copy (medium, 277 ms of idle)"},
		{"costly-op", false, "no such finding"},
		{"forced-sync,slow-input", false, "no such finding"},
	}
	for _, tc := range tests {
		var r Rules
		if err := r.Set(map[string][]string{"fail-on-finding": {tc.list}}); err != nil {
			t.Fatal(err)
		}
		out := r.Evaluate(res)
		if len(out) != 1 || out[0].Rule != "fail-on-finding" || out[0].Failed != tc.failed || out[0].Figure != tc.figure {
			t.Errorf("%s: outcomes %+v, want failed %v with figure %q", tc.list, out, tc.failed, tc.figure)
		}
	}
	for _, bad := range []string{"Blocking Copy", "blocking-copies", "forced-sync,"} {
		var r Rules
		err := r.Set(map[string][]string{"fail-on-finding": {bad}})
		if err == nil || !strings.Contains(err.Error(), "expected one of forced-sync, slow-input, ") {
			t.Errorf("%q: %v; want an error listing the finding ids", bad, err)
		}
	}
}
