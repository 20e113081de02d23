package advice

import (
	"cmp"
	"slices"

	"github.com/tracegap/tracegap/internal/analyze"
)

// The finding ids, stable across versions, for scripts and
// --fail-on-finding. Code names a finding by its constant; findingKinds
// lists them all.
const (
	FindForcedSync     = "forced-sync"
	FindSlowInput      = "slow-input"
	FindInlineInput    = "inline-input"
	FindDispatch       = "dispatch-overhead"
	FindCommWait       = "comm-wait"
	FindRuntimeWork    = "runtime-work"
	FindUntracedThread = "untraced-thread"
	FindStalledDevice  = "stalled-device"
	FindSyncOnStalled  = "sync-on-stalled"
	FindLikelyInput    = "likely-input"
	FindErraticLoader  = "erratic-loader"
	FindBlockingCopy   = "blocking-copy"
	FindCostlyOp       = "costly-op"
	// A job's own findings (internal/advice/jobadvice).
	FindStraggler      = "straggler"
	FindCollectiveWait = "collective-wait"
	FindLoadImbalance  = "load-imbalance"
	FindStepSpread     = "step-spread"
	FindClockAlignment = "clock-alignment"
)

// findingKinds is every finding id, in the order docs list them, with the
// verdict whose fix it gives ("" for none): Finding.Verdict.
var findingKinds = []struct {
	id      string
	verdict analyze.Verdict
}{
	{FindForcedSync, analyze.Sequential}, {FindSlowInput, analyze.DataBound}, {FindInlineInput, analyze.Sequential},
	{FindDispatch, analyze.HostBound}, {FindCommWait, analyze.HostBound}, {FindRuntimeWork, analyze.HostBound}, {FindUntracedThread, ""},
	{FindStalledDevice, analyze.Stalled}, {FindSyncOnStalled, ""}, {FindLikelyInput, ""},
	{FindErraticLoader, ""}, {FindBlockingCopy, ""}, {FindCostlyOp, ""},
	{FindStraggler, ""}, {FindCollectiveWait, ""}, {FindLoadImbalance, ""},
	{FindStepSpread, ""}, {FindClockAlignment, ""},
}

// FindingIDs returns every finding id, for parsers, help and docs tests.
func FindingIDs() []string {
	ids := make([]string, len(findingKinds))
	for i, k := range findingKinds {
		ids[i] = k.id
	}
	return ids
}

// VerdictOf returns the verdict a finding id gives the fix of
// (forced-sync: sequential, slow-input: data-bound, inline-input:
// sequential, dispatch-overhead: host-bound), "" for none. A finding is of
// high severity when its verdict is the run's.
func VerdictOf(id string) analyze.Verdict {
	for _, k := range findingKinds {
		if k.id == id {
			return k.verdict
		}
	}
	return ""
}

// SortFindings orders findings most severe first, keeping the order of
// findings of one severity, as Result.Findings are.
func SortFindings(fs []analyze.Finding) {
	slices.SortStableFunc(fs, func(x, y analyze.Finding) int { return cmp.Compare(severityRank(x.Severity), severityRank(y.Severity)) })
}

func severityRank(s string) int {
	switch s {
	case "high":
		return 0
	case "medium":
		return 1
	}
	return 2
}
