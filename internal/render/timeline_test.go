package render

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
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

// TestDocsShowThePalette: docs/reports.md lists the colour of busy time, of
// every cause and of collective waits as the page draws them.
func TestDocsShowThePalette(t *testing.T) {
	b, err := os.ReadFile("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{"device busy": busyColor, "collective wait (jobs)": waitColor}
	for _, c := range analyze.Causes() {
		rows[c.String()] = causeColor[c]
	}
	for name, col := range rows {
		if want := fmt.Sprintf("| %s | `%s` ", name, col); !strings.Contains(string(b), want) {
			t.Errorf("docs/reports.md lacks the row %q", want)
		}
	}
}
