package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
)

// The page's colours, defined once and used by the timeline, the legend,
// the verdict badges, the service's pages (VerdictCSS) and the table in
// docs/reports.md (a test holds the docs to them). They are the Okabe-Ito
// palette, which readers with any common form of colour blindness can tell
// apart, with a neutral grey for untraced time.
const (
	okabeOrange    = "#E69F00"
	okabeSky       = "#56B4E9"
	okabeGreen     = "#009E73"
	okabeYellow    = "#F0E442"
	okabeBlue      = "#0072B2"
	okabeVermilion = "#D55E00"
	okabePurple    = "#CC79A7"
	neutralGrey    = "#999999"
	// stallColor is idle with the work queued: the device waited on a
	// dependency, not on the host. A dark grey sets it apart from the
	// host's causes and from untraced time.
	stallColor = "#4D4D4D"
)

// causeColors are the colours picked for causes. A cause without one
// takes the next of spareColors, in cause order: a new cause is coloured
// apart from the others without a pick, and the picked ones keep theirs.
var causeColors = map[analyze.Cause]string{
	analyze.InSync: okabeVermilion, analyze.AfterSync: okabePurple, analyze.Input: okabeOrange,
	analyze.Runtime: okabeGreen, analyze.Host: okabeYellow, analyze.Untraced: neutralGrey,
	analyze.Stall: stallColor,
}

// spareColors colour the causes that causeColors leaves out: colours of
// Paul Tol's muted scheme (for readers with colour blindness too), each at
// least 60 apart in RGB from every colour a timeline draws and from each
// other, as far as the nearest two Okabe-Ito colours here are
// (TestPaletteApart).
var spareColors = []string{"#332288", "#882255", "#999933", "#44AA99", "#117733"}

// causeColor colours each cause of idle time: its pick, else a spare;
// grey when the spares run out, which TestEveryCauseHasAColour refuses.
var causeColor = func() [analyze.NumCauses]string {
	var out [analyze.NumCauses]string
	spare := spareColors
	for _, c := range analyze.Causes() {
		col, ok := causeColors[c]
		if !ok && len(spare) > 0 {
			col, spare = spare[0], spare[1:]
		} else if !ok {
			col = neutralGrey
		}
		out[c] = col
	}
	return out
}()

const (
	// busyColor is device work.
	busyColor = okabeBlue
	// waitColor is a rank's wait in a collective for the slowest rank.
	waitColor = okabeSky
	// stepColor and stepColorAlt alternate on the step band.
	stepColor    = "#dfe6ee"
	stepColorAlt = "#c5d2e0"
)

// verdictBadge is the badge colour of each verdict: green when the device
// and host overlapped, vermilion when the device waited, grey without a
// device, dark grey when it stalled with work queued.
var verdictBadge = map[analyze.Verdict]string{
	analyze.Parallel: okabeGreen, analyze.Sequential: okabeVermilion, analyze.DataBound: okabeVermilion,
	analyze.HostBound: okabeVermilion, analyze.Stalled: stallColor, analyze.NoDevice: "#546e7a",
}

// VerdictCSS is the style of verdict badges: class "v-<verdict>" sets the
// verdict's colour as background with white text. The report and the
// service's pages share it.
func VerdictCSS() string {
	var b strings.Builder
	for _, v := range slices.Sorted(maps.Keys(verdictBadge)) {
		fmt.Fprintf(&b, ".v-%s{background:%s;color:#fff}\n", v, verdictBadge[v])
	}
	return b.String()
}
