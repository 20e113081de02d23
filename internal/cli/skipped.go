package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/tracegap/tracegap/trace"
)

// warnSkipped says on stderr which files the directories among args held
// under a trace's name but hold no trace (metrics.json beside the traces),
// which the analysis leaves out. Listing the directories again costs a
// directory read and a head of each such file: little beside the analysis.
func warnSkipped(args []string, stderr io.Writer) {
	_, skipped, err := trace.ExpandSkipping(args)
	if err != nil {
		return // the analysis reports it
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "tracegap: warning: skipped %s: %s\n", printable(s.Path), s.Reason)
	}
}

// printable replaces the characters of a file name that would drive a
// terminal or a CI log.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
}
