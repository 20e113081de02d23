package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
)

// NewAnalyzer returns the Analyzer that reads an upload with the registered
// trace readers (the caller imports them), analyses it with the engine e,
// as the command line does, and renders the v1 JSON report; the HTML
// report is rendered when first asked for (NewHTMLRenderer). e's limits
// bound the reading (its Read.MaxBytes is what refuses a gzip bomb); the
// server admits the upload by its estimated memory (Config.Estimate)
// before this runs, so e needs no Budget. The run is also summarised for
// comparisons and checks. A cancelled ctx (the client went away) stops
// reading and keeps the analysis from starting. A panic while analysing
// or rendering is returned as an error (a *run.PanicError), and the
// server goes on serving.
func NewAnalyzer(e *run.Engine, ropt render.Options) Analyzer {
	st := settingsOf(e, ropt)
	return func(ctx context.Context, u Upload) (Reports, error) {
		res, err := e.Analyze(ctx, input(u))
		if err != nil {
			return Reports{}, err
		}
		return reports(ctx, u.Name, res, st, func(w io.Writer, f render.Format) error { return render.Write(w, res, f, ropt) })
	}
}

// NewJobAnalyzer returns the JobAnalyzer that analyses the ranks of one job
// with e's AnalyzeJobInputs, as `tracegap analyze` analyses a job, under
// e's limits as NewAnalyzer does, and renders the job's JSON report
// (render.WriteJob). Comparisons and checks read the job's overall run.
func NewJobAnalyzer(e *run.Engine, ropt render.Options) JobAnalyzer {
	st := settingsOf(e, ropt)
	return func(ctx context.Context, name string, ranks []Upload) (Reports, error) {
		jr, err := e.AnalyzeJobInputs(ctx, runInputs(ranks))
		if err != nil {
			return Reports{}, err
		}
		return reports(ctx, name, &jr.Overall, st, func(w io.Writer, f render.Format) error { return render.WriteJob(w, jr, f, ropt) })
	}
}

// HTMLRenderer renders the HTML report of a stored record from its files
// (a trace's one file, a job's ranks), each read with the reader that read
// it at upload.
//
// The HTML report is rendered on first request rather than at upload: it
// costs several times the memory of the other reports and most uploads
// (from CI) are never viewed as a page. It cannot be rendered from the
// stored v1 JSON, which lacks the timelines the page draws, so the record
// is analysed again, within the same admission as an upload, and the page
// is kept: later requests read it from the store. settings are the
// Settings (JSON) the record was stored with (Reports.Settings): the page
// is analysed and rendered with them, so it shows the analysis the stored
// JSON report shows even if the server's options changed between (a
// restart with other flags). A record stored without settings (nil) is
// rendered with the server's; the page states the thresholds it used.
type HTMLRenderer func(ctx context.Context, rec Record, files []Upload, settings []byte) ([]byte, error)

// Settings are what a record's reports were made with, kept with them
// (Reports.Settings, as JSON) for the HTML report rendered later.
type Settings struct {
	// Analysis are the analysis options (thresholds, min-gap, patterns).
	Analysis analyze.Options
	// Report are the report options (the gaps listed, the steps).
	Report render.Options
}

// settingsOf returns the Settings (JSON) of reports made with e and ropt,
// or nil for options JSON cannot hold (a NaN threshold, which
// analyze.Options.Validate refuses): the page is then rendered with the
// server's options, as for a record stored before settings were kept.
func settingsOf(e *run.Engine, ropt render.Options) []byte {
	b, err := json.Marshal(Settings{Analysis: e.Analysis, Report: ropt})
	if err != nil {
		return nil
	}
	return b
}

// storedSettings returns the engine and report options to render a
// record stored with settings: e with the stored analysis options, and the
// stored report options. A field the settings lack (stored by an older
// build) keeps the server's value; nil settings keep e and ropt.
func storedSettings(e *run.Engine, ropt render.Options, settings []byte) (*run.Engine, render.Options, error) {
	if settings == nil {
		return e, ropt, nil
	}
	st := Settings{Analysis: e.Analysis, Report: ropt}
	// Unmarshal fills a slice in place: the server's own patterns must not
	// become the record's.
	st.Analysis.SyncPatterns = slices.Clone(st.Analysis.SyncPatterns)
	st.Analysis.InputPatterns = slices.Clone(st.Analysis.InputPatterns)
	if err := json.Unmarshal(settings, &st); err != nil {
		return nil, render.Options{}, fmt.Errorf("reading the stored settings: %w", err)
	}
	se := *e
	se.Analysis = st.Analysis
	return &se, st.Report, nil
}

// NewHTMLRenderer returns the HTMLRenderer that analyses with e as
// NewAnalyzer and NewJobAnalyzer do, but with the record's stored
// settings, and renders the HTML report.
func NewHTMLRenderer(e *run.Engine, ropt render.Options) HTMLRenderer {
	return func(ctx context.Context, rec Record, files []Upload, settings []byte) ([]byte, error) {
		e, ropt, err := storedSettings(e, ropt, settings)
		if err != nil {
			return nil, run.Named(rec.Name, err)
		}
		var b bytes.Buffer
		var write func() error
		if rec.Kind == KindJob {
			jr, err := e.AnalyzeJobInputs(ctx, runInputs(files))
			if err != nil {
				return nil, err
			}
			write = func() error { return render.WriteJob(&b, jr, render.HTML, ropt) }
		} else {
			res, err := e.Analyze(ctx, input(files[0]))
			if err != nil {
				return nil, err
			}
			write = func() error { return render.Write(&b, res, render.HTML, ropt) }
		}
		if err := run.Protect("rendering the HTML report", write); err != nil {
			return nil, run.Named(rec.Name, err)
		}
		return b.Bytes(), nil
	}
}

// UseEngine wires c to analyse with e, as `tracegap serve` does: uploads
// and jobs analysed into JSON reports, HTML reports rendered on first
// request, and admission by e's estimate of each upload's memory (e needs
// no Budget: the server admits). ropt renders the reports.
func (c *Config) UseEngine(e *run.Engine, ropt render.Options) {
	c.Analyze = NewAnalyzer(e, ropt)
	c.AnalyzeJob = NewJobAnalyzer(e, ropt)
	c.RenderHTML = NewHTMLRenderer(e, ropt)
	c.Estimate = func(files []Upload) int64 { return e.Need(runInputs(files)...) }
}

func input(u Upload) run.Input { return run.Input{Path: u.Path, Name: u.Name, Format: u.Format} }

func runInputs(us []Upload) []run.Input {
	ins := make([]run.Input, len(us))
	for i, u := range us {
		ins[i] = input(u)
	}
	return ins
}

// reports writes the JSON report of the run res with write, and keeps
// res's summary (which comparisons and checks read) and the settings st
// it was made with; nothing is rendered once ctx is cancelled. name names the
// upload in errors.
func reports(ctx context.Context, name string, res *analyze.Result, st []byte, write func(io.Writer, render.Format) error) (Reports, error) {
	if err := ctx.Err(); err != nil {
		return Reports{}, fmt.Errorf("%s: %w", name, err)
	}
	var js bytes.Buffer
	err := run.Protect("rendering the report", func() error {
		if err := write(&js, render.JSON); err != nil {
			return fmt.Errorf("rendering JSON report: %w", err)
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
	return Reports{
		Verdict: string(res.Verdict), Confidence: string(res.Confidence), Format: res.Source.Format,
		JSON: js.Bytes(), Summary: sum, Settings: st,
	}, nil
}
