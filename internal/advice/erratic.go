package advice

import (
	"fmt"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// erraticFinding is the finding of the erratic-loader signature, nil
// without it.
func (a *adviser) erraticFinding() *analyze.Finding {
	st := a.r.Stability()
	if st.Loader == nil {
		return nil
	}
	l := st.Loader
	msg := Capitalize(loaderSentence(l)) + "."
	if w := a.r.Loader; w.Workers > 0 {
		msg += fmt.Sprintf(" The trace shows %s (%s).", human.Count(w.Workers, "loader worker"), w.From)
	}
	return &analyze.Finding{
		ID:      FindErraticLoader,
		Message: msg,
		Fix:     a.workerFix("Add loader workers until the loop stops waiting on them, and prefetch to the device; more workers stop helping once loading keeps up with compute (tracegap sweep over a few counts shows where)."),
	}
}
