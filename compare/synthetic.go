package compare

import "github.com/tracegap/tracegap/analyze"

// Synthetic is the synthetic-data test: a run fed synthetic data (no input
// pipeline) gives the step time the real run should reach. If the real
// run's input fits inside the compute and its step is still slower, the
// input pipeline is not the bottleneck, and a forced synchronization is the
// likely cause. The test concludes on input only where the new run's input
// can be seen in its trace; otherwise it says why not (InputUnseen).
type Synthetic struct {
	// Forced is set when the caller declared the base synthetic rather
	// than it being detected.
	Forced bool
	// Target is the base step time; BaseCompute the base device busy
	// time per step; NewStep and NewInput the new run's step time and
	// input time per step (ns).
	Target      int64
	BaseCompute int64
	NewStep     int64
	NewInput    int64
	// NewSync is the new run's time in blocking calls per step, and
	// NewAfterSync its device idle per step right after they return.
	NewSync      int64
	NewAfterSync int64
	// InputFits is NewInput < BaseCompute, where the new run's input
	// can be seen (false when it cannot).
	InputFits bool
	// InputUnseen says why the new run's input time cannot be seen in
	// its trace (Summary.InputUnseen); empty when it can.
	InputUnseen string
	// Slower is set when NewStep exceeds Target by more than the
	// tolerance (Options.Tolerance).
	Slower bool
	// Outcome is what the test shows.
	Outcome Outcome
	// Syncs are the blocking calls found in the new run's gaps, most
	// time first.
	Syncs []SyncSite
}

// Outcome is the conclusion of the synthetic-data test.
type Outcome string

// The outcomes.
const (
	// InputBound: the new run's input is longer than the synthetic run's
	// compute; the input pipeline is the bottleneck.
	InputBound Outcome = "input-bound"
	// KeepsUp: the input fits and the new run reaches the target.
	KeepsUp Outcome = "keeps-up"
	// SyncBound: the input fits, yet the new run is slower than the
	// target; a forced synchronization is the likely cause.
	SyncBound Outcome = "sync-bound"
	// InputUnseen: the new run's input time cannot be seen, so the test
	// cannot tell input from a sync. Without --synthetic-base it cannot
	// even tell the base was synthetic: neither run shows input.
	InputUnseen Outcome = "input-unseen"
)

// syntheticInputShare is the input time per step, as a share of the step,
// below which a base counts as fed with synthetic data: such a run has no
// input events at all, so anything more than a trace of them (a pattern
// matching one stray event) means a real pipeline.
const syntheticInputShare = 0.005

func (s *Summary) synthetic() bool {
	return s.Verdict != analyze.NoDevice && s.StepTime > 0 &&
		float64(s.Input) <= syntheticInputShare*float64(s.StepTime) &&
		s.IdleOf(analyze.Input.String()).Share <= syntheticInputShare
}

func syntheticTest(b, n *Summary, opt Options) *Synthetic {
	s := &Synthetic{
		Forced:       opt.SyntheticBase,
		Target:       b.StepTime,
		BaseCompute:  b.DeviceBusy,
		NewStep:      n.StepTime,
		NewInput:     n.Input,
		NewSync:      n.Sync,
		NewAfterSync: n.IdleOf(analyze.AfterSync.String()).PerStep,
		Syncs:        n.Syncs,
		InputUnseen:  n.InputUnseen,
	}
	s.InputFits = s.InputUnseen == "" && s.NewInput < s.BaseCompute
	s.Slower = float64(s.NewStep) > float64(s.Target)*(1+opt.Tolerance)
	switch {
	case s.InputUnseen != "" && (s.Slower || !s.Forced):
		// Reaching a declared synthetic target needs no input figure;
		// anything else does.
		s.Outcome = InputUnseen
	case !s.InputFits && s.InputUnseen == "":
		s.Outcome = InputBound
	case s.Slower:
		s.Outcome = SyncBound
	default:
		s.Outcome = KeepsUp
	}
	return s
}
