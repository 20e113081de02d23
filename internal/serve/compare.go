package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/render"
)

// Comparisons read each run's compare.Summary, computed and stored when the
// run was analysed: the same figures `tracegap compare` computes from the
// traces, so the service and the command line agree. A trace stored before
// the service kept summaries (or by a tracegap whose Summary layout differs)
// is not compared: the answer (409) asks to delete it and upload it again,
// which analyses it anew under the same id. Re-analysing it on demand would
// cost a full analysis per request, outside the upload slots that bound the
// server's memory.

// comparison is one comparison of two stored traces.
type comparison struct {
	Base, New Record
	C         *compare.Comparison
}

// compare builds the comparison of ?base= and ?new=.
func (s *Server) compare(r *http.Request) (*comparison, error) {
	ids := [2]string{r.URL.Query().Get("base"), r.URL.Query().Get("new")}
	if ids[0] == "" || ids[1] == "" {
		return nil, errorf(http.StatusBadRequest, "compare needs two traces: ?base=ID&new=ID")
	}
	var recs [2]Record
	var sums [2]compare.Summary
	// A trace that is not there says so before one that cannot be compared.
	for i, id := range ids {
		var err error
		if recs[i], err = s.store.Get(r.Context(), id); err != nil {
			return nil, notFound(err, id)
		}
	}
	for i, id := range ids {
		var err error
		if sums[i], err = s.summary(r, id, "comparisons"); err != nil {
			return nil, err
		}
	}
	c := compare.Compare(sums[0], sums[1], compare.Options{})
	return &comparison{Base: recs[0], New: recs[1], C: c}, nil
}

// summary reads the stored compare.Summary of trace id, for use
// ("comparisons", "checks").
func (s *Server) summary(r *http.Request, id, use string) (compare.Summary, error) {
	var sum compare.Summary
	if err := readKept(r.Context(), id, s.store.Summary, ErrNoSummary, use, &sum); err != nil {
		return compare.Summary{}, err
	}
	if sum.Version != compare.SummaryVersion {
		return compare.Summary{}, errorf(http.StatusConflict, "trace %s was summarised by another tracegap (summary version %d, this one reads %d): delete it and upload it again",
			id, sum.Version, compare.SummaryVersion)
	}
	return sum, nil
}

// readKept decodes into v what the store kept of trace id for the named
// use (a comparison summary, check figures): get reads it, and missing is
// get's error for a trace stored before the service kept it, answered 409.
func readKept(ctx context.Context, id string, get func(context.Context, string) ([]byte, error), missing error, use string, v any) error {
	b, err := get(ctx, id)
	if errors.Is(err, missing) {
		return errorf(http.StatusConflict, "trace %s was stored before %s were kept: delete it and upload it again", id, use)
	}
	if err != nil {
		return notFound(err, id)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("trace %s: reading what was kept for %s: %w", id, use, err)
	}
	return nil
}

// handleCompare is GET /api/v1/compare?base=ID&new=ID: the
// tracegap/compare/v1 document, as `tracegap compare --format json` writes
// it.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	c, err := s.compare(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var b bytes.Buffer
	if err := render.WriteComparison(&b, c.C, render.JSON, render.Options{}); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b.Bytes())
}
