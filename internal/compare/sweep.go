package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/tracegap/tracegap/internal/human"
)

// Sweep is N runs of one job that differ in one setting (loader workers,
// prefetch depth, batch size), side by side: where more of the setting
// stops helping. Compare is the two-run case, figure by figure.
type Sweep struct {
	// Setting names what the runs differ in ("k", "num_workers"); empty
	// when the labels do not say.
	Setting string `json:"setting"`
	// Runs are in order of their settings when every label is a number,
	// else in the order given.
	Runs []SweepRun `json:"runs"`
	// Best is the index in Runs of the run with the shortest step time.
	Best int `json:"best"`
	// Knee is the index in Runs of the fewest of the setting within
	// Tolerance of the best step time; -1 when the labels are not all
	// numbers.
	Knee      int     `json:"knee"`
	Tolerance float64 `json:"tolerance"`
	// Recommendation says in a sentence what to set and why.
	Recommendation string `json:"recommendation"`
}

// SweepRun is one run of a sweep.
type SweepRun struct {
	// Label is the run's setting as the user gave it or the trace read.
	Label string `json:"label"`
	// Value is Label as a number; NaN when it is not one.
	Value   float64 `json:"-"`
	Summary Summary `json:"summary"`
}

// DefaultTolerance is how much slower than the best step time a run may be
// and still count as at the plateau.
const DefaultTolerance = 0.05

// NewSweep orders runs by their setting and finds the best run, the knee
// and the recommendation. tolerance <= 0 means DefaultTolerance.
func NewSweep(setting string, runs []SweepRun, tolerance float64) (*Sweep, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("sweep: no runs: expected two or more")
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	s := &Sweep{Setting: setting, Runs: slices.Clone(runs), Knee: -1, Tolerance: tolerance}
	numeric := true
	for i := range s.Runs {
		v, err := strconv.ParseFloat(s.Runs[i].Label, 64)
		if err != nil || math.IsNaN(v) {
			v, numeric = math.NaN(), false
		}
		s.Runs[i].Value = v
	}
	if numeric {
		slices.SortStableFunc(s.Runs, func(x, y SweepRun) int { return cmp.Compare(x.Value, y.Value) })
	}
	for i := range s.Runs {
		if s.Runs[i].Summary.StepTime < s.Runs[s.Best].Summary.StepTime {
			s.Best = i
		}
	}
	if numeric {
		limit := float64(s.Runs[s.Best].Summary.StepTime) * (1 + tolerance)
		s.Knee = slices.IndexFunc(s.Runs, func(r SweepRun) bool { return float64(r.Summary.StepTime) <= limit })
	}
	s.Recommendation = s.recommend()
	return s, nil
}

// recommend says what to set: the knee, and what it costs to go below it.
func (s *Sweep) recommend() string {
	best := &s.Runs[s.Best]
	name := s.Setting
	if s.Knee < 0 {
		return fmt.Sprintf("The fastest run is %s (%s per step); its labels are not numbers, so no knee is found.", best.Label, human.Duration(best.Summary.StepTime))
	}
	if name == "" {
		name = "setting"
	}
	k := &s.Runs[s.Knee]
	msg := fmt.Sprintf("%s = %s: the fewest within %.0f%% of the best step time (%s at %s = %s); %s per step there.",
		name, k.Label, 100*s.Tolerance, human.Duration(best.Summary.StepTime), name, best.Label, human.Duration(k.Summary.StepTime))
	if s.Knee > 0 {
		lo := &s.Runs[s.Knee-1]
		msg += fmt.Sprintf(" Below it, %s = %s takes %s per step (%s).", name, lo.Label, human.Duration(lo.Summary.StepTime), lo.Summary.Stability)
	}
	if s.Knee < len(s.Runs)-1 {
		msg += fmt.Sprintf(" More than %s gains less than %.0f%%.", k.Label, 100*s.Tolerance)
	}
	if st := k.Summary.Stability; st != "" && st != "stable" {
		msg += fmt.Sprintf(" The knee's steps are %s: a little more headroom may steady them.", st)
	}
	return msg
}
