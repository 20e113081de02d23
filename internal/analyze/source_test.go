package analyze

import (
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestReaderWarningsCarried: what a reader says of a trace read from bad
// input reaches the result, and a trace cut short is graded down, saying
// why. (The readers' catalogue of bad inputs, in package trace, checks
// what they say.)
func TestReaderWarningsCarried(t *testing.T) {
	const cut = "the trace was cut short and only its first part was read"
	loop := tracetest.Loop{Steps: 6, Input: 20 * msec, Dispatch: 1 * msec, Compute: 10 * msec}
	tests := []struct {
		name      string
		warnings  []string
		truncated bool
		want      Confidence
	}{
		{"whole", nil, false, High},
		{"warned", []string{"dropped 3 events with a negative duration"}, false, High},
		{"cut", []string{"truncated at byte 9000: kept 120 events"}, true, Medium},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tracetest.Build(loop.Spec())
			tr.Warnings, tr.Truncated = tt.warnings, tt.truncated
			res, err := analyzeAdvised(tr, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Source.Warnings, tt.warnings) || res.Source.Truncated != tt.truncated {
				t.Errorf("source warnings %q, truncated %v; want %q, %v", res.Source.Warnings, res.Source.Truncated, tt.warnings, tt.truncated)
			}
			if res.Verdict != DataBound || res.Confidence != tt.want {
				t.Errorf("%s (%s), want %s (%s); reasons %q", res.Verdict, res.Confidence, DataBound, tt.want, res.Reasons)
			}
			if got := slices.Contains(res.Reasons, cut); got != tt.truncated {
				t.Errorf("reasons %q: naming the cut is %v, want %v", res.Reasons, got, tt.truncated)
			}
		})
	}
}
