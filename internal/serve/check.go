package serve

import (
	"net/http"
)

// Checks read each run's compare.Summary, taken and stored when the run was
// analysed: the figures `tracegap check` reads from the trace, so that the
// service and the command line reach the same outcomes. A trace stored
// before the service kept them is not checked (409), as for comparisons.

// checkAnswer is the GET /api/v1/traces/{id}/check answer.
type checkAnswer struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Verdict    string `json:"verdict"`
	Confidence string `json:"confidence"`
	// Failed is set when a rule failed: `tracegap check` would exit 1.
	Failed   bool          `json:"failed"`
	Outcomes []outcomeJSON `json:"outcomes"`
}

// outcomeJSON is one check.Outcome.
type outcomeJSON struct {
	Rule    string `json:"rule"`
	Figure  string `json:"figure"`
	Limit   string `json:"limit"`
	Failed  bool   `json:"failed"`
	Message string `json:"message"`
}

// handleCheck is GET /api/v1/traces/{id}/check: the server's rules (its
// --config's [check], else check's defaults), changed by query parameters
// named and written as `tracegap check`'s flags (?fail-on=sequential&
// max-idle=10%), held against the stored run.
func (s *Server) handleCheck(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rules := *s.cfg.Rules
	if err := rules.Set(r.URL.Query()); err != nil {
		s.fail(w, r, errorf(http.StatusBadRequest, "%v", err))
		return
	}
	rec, err := s.store.Get(r.Context(), id)
	if err != nil {
		s.fail(w, r, notFound(err, id))
		return
	}
	f, err := s.summary(r, id, "checks")
	if err == nil && f.Window == nil {
		err = errorf(http.StatusConflict, "trace %s was stored before checks were kept: delete it and upload it again", id)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a := checkAnswer{ID: rec.ID, Name: rec.Name, Verdict: string(f.Verdict), Confidence: string(f.Confidence), Outcomes: []outcomeJSON{}}
	for _, o := range rules.EvaluateSummary(f) {
		a.Failed = a.Failed || o.Failed
		a.Outcomes = append(a.Outcomes, outcomeJSON{Rule: o.Rule, Figure: o.Figure, Limit: o.Limit, Failed: o.Failed, Message: o.Message()})
	}
	writeJSON(w, http.StatusOK, a)
}
