package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/tracegap/tracegap/compare"
	"github.com/tracegap/tracegap/report"
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
		if sums[i], err = s.summary(r, id); err != nil {
			return nil, err
		}
	}
	c := compare.Compare(sums[0], sums[1], compare.Options{})
	return &comparison{Base: recs[0], New: recs[1], C: c}, nil
}

// summary reads the stored compare.Summary of trace id.
func (s *Server) summary(r *http.Request, id string) (compare.Summary, error) {
	b, err := s.store.Summary(r.Context(), id)
	if errors.Is(err, ErrNoSummary) {
		return compare.Summary{}, errorf(http.StatusConflict, "trace %s was stored before comparisons were kept: delete it and upload it again", id)
	}
	if err != nil {
		return compare.Summary{}, notFound(err, id)
	}
	var sum compare.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		return compare.Summary{}, fmt.Errorf("trace %s: reading its stored summary: %w", id, err)
	}
	if sum.Version != compare.SummaryVersion {
		return compare.Summary{}, errorf(http.StatusConflict, "trace %s was summarised by another tracegap (summary version %d, this one reads %d): delete it and upload it again",
			id, sum.Version, compare.SummaryVersion)
	}
	return sum, nil
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
	if err := report.WriteComparison(&b, c.C, report.JSON); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b.Bytes())
}
