package advice

import (
	"fmt"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// likelyInput names the likely input share of a JAX profile taken without
// the Python tracer in a finding, when it passes the input threshold (the
// analysis gives it a reason). The verdict and the figures stay as the
// trace shows them.
func (a *adviser) likelyInput() {
	r := a.r
	share, per, ok := likelyShare(r)
	if r.Verdict == analyze.NoDevice || !ok {
		return
	}
	r.Findings = append(r.Findings, analyze.Finding{
		ID:       FindLikelyInput,
		Severity: "medium",
		Message: fmt.Sprintf("The profile has no Python frames on the loop thread %s (the Python tracer was off). The %s idles for %s of the window (%s per step) while that thread shows nothing between a step's start and its first dispatch, where a training loop gets its next batch: likely the input pipeline. It stays untraced in the figures until a profile shows it.",
			threadName(a.f.Loop), a.deviceWord(), human.Share(share), per),
		Fix: "Profile again with the Python tracer (jax.profiler.ProfileOptions() with python_tracer_level=1, passed as profiler_options to jax.profiler.start_trace) to see what fills that stretch; if it is grain's iterator, load in grain worker processes (grain_worker_count) and prefetch to the device.",
	})
	SortFindings(r.Findings)
}

// likelyShare returns the share of the window, and the time per step, in
// which a JAX loop thread profiled without the Python tracer shows
// nothing before its first dispatch (Facts.BeforeDispatch); ok when the
// share passes the input threshold.
func likelyShare(r *analyze.Result) (share float64, per string, ok bool) {
	d := r.Facts.BeforeDispatch
	share = float64(d) / float64(max(r.Window.Dur(), 1))
	per = human.Duration(d / int64(max(r.Window.Steps, 1)))
	return share, per, share > r.Options.InputThreshold
}
