package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// Summary returns the verdict as one sentence a person can repeat, led by
// the verdict and its confidence, e.g. "data-bound (high confidence): the
// GPU waited on the input pipeline for 31.0% of the 9 steady-state steps;
// the input pipeline takes 48.2 ms per step against 71.3 ms of GPU work".
func Summary(res *analyze.Result) string {
	return summarize(res).String()
}

// verdictLine is a run's summary in its parts, so that each report lays
// out the verdict its own way (coloured in a terminal, a badge on the HTML
// page) around the one sentence.
type verdictLine struct {
	Verdict analyze.Verdict
	// Confidence is empty when the summary does not state it: a trace
	// without device work is no-device for certain.
	Confidence analyze.Confidence
	// Sentence says why: how long the devices waited, and on what.
	Sentence string
}

// String is the summary as one line: the verdict, its confidence and the
// sentence.
func (l verdictLine) String() string {
	return l.withVerdict(string(l.Verdict))
}

// withVerdict returns the summary with v, the verdict as the report shows
// it, in the verdict's place.
func (l verdictLine) withVerdict(v string) string {
	if l.Confidence == "" {
		return v + ": " + l.Sentence
	}
	return fmt.Sprintf("%s (%s confidence): %s", v, l.Confidence, l.Sentence)
}

// afterBadge returns the summary as it goes on after a badge that shows
// the verdict: "high confidence: the GPU waited ...".
func (l verdictLine) afterBadge() string {
	if l.Confidence == "" {
		return l.Sentence
	}
	return fmt.Sprintf("%s confidence: %s", l.Confidence, l.Sentence)
}

// summarize returns res's summary in its parts.
func summarize(res *analyze.Result) verdictLine {
	if res.Verdict == analyze.NoDevice || len(res.Devices) == 0 {
		why := "the trace holds no device activity; there is nothing to attribute"
		if len(res.Reasons) > 0 {
			why = res.Reasons[0]
		}
		return verdictLine{Verdict: analyze.NoDevice, Sentence: why}
	}
	return verdictLine{Verdict: res.Verdict, Confidence: res.Confidence, Sentence: sentence(res)}
}

// sentence explains the verdict of a run with device work.
func sentence(res *analyze.Result) string {
	dev, kind, was := deviceNoun(res.Devices)
	where := windowNoun(res.Window)
	win := res.Window.Dur()
	idle := &res.Idle
	var b strings.Builder
	switch res.Verdict {
	case analyze.Parallel:
		fmt.Fprintf(&b, "%s %s busy %s of %s; no cause of idle is over its threshold (sync %s, input %s, other host work %s)",
			dev, was, human.Share(res.Utilization()), where,
			human.Share(share(idle.Sync(), win)), human.Share(share(idle.Of(analyze.Input), win)), human.Share(share(idle.HostWork(), win)))
	case analyze.Sequential:
		if idle.Of(analyze.Input) > idle.Sync() {
			fmt.Fprintf(&b, "%s waited on an input pipeline that runs inline, not overlapped with compute, for %s of %s",
				dev, human.Share(share(idle.Of(analyze.Input), win)), where)
			if in, busy, ok := res.PerStep(); ok {
				fmt.Fprintf(&b, "; loading takes %s per step against %s of %s work: fast enough, run it in the background", human.Duration(in), human.Duration(busy), kind)
			}
			break
		}
		fmt.Fprintf(&b, "%s waited on the host's blocking calls for %s of %s: %s inside a sync, %s right after one",
			dev, human.Share(share(idle.Sync(), win)), where,
			human.Share(share(idle.Of(analyze.InSync), win)), human.Share(share(idle.Of(analyze.AfterSync), win)))
	case analyze.DataBound:
		if idle.Of(analyze.Input) >= idle.Sync() {
			fmt.Fprintf(&b, "%s waited on the input pipeline for %s of %s", dev, human.Share(share(idle.Of(analyze.Input), win)), where)
		} else {
			fmt.Fprintf(&b, "%s waited on blocking calls that exposed the input pipeline for %s of %s",
				dev, human.Share(share(idle.Sync(), win)), where)
		}
		if in, busy, ok := res.PerStep(); ok && res.Loader.Background {
			// The loop's wait on the workers, not their time per batch.
			fmt.Fprintf(&b, "; the loop waits %s per step on its loader's background workers, against %s of %s work", human.Duration(in), human.Duration(busy), kind)
		} else if ok {
			fmt.Fprintf(&b, "; the input pipeline takes %s per step against %s of %s work", human.Duration(in), human.Duration(busy), kind)
		}
	case analyze.HostBound:
		if share(idle.HostWork(), win) <= res.Options.HostThreshold {
			// Untraced idle alone decided (see analyze's rule).
			fmt.Fprintf(&b, "%s waited on host time the profile does not show for %s of %s",
				dev, human.Share(share(idle.Of(analyze.Untraced), win)), where)
			break
		}
		fmt.Fprintf(&b, "%s waited on %s for %s of %s", dev, hostWorkWords(res), human.Share(share(idle.HostWork(), win)), where)
	case analyze.Stalled:
		fmt.Fprintf(&b, "%s had the work that ended its gaps already queued for %s of %s: it waited on a dependency (streams, events, collectives, graph nodes), not on the host",
			dev, human.Share(share(idle.Of(analyze.Stall), win)), where)
		if len(res.Dependencies) > 0 && res.Dependencies[0].Kind != "unknown" {
			fmt.Fprintf(&b, "; most of it %s", dependencyWords(res.Dependencies[0].Waited))
		}
	default:
		fmt.Fprintf(&b, "%s %s busy %s of %s", dev, was, human.Share(res.Utilization()), where)
	}
	return b.String()
}

// hostWorkWords names the host work a host-bound run waited on by what
// led it: blocking communication calls where those were found (the
// comm-wait finding), run-time work (compilation, module loading) where
// it outweighs the rest, else host work in general.
func hostWorkWords(res *analyze.Result) string {
	idle := &res.Idle
	switch {
	case slices.ContainsFunc(res.Findings, func(f analyze.Finding) bool { return f.ID == advice.FindCommWait }):
		return "the host's communication calls (MPI, gloo, NCCL set-up) and other host work"
	case idle.Of(analyze.Runtime) > idle.Of(analyze.Host):
		return "run-time work (compilation, module loading, allocation, warm-up) and other host work"
	}
	return "other host work (op dispatch, launches, Python, CPU ops, runtime)"
}

// deviceNoun names the devices for a sentence ("the GPU", "the 8 GPUs",
// "the 2 devices") and their kind for "of GPU work"; was is the verb that
// agrees with the noun.
func deviceNoun(devs []analyze.Device) (noun, kind, was string) {
	kind = ""
	for _, d := range devs {
		k, _, _ := strings.Cut(d.ID, ":")
		if kind != "" && k != kind {
			kind = "device"
			break
		}
		kind = k
	}
	if kind == "" {
		kind = "device"
	}
	if len(devs) == 1 {
		return "the " + kind, kind, "was"
	}
	return fmt.Sprintf("the %d %ss", len(devs), kind), kind, "were"
}

// windowNoun names the window for a sentence.
func windowNoun(w analyze.Window) string {
	switch {
	case w.Steps == 1:
		return "the only step"
	case w.Steps > 1 && w.WarmupDropped:
		return fmt.Sprintf("the %d steady-state steps", w.Steps)
	case w.Steps > 1:
		return fmt.Sprintf("the %d steps", w.Steps)
	}
	return "the traced span (no steps found)"
}

// otherReasons returns the reasons that the summary sentence does not
// already say (a no-device summary is its first reason).
func otherReasons(res *analyze.Result, l verdictLine) []string {
	var out []string
	for _, r := range res.Reasons {
		if r != l.Sentence {
			out = append(out, r)
		}
	}
	return out
}

// dependencyWords says in a few words what a stalled device waited on.
func dependencyWords(d analyze.Waited) string {
	switch d.Kind {
	case "graph":
		return fmt.Sprintf("inside CUDA graph replays (%s) on %s", d.Call, d.Stream)
	case "collective":
		return fmt.Sprintf("for the other ranks in the collective %s on %s", d.Call, d.Stream)
	case "event":
		return fmt.Sprintf("on an event %s waited on (%s)", d.Stream, d.Call)
	}
	return "on a dependency the trace does not show"
}
