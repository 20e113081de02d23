package compare

import (
	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
)

// Synthetic is the synthetic-data test: a run fed synthetic data (no input
// pipeline) gives the step time the real run should reach. If the real
// run's input fits inside the compute and its step is still slower, the
// verdict rule tells why from the new run's idle: where its devices wait on
// input more than on syncs, the input pipeline is still the cause (an inline
// loader not overlapped with compute, or background workers the loop waits
// on); otherwise a forced synchronization is the likely cause. The test
// concludes on input only where the new run's input can be seen in its
// trace; otherwise it says why not (InputUnseen).
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
	// NewInputIdle is the new run's device idle per step on input, and
	// NewSyncIdle on syncs (in-sync and after-sync).
	NewInputIdle int64
	NewSyncIdle  int64
	// InputFinding is the new run's analysis's finding on its input
	// idle (Summary.InputFinding); it decides InlineInput.
	InputFinding *InputFinding
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
	// compute, or it fits but the slower new run's devices wait on
	// background loader workers more than on syncs; the input pipeline is
	// the bottleneck.
	InputBound Outcome = "input-bound"
	// KeepsUp: the input fits and the new run reaches the target.
	KeepsUp Outcome = "keeps-up"
	// InlineInput: the input fits, yet the new run is slower than the
	// target, and its devices wait on input more than on syncs: its
	// loader runs inline, fast enough but not overlapped with compute
	// (the verdict rule's sequential case, the inline-input finding).
	InlineInput Outcome = advice.FindInlineInput
	// SyncBound: the input fits, yet the new run is slower than the
	// target, not from waiting on input; a forced synchronization is the
	// likely cause.
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
		NewInputIdle: n.IdleOf(analyze.Input.String()).PerStep,
		NewSyncIdle:  n.IdleOf(analyze.InSync.String()).PerStep + n.IdleOf(analyze.AfterSync.String()).PerStep,
		InputFinding: n.InputFinding,
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
	case s.Slower && s.waitsOnInput():
		// The verdict rule: input idle is sequential for an inline
		// loader that fits inside compute, data-bound for workers.
		s.Outcome = InputBound
		if s.InputFinding.ID == findingInlineInput {
			s.Outcome = InlineInput
		}
	case s.Slower:
		s.Outcome = SyncBound
	default:
		s.Outcome = KeepsUp
	}
	return s
}

// waitsOnInput reports whether the new run's devices wait on input more
// than on syncs, with the analysis's finding on that input to say why.
func (s *Synthetic) waitsOnInput() bool {
	return s.InputFinding != nil && s.NewInputIdle > 0 && s.NewInputIdle >= s.NewSyncIdle
}
