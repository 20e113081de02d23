package cli

import (
	"fmt"
	"io"

	irun "github.com/tracegap/tracegap/internal/run"
)

// warnSkipped says on stderr which files the directories among args held
// under a trace's name but hold no trace (metrics.json beside the traces),
// which the analysis leaves out. Listing the directories again costs a
// directory read and a head of each such file: little beside the analysis.
func warnSkipped(args []string, stderr io.Writer) {
	_, skipped, err := irun.ExpandArgs(args)
	if err != nil {
		return // the analysis reports it
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "tracegap: warning: skipped %s: %s\n", safe(s.Path), safe(s.Reason))
	}
}
