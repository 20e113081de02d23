package report

import (
	"testing"

	"github.com/tracegap/tracegap/analyze"
)

// TestEveryCauseHasAColour: a cause added to analyze's table without a
// colour would draw invisible gaps.
func TestEveryCauseHasAColour(t *testing.T) {
	seen := map[string]analyze.Cause{}
	for _, c := range analyze.Causes() {
		col := causeColor[c]
		if col == "" {
			t.Errorf("cause %s has no colour in causeColor", c)
			continue
		}
		if o, dup := seen[col]; dup {
			t.Errorf("causes %s and %s share the colour %s", o, c, col)
		}
		seen[col] = c
	}
}
