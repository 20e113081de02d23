// Package advice writes the findings of an analysis: what its figures
// mean, what to do about them, in sentences. It reads the plain data of
// an analyze.Result, its figures and Facts, and no trace: data flows from
// the trace through analyze (attribution) to advice and then to render.
// Durations and shares are written by package human, the framework's
// terms come from tables (fixes.go, loaders.go).
package advice

import (
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/trace"
)

// adviser writes the findings of one result.
type adviser struct {
	r *analyze.Result
	f *analyze.Facts
}

// Add writes r's findings, most severe first, into r.Findings, its
// reasons (what decided the verdict, why the confidence is not high), the
// fixes of its known op costs (OpCost.Fix) and its stack hint
// (StackHint), from its figures and Facts. A result without device work
// gets no finding.
func Add(r *analyze.Result) {
	a := &adviser{r: r, f: &r.Facts}
	r.Loader.From = loaderFrom(r.Loader)
	reasons(r)
	opFix(r)
	stackHint(r)
	a.findings()
	a.likelyInput()
}

// Analyze analyses t (analyze.Analyze) and adds the findings: the one call
// for callers that report on a trace.
func Analyze(t *trace.Trace, opt analyze.Options) (*analyze.Result, error) {
	r, err := analyze.Analyze(t, opt)
	if err != nil {
		return nil, err
	}
	Add(r)
	return r, nil
}
