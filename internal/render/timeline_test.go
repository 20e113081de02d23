package render

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
)

// TestEveryCauseHasAColour: every cause has a colour of its own, picked
// or spare; one past the spares would share untraced's grey.
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

// TestPaletteApart: the colours drawn side by side on a timeline (device
// busy, collective waits, every cause and every spare a new cause would
// take) are at least 60 apart in RGB, as far as the nearest two Okabe-Ito
// colours of the palette (reddish purple and grey, 61.8).
func TestPaletteApart(t *testing.T) {
	cols := append([]string{busyColor, waitColor}, causeColor[:]...)
	for _, s := range spareColors {
		if !slices.Contains(cols, s) {
			cols = append(cols, s)
		}
	}
	rgb := func(h string) (v [3]float64) {
		for i := range v {
			n, err := strconv.ParseUint(h[1+2*i:3+2*i], 16, 8)
			if err != nil || len(h) != 7 {
				t.Fatalf("colour %q: expected #RRGGBB", h)
			}
			v[i] = float64(n)
		}
		return v
	}
	for i, a := range cols {
		for _, b := range cols[i+1:] {
			x, y := rgb(a), rgb(b)
			if d := math.Sqrt((x[0]-y[0])*(x[0]-y[0]) + (x[1]-y[1])*(x[1]-y[1]) + (x[2]-y[2])*(x[2]-y[2])); d < 60 {
				t.Errorf("colours %s and %s are %.1f apart, want 60 or more", a, b, d)
			}
		}
	}
}

// TestEveryVerdictHasABadge: a verdict added to analyze's list without a
// badge colour would print as plain text in the HTML report.
func TestEveryVerdictHasABadge(t *testing.T) {
	for _, v := range analyze.Verdicts() {
		if verdictBadge[v] == "" {
			t.Errorf("verdict %s has no colour in verdictBadge", v)
		}
	}
	if len(verdictBadge) != len(analyze.Verdicts()) {
		t.Errorf("verdictBadge colours %d verdicts, analyze lists %d", len(verdictBadge), len(analyze.Verdicts()))
	}
}
