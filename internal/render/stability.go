package render

import (
	"strings"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/report"
)

// stabilityLine gives the step-time distribution in a line: "step times
// stable: median 43.0 ms, p90 43.0 ms, max 43.0 ms, spread 0.0% over 11
// steps; slow: ProfilerStep#5; left out: warm-up (the first step)". Step
// names come from the trace: callers escape the line for their medium.
func stabilityLine(res *analyze.Result) string {
	st := res.Stability()
	if st.Steps == 0 {
		return ""
	}
	line := "step times " + advice.StabilitySentence(&st)
	if len(st.Slow) > 0 {
		names := make([]string, 0, len(st.Slow))
		for _, i := range st.Slow[:min(len(st.Slow), 5)] {
			names = append(names, stepName(res, i))
		}
		if len(st.Slow) > 5 {
			names = append(names, "...")
		}
		line += " (" + strings.Join(names, ", ") + ")"
	}
	var left []string
	for _, a := range st.Artefacts {
		left = append(left, a.Why)
	}
	if len(left) > 0 {
		line += "; left out: " + strings.Join(left, ", ")
	}
	return line
}

func jsonStability(res *analyze.Result) report.StabilityV1 {
	st := res.Stability()
	out := report.StabilityV1{
		Label: string(st.Label), Steps: st.Steps, MedianNs: st.Median, P90Ns: st.P90, MaxNs: st.Max,
		Spread: round4(st.Spread), SlowSteps: nonNil(st.Slow), Artefacts: []report.ArtefactV1{},
	}
	for _, a := range st.Artefacts {
		out.Artefacts = append(out.Artefacts, report.ArtefactV1(a))
	}
	if l := st.Loader; l != nil {
		out.ErraticLoader = &report.ErraticLoaderV1{Period: l.Period, Waiting: l.Waiting, WaitNs: l.Wait, BatchNs: l.Batch, ComputeNs: l.Compute}
	}
	return out
}

func jsonLoader(res *analyze.Result) report.LoaderV1 {
	l := res.Loader
	out := report.LoaderV1{Known: l.Known, Workers: l.Workers, From: l.From, PerBatchNs: l.PerBatch, Background: l.Background}
	out.Estimate, out.Derivation, _ = advice.WorkerEstimate(res)
	return out
}
