package report

import (
	"strings"

	"github.com/tracegap/tracegap/analyze"
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
	line := "step times " + st.Sentence()
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

// StabilityV1 is the step-time distribution in the JSON report
// (analyze.Result.Stability); times are ns.
type StabilityV1 struct {
	Label    string  `json:"label"`
	Steps    int     `json:"steps"`
	MedianNs int64   `json:"median_ns"`
	P90Ns    int64   `json:"p90_ns"`
	MaxNs    int64   `json:"max_ns"`
	Spread   float64 `json:"spread"`
	// SlowSteps are the indexes in steps of the steps over 1.5x the
	// median.
	SlowSteps []int        `json:"slow_steps"`
	Artefacts []ArtefactV1 `json:"artefacts"`
	// ErraticLoader is the erratic-loader signature; absent without it.
	ErraticLoader *ErraticLoaderV1 `json:"erratic_loader,omitempty"`
}

// ArtefactV1 is a step left out of the distribution: its index in steps,
// -1 for the warm-up step the window left out.
type ArtefactV1 struct {
	Step int    `json:"step"`
	Why  string `json:"why"`
}

// ErraticLoaderV1 is analyze.ErraticLoader on the wire.
type ErraticLoaderV1 struct {
	Period    int   `json:"period"`
	Waiting   int   `json:"waiting"`
	WaitNs    int64 `json:"wait_ns"`
	BatchNs   int64 `json:"batch_ns"`
	ComputeNs int64 `json:"compute_ns"`
}

// LoaderV1 is what the trace says of the loader's workers, with the
// estimate of the workers that would keep up (0 when none is made).
type LoaderV1 struct {
	Known      bool   `json:"known"`
	Workers    int    `json:"workers"`
	From       string `json:"from"`
	PerBatchNs int64  `json:"per_batch_ns"`
	Background bool   `json:"background"`
	Estimate   int    `json:"estimate"`
	Derivation string `json:"derivation"`
}

func jsonStability(res *analyze.Result) StabilityV1 {
	st := res.Stability()
	out := StabilityV1{
		Label: string(st.Label), Steps: st.Steps, MedianNs: st.Median, P90Ns: st.P90, MaxNs: st.Max,
		Spread: round4(st.Spread), SlowSteps: nonNil(st.Slow), Artefacts: []ArtefactV1{},
	}
	for _, a := range st.Artefacts {
		out.Artefacts = append(out.Artefacts, ArtefactV1(a))
	}
	if l := st.Loader; l != nil {
		out.ErraticLoader = &ErraticLoaderV1{l.Period, l.Waiting, l.Wait, l.Batch, l.Compute}
	}
	return out
}

func jsonLoader(res *analyze.Result) LoaderV1 {
	l := res.Loader
	out := LoaderV1{Known: l.Known, Workers: l.Workers, From: l.From, PerBatchNs: l.PerBatch, Background: l.Background}
	out.Estimate, out.Derivation, _ = res.WorkerEstimate()
	return out
}
