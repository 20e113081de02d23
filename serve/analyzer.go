package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/check"
	"github.com/tracegap/tracegap/compare"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/report"
)

// NewAnalyzer returns the Analyzer that reads an upload with the registered
// trace readers (the caller imports them), analyses it with the engine e,
// as the command line does, and renders the v1 JSON and the HTML reports.
// e's limits bound the reading (its Read.MaxBytes is what refuses a gzip
// bomb) and its Budget, when set, admits an upload only once its estimated
// memory fits beside the analyses running; the run is also summarised for
// comparisons and checks. Reading stops early when ctx is cancelled (the
// client went away); an analysis, once reading is done, runs to its end. A
// panic while analysing or rendering is returned as an error (a
// *run.PanicError), and the server goes on serving.
func NewAnalyzer(e *run.Engine, ropt report.Options) Analyzer {
	return func(ctx context.Context, u Upload) (Reports, error) {
		res, err := e.Analyze(ctx, run.Input{Path: u.Path, Name: u.Name, Format: u.Format})
		if err != nil {
			return Reports{}, err
		}
		return render(u.Name, res, func(w io.Writer, f report.Format) error { return report.Write(w, res, f, ropt) })
	}
}

// NewJobAnalyzer returns the JobAnalyzer that analyses the ranks of one job
// with e's AnalyzeJobInputs, as `tracegap analyze` analyses a job, under
// e's limits and budget as NewAnalyzer does, and renders the job's reports
// (report.WriteJob). Comparisons and checks read the job's overall run.
func NewJobAnalyzer(e *run.Engine, ropt report.Options) JobAnalyzer {
	return func(ctx context.Context, name string, ranks []Upload) (Reports, error) {
		ins := make([]run.Input, len(ranks))
		for i, u := range ranks {
			ins[i] = run.Input{Path: u.Path, Name: u.Name, Format: u.Format}
		}
		jr, err := e.AnalyzeJobInputs(ctx, ins)
		if err != nil {
			return Reports{}, err
		}
		return render(name, &jr.Overall, func(w io.Writer, f report.Format) error { return report.WriteJob(w, jr, f, ropt) })
	}
}

// render writes the JSON and HTML reports of the run res with write, and
// keeps res's comparison summary and check figures. name names the upload
// in errors.
func render(name string, res *analyze.Result, write func(io.Writer, report.Format) error) (Reports, error) {
	var js, page bytes.Buffer
	err := run.Protect("rendering the reports", func() error {
		if err := write(&js, report.JSON); err != nil {
			return fmt.Errorf("rendering JSON report: %w", err)
		}
		if err := write(&page, report.HTML); err != nil {
			return fmt.Errorf("rendering HTML report: %w", err)
		}
		return nil
	})
	if err != nil {
		return Reports{}, run.Named(name, err)
	}
	sum, err := json.Marshal(compare.Summarize(res))
	if err != nil {
		return Reports{}, fmt.Errorf("%s: encoding the comparison summary: %w", name, err)
	}
	fig, err := json.Marshal(check.FiguresOf(res))
	if err != nil {
		return Reports{}, fmt.Errorf("%s: encoding the check figures: %w", name, err)
	}
	return Reports{JSON: js.Bytes(), HTML: page.Bytes(), Summary: sum, Figures: fig}, nil
}
