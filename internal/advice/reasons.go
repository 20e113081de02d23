package advice

import (
	"fmt"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// reasons writes r.Reasons from its Decision and Grounds: what decided the
// verdict, why the confidence is not high, the erratic-loader signature
// and the likely input of a JAX profile without the Python tracer; for a
// trace without device work, what it still shows.
func reasons(r *analyze.Result) {
	g := &r.Facts.Grounds
	if r.Verdict == analyze.NoDevice {
		r.Reasons = noDeviceReasons(g)
		return
	}
	rs := append([]string{DecisionSentence(&r.Facts.Decision)}, confidenceReasons(g)...)
	if st := r.Stability(); st.Loader != nil {
		rs = append(rs, loaderSentence(st.Loader))
	}
	if s := likelyInputReason(r); s != "" {
		rs = append(rs, s)
	}
	r.Reasons = rs
}

// noDeviceReasons say what a trace without device work holds.
func noDeviceReasons(g *analyze.Grounds) []string {
	rs := []string{"the trace holds no device activity (no kernels, copies or device ops): nothing to attribute"}
	if g.HostEvents > 0 {
		rs[0] = fmt.Sprintf("the trace holds %s but no device activity (no kernels, copies or device ops): nothing to attribute", human.Count(g.HostEvents, "host event"))
	}
	if s := g.HostSteps; s != nil {
		n := int64(s.N)
		msg := fmt.Sprintf("host only: %s (%s) of %s on average", human.Count(s.N, "step"), s.Source, human.Duration(s.Dur/n))
		if s.Input == 0 {
			msg += "; no input pipeline event in them"
		} else {
			msg += fmt.Sprintf("; the input pipeline takes %s of each, %s of the steps' time", human.Duration(s.Input/n), human.Share(float64(s.Input)/float64(max(s.Dur, 1))))
		}
		rs = append(rs, msg)
	}
	if g.Truncated {
		rs = append(rs, "the trace file was cut short and only its first part was read: the device activity may be in the part that is missing (profilers write device events after host events)")
	}
	if g.Invalid {
		rs = append(rs, "the trace file holds invalid data part-way and only the part before it was read: the device activity may be in the part after it (profilers write device events after host events)")
	}
	return rs
}

// confidenceReasons say why the confidence of a run is not high.
func confidenceReasons(g *analyze.Grounds) []string {
	var rs []string
	switch {
	case g.NoSteps:
		rs = append(rs, "no step markers found: the window is the devices' whole span, warm-up and tail included")
	case g.FewSteps > 0:
		rs = append(rs, fmt.Sprintf("only %s in the window: too few to tell a steady state", human.Count(g.FewSteps, "step")))
	}
	if g.MostlyUntraced {
		rs = append(rs, fmt.Sprintf("the largest share of device idle (%s) falls where the waited-for host thread shows no event: it was not traced", human.Duration(g.Untraced)))
	}
	if g.Truncated {
		rs = append(rs, "the trace was cut short and only its first part was read")
	}
	if g.Invalid {
		rs = append(rs, "the trace holds invalid data part-way and only the part before it was read")
	}
	if g.Unlinked > 0 {
		rs = append(rs, fmt.Sprintf("%d of %d pieces of device work link to no dispatch (no launch link, no XProf flow from a program's run): each step holds the work that started after its dispatch returned, which is wrong where the host ran several steps ahead", g.Unlinked, g.Work))
	}
	if g.Warmup {
		rs = append(rs, fmt.Sprintf("the window holds warm-up the step markers did not exclude: %s of device idle in %s (first launches, module loading, allocator growth)",
			human.Duration(g.WarmupIdle), strings.Join(g.WarmupNames, ", ")))
	}
	if g.FewLinks {
		rs = append(rs, fmt.Sprintf("only %d of %d pieces of device work link back to a host launch: the waited-for thread is a best guess", g.Linked, g.LinkWork))
	}
	return rs
}

// likelyInputReason names the likely input share of a JAX profile taken
// without the Python tracer, when it passes the input threshold; "" when
// it does not (see likelyInput, its finding).
func likelyInputReason(r *analyze.Result) string {
	share, per, ok := likelyShare(r)
	if !ok {
		return ""
	}
	return fmt.Sprintf("likely the input pipeline: the loop thread (%s) shows nothing from the step's start to its first dispatch, where a training loop gets its batch; %s of the window (%s per step) of untraced idle falls there",
		threadName(r.Facts.Loop), human.Share(share), per)
}

// loaderSentence describes the erratic-loader signature; empty without it.
func loaderSentence(l *analyze.ErraticLoader) string {
	if l == nil {
		return ""
	}
	s := "the step times are erratic: "
	if l.Wait > 0 {
		s += fmt.Sprintf("a long input wait (%s) every %s, the steps between fed at once", human.Duration(l.Wait), human.Count(l.Period, "step"))
	} else {
		s += fmt.Sprintf("near-zero steps among long ones, a long step about every %s", human.Count(l.Period, "step"))
	}
	s += ": a loader that cannot keep up, its prefetch buffer hiding it part of the time"
	if l.Batch > 0 && l.Compute > 0 {
		s += fmt.Sprintf(" (it delivers a batch every %s against %s of compute per step)", human.Duration(l.Batch), human.Duration(l.Compute))
	}
	return s
}
