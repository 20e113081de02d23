package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
)

// failOnFinding fails a run with a finding of one of the kinds in
// r.FailOnFinding of high or medium severity (an info finding is a hint,
// never a failure).
func (r Rules) failOnFinding(f compare.Summary) Outcome {
	o := Outcome{Rule: "fail-on-finding", Figure: "no such finding", Limit: "no " + strings.Join(r.FailOnFinding, ",")}
	var hit []string
	for _, ff := range f.Findings {
		if slices.Contains(r.FailOnFinding, ff.ID) && ff.Severity != "info" {
			hit = append(hit, fmt.Sprintf("%s (%s, %s of idle)", ff.ID, ff.Severity, human.Duration(ff.IdleNs)))
		}
	}
	if len(hit) > 0 {
		o.Figure, o.Failed = strings.Join(hit, ", "), true
	}
	return o
}

// findingList sets a list of finding kinds, written
// "blocking-copy,forced-sync" (repeatable); the first use replaces the
// list.
type findingList struct {
	v       *[]string
	changed bool
}

func (l *findingList) String() string { return strings.Join(*l.v, ",") }

// Type names the kind of value: a list of strings, as pflag names it.
func (l *findingList) Type() string { return "stringArray" }

// Set parses a comma-separated list of finding kinds.
func (l *findingList) Set(s string) error {
	if !l.changed {
		*l.v, l.changed = nil, true
	}
	for _, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		if ids := advice.FindingIDs(); !slices.Contains(ids, id) {
			return fmt.Errorf("unknown finding kind %q: expected one of %s", id, strings.Join(ids, ", "))
		}
		*l.v = append(*l.v, id)
	}
	return nil
}
