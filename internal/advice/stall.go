package advice

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

const maxDepsNamed = 3

// stalledFinding says what the device waited on while it had work queued.
func (a *adviser) stalledFinding(share float64) analyze.Finding {
	r := a.r
	dev := a.deviceWord()
	var parts []string
	var calls []string
	for _, d := range r.Dependencies[:min(len(r.Dependencies), maxDepsNamed)] {
		parts = append(parts, fmt.Sprintf("%s (%s in %s)", dependencyPhrase(d.Waited), human.Duration(d.Idle), human.Count(d.Gaps, "gap")))
		if d.Call != "" {
			calls = append(calls, d.Call)
		}
	}
	if len(r.Dependencies) > maxDepsNamed {
		parts = append(parts, fmt.Sprintf("%d more", len(r.Dependencies)-maxDepsNamed))
	}
	return analyze.Finding{
		ID: FindStalledDevice,
		Message: fmt.Sprintf("The %s had the work that ended its gaps already queued, and still idled for %s, %s of the window: it waited on a dependency, not on the host. What the trace shows it waited on: %s.",
			dev, human.Duration(r.Idle.Of(analyze.Stall)), human.Share(share), strings.Join(parts, "; ")),
		Fix:   "Look at what the queued work waits on, not at the host: the events one stream waits on (cudaStreamWaitEvent) and the work on the other stream that records them, collectives waiting on slower ranks (analyse every rank's trace together: tracegap analyze --job RANK0 RANK1 ..., or the folder holding them), and the nodes inside CUDA graph replays (profile them with nsys profile --cuda-graph-trace=node). Removing host syncs or adding loader workers will not close these gaps.",
		Idle:  r.Idle.Of(analyze.Stall),
		Share: share,
		Calls: calls,
	}
}

// dependencyPhrase says what a dependency is in a few words.
func dependencyPhrase(d analyze.Waited) string {
	switch d.Kind {
	case "graph":
		return fmt.Sprintf("a node of a graph replay (%s) on %s", d.Call, d.Stream)
	case "collective":
		return fmt.Sprintf("the collective %s on %s, waiting on the other ranks", d.Call, d.Stream)
	case "event":
		return fmt.Sprintf("an event %s waited on (%s before the launch)", d.Stream, d.Call)
	}
	return fmt.Sprintf("work on %s whose dependency the trace does not show: no stream wait, graph or collective", d.Stream)
}

// syncOnStalled reports blocking calls made while the device was stalled:
// they wait on the dependency, so they are not what holds the device
// idle.
func (a *adviser) syncOnStalled(share float64) analyze.Finding {
	r := a.r
	return analyze.Finding{
		ID: FindSyncOnStalled,
		Message: fmt.Sprintf("The host blocked in %s for %s, %s of the window, while the %s was stalled with work queued: the sync waits on the same dependency, so removing it would not close the gaps.",
			a.stalledSyncCalls(), human.Duration(r.StalledInSync), human.Share(share), a.deviceWord()),
		Fix:   "Fix the dependency first (see the stalled finding); then move the sync off the step, so that the host can queue the next step's work meanwhile.",
		Idle:  r.StalledInSync,
		Share: share,
	}
}

// stalledSyncCalls names the blocking calls of the stalled segments,
// most idle first.
func (a *adviser) stalledSyncCalls() string {
	r := a.r
	by := map[string]int64{}
	for i := range r.Gaps {
		g := &r.Gaps[i]
		if g.Split.Of(analyze.Stall) == 0 {
			continue
		}
		for s := range r.Segments(g) {
			if s.Cause == analyze.Stall && s.Sync != 0 {
				by[r.CallName(s.Sync)] += s.Dur
			}
		}
	}
	names := slices.Collect(maps.Keys(by))
	slices.SortFunc(names, func(x, y string) int { return cmp.Or(cmp.Compare(by[y], by[x]), cmp.Compare(x, y)) })
	if len(names) == 0 {
		return "blocking calls"
	}
	return strings.Join(names[:min(len(names), maxDepsNamed)], ", ")
}
