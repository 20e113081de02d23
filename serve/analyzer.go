package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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
// comparisons. Reading stops early when ctx is
// cancelled (the client went away); an analysis, once reading is done,
// runs to its end. A panic while analysing or rendering is returned as an
// error (a *run.PanicError), and the server goes on serving.
func NewAnalyzer(e *run.Engine, ropt report.Options) Analyzer {
	return func(ctx context.Context, u Upload) (Reports, error) {
		res, err := e.Analyze(ctx, run.Input{Path: u.Path, Name: u.Name, Format: u.Format})
		if err != nil {
			return Reports{}, err
		}
		var js, page bytes.Buffer
		err = run.Protect("rendering the reports", func() error {
			if err := report.Write(&js, res, report.JSON, ropt); err != nil {
				return fmt.Errorf("rendering JSON report: %w", err)
			}
			if err := report.Write(&page, res, report.HTML, ropt); err != nil {
				return fmt.Errorf("rendering HTML report: %w", err)
			}
			return nil
		})
		if err != nil {
			return Reports{}, run.Named(u.Name, err)
		}
		sum, err := json.Marshal(compare.Summarize(res))
		if err != nil {
			return Reports{}, fmt.Errorf("%s: encoding the comparison summary: %w", u.Name, err)
		}
		return Reports{JSON: js.Bytes(), HTML: page.Bytes(), Summary: sum}, nil
	}
}
