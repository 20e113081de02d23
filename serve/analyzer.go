package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/compare"
	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace"
)

// NewAnalyzer returns the Analyzer that reads an upload with the registered
// trace readers (the caller imports them), analyses it with opt, renders
// the v1 JSON and the HTML reports, and summarises the run for comparisons. read bounds the reading: its MaxBytes is
// what refuses a gzip bomb. Reading stops early when ctx is cancelled (the
// client went away); an analysis, once reading is done, runs to its end.
func NewAnalyzer(opt analyze.Options, read trace.Options, ropt report.Options) Analyzer {
	return func(ctx context.Context, u Upload) (Reports, error) {
		t, err := readUpload(ctx, u, read)
		if err != nil {
			return Reports{}, err
		}
		res, err := analyze.Analyze(t, opt)
		if err != nil {
			return Reports{}, fmt.Errorf("%s: %w", u.Name, err)
		}
		var js, page bytes.Buffer
		if err := report.Write(&js, res, report.JSON, ropt); err != nil {
			return Reports{}, fmt.Errorf("%s: rendering JSON report: %w", u.Name, err)
		}
		if err := report.Write(&page, res, report.HTML, ropt); err != nil {
			return Reports{}, fmt.Errorf("%s: rendering HTML report: %w", u.Name, err)
		}
		sum, err := json.Marshal(compare.Summarize(res))
		if err != nil {
			return Reports{}, fmt.Errorf("%s: encoding the comparison summary: %w", u.Name, err)
		}
		return Reports{JSON: js.Bytes(), HTML: page.Bytes(), Summary: sum}, nil
	}
}

// readUpload reads the stored upload as the command line reads a file, but
// names it by its display name, not by its temporary path.
func readUpload(ctx context.Context, u Upload, opt trace.Options) (*trace.Trace, error) {
	f, err := os.Open(u.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Name, err)
	}
	if u.Format != "" {
		opt.Format = u.Format
	}
	t, err := trace.Read(&ctxReader{ctx: ctx, r: f}, st.Size(), opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u.Name, err)
	}
	t.Path = u.Name
	return t, nil
}

// ctxReader fails reads once ctx is done, so that reading a large upload
// stops soon after its client has gone.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
