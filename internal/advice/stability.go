package advice

import (
	"fmt"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// StabilitySentence says the stability of the step times in a line: the
// label and the figures.
func StabilitySentence(st *analyze.Stability) string {
	if st.Steps == 0 {
		return "no steps"
	}
	if st.Label == analyze.TooFewSteps {
		return fmt.Sprintf("not graded, %s only: median %s, max %s", human.Count(st.Steps, "step"), human.Duration(st.Median), human.Duration(st.Max))
	}
	s := fmt.Sprintf("%s: median %s, p90 %s, max %s, spread %s over %s",
		st.Label, human.Duration(st.Median), human.Duration(st.P90), human.Duration(st.Max), human.Share(st.Spread), human.Count(st.Steps, "step"))
	if n := len(st.Slow); n > 0 {
		s += fmt.Sprintf("; %s over %.1fx the median", human.Count(n, "step"), analyze.SlowFactor)
	}
	return s
}
