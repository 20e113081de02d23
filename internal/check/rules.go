// Package check holds the rules a CI job holds traces to and the config
// file (tracegap.toml) that keeps them in a repository.
//
// A front end (the CLI, the upload service) builds a [Rules], setting it
// by name through [Rules.Params] (flags, config keys, query parameters),
// runs the analysis, and calls [Rules.Evaluate] on the result, or
// [Rules.EvaluateSummary] on the compare.Summary it kept of a run; the
// package writes no output.
package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
)

// Rules are the rules a trace is held to. A rule whose limit is off (the
// zero value) is not checked.
type Rules struct {
	// FailOn are the verdicts that fail; empty, the verdict is not checked.
	FailOn []analyze.Verdict
	// MaxIdle bounds the attributed device idle, MaxSyncIdle the
	// sync-caused idle (in-sync and after-sync), MaxInputIdle the
	// input-caused idle, each as a share of the window.
	MaxIdle, MaxSyncIdle, MaxInputIdle Limit
	// MinUtilization is the least busy share of the window any device may
	// have.
	MinUtilization Limit
	// MinSteps is the fewest steady steps a capture may hold and still be
	// judged; 0 is off.
	MinSteps int
	// AllowNoDevice lets a trace without device activity pass. Unlike the
	// other rules this one is on in the zero Rules: a profiler that could
	// not record the device (CUPTI without the permission to) and a trace
	// cut before its device events look exactly like a CPU-only run, and
	// every other rule measures device time, so such a trace passing
	// unnoticed would let a broken capture through CI.
	AllowNoDevice bool
	// FailOnFinding are the finding kinds (Finding.ID: blocking-copy,
	// forced-sync, ...) that fail the check when found with high or
	// medium severity; empty is off.
	FailOnFinding []string
}

// A Limit is a share of the steady-state window a figure is held to.
type Limit struct {
	Share float64 // 0.1 is 10%
	On    bool    // the zero Limit is off
}

// DefaultRules are the rules of a check given no flag or config: fail the
// two verdicts tracegap is about. host-bound is left out because a small
// model legitimately spends its idle in dispatch.
func DefaultRules() Rules {
	return Rules{FailOn: []analyze.Verdict{analyze.Sequential, analyze.DataBound}}
}

// ParseVerdict parses a verdict's name, in any case.
func ParseVerdict(s string) (analyze.Verdict, error) {
	v := analyze.Verdict(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(analyze.Verdicts(), v) {
		var names []string
		for _, v := range analyze.Verdicts() {
			names = append(names, string(v))
		}
		return "", fmt.Errorf("unknown verdict %q: expected %s or none", s, strings.Join(names, ", "))
	}
	return v, nil
}

// Validate reports the first rule that cannot be checked.
func (r Rules) Validate() error {
	for _, v := range r.FailOn {
		if _, err := ParseVerdict(string(v)); err != nil {
			return fmt.Errorf("fail-on: %w", err)
		}
	}
	for _, l := range []struct {
		rule  string
		limit Limit
	}{
		{"max-idle", r.MaxIdle}, {"max-sync-idle", r.MaxSyncIdle}, {"max-input-idle", r.MaxInputIdle}, {"min-utilization", r.MinUtilization},
	} {
		// The negated test also catches NaN.
		if l.limit.On && !(l.limit.Share >= 0 && l.limit.Share <= 1) {
			return fmt.Errorf("invalid %s %v: expected a share from 0 to 1", l.rule, l.limit.Share)
		}
	}
	if r.MinSteps < 0 {
		return fmt.Errorf("invalid min-steps %d: expected 0 (off) or more", r.MinSteps)
	}
	return nil
}

// An Outcome is one rule held against one result.
type Outcome struct {
	// Rule names the rule: verdict, max-idle, max-sync-idle,
	// max-input-idle, min-utilization, min-steps or fail-on-finding.
	Rule string
	// Figure is what the result measured ("31.4%", "68.6% (GPU:0)") and
	// Limit what the rule allows ("30.0%", "not sequential,data-bound").
	Figure, Limit string
	// Note, when set, says what a failure may mean and how to act on it.
	Note   string
	Failed bool
}

// Message says in one line what was measured against what.
func (o Outcome) Message() string {
	m := fmt.Sprintf("%s: measured %s, limit %s", o.Rule, o.Figure, o.Limit)
	if o.Note != "" {
		m += ": " + o.Note
	}
	return m
}

// noDeviceNote explains a failed no-device rule.
const noDeviceNote = "a profiler that could not record the device (CUPTI without permission) or a trace cut before its device events looks like this; " +
	"if the run really has no device, allow it with --allow-no-device or allow_no_device = true in [check]"

// Evaluate holds res against every rule that is on, in a fixed order. A
// multi-rank job is evaluated on its overall result, whose idle includes
// the time ranks waited in collectives for the slowest one.
func (r Rules) Evaluate(res *analyze.Result) []Outcome {
	return r.EvaluateSummary(compare.Summarize(res))
}

// EvaluateSummary holds a run's summary against every rule that is on, as
// Evaluate holds the Result it was taken from. A summary without window
// figures (stored before they were kept) is held as a window of nothing.
func (r Rules) EvaluateSummary(f compare.Summary) []Outcome {
	w := f.Window
	if w == nil {
		w = &compare.WindowFigures{}
	}
	var out []Outcome
	if f.Verdict == analyze.NoDevice {
		out = append(out, r.noDevice(f.Confidence, w.Truncated))
	}
	if len(r.FailOn) > 0 {
		out = append(out, r.verdict(f))
	}
	for _, s := range []struct {
		rule  string
		limit Limit
		idle  int64
	}{
		{"max-idle", r.MaxIdle, w.IdleNs},
		{"max-sync-idle", r.MaxSyncIdle, w.SyncIdleNs},
		{"max-input-idle", r.MaxInputIdle, w.InputIdleNs},
	} {
		if !s.limit.On {
			continue
		}
		v := fraction(s.idle, w.Ns)
		out = append(out, Outcome{Rule: s.rule, Figure: human.Share(v), Limit: human.Share(s.limit.Share), Failed: v > s.limit.Share})
	}
	if r.MinUtilization.On {
		out = append(out, r.utilization(w))
	}
	if len(r.FailOnFinding) > 0 {
		out = append(out, r.failOnFinding(f))
	}
	if r.MinSteps > 0 {
		out = append(out, Outcome{
			Rule:   "min-steps",
			Figure: fmt.Sprintf("%d steps", w.Steps),
			Limit:  fmt.Sprintf("%d steps", r.MinSteps),
			Failed: w.Steps < r.MinSteps,
		})
	}
	return out
}

func (r Rules) verdict(f compare.Summary) Outcome {
	names := make([]string, len(r.FailOn))
	for i, v := range r.FailOn {
		names[i] = string(v)
	}
	return Outcome{
		Rule:   "verdict",
		Figure: fmt.Sprintf("%s (%s confidence)", f.Verdict, f.Confidence),
		Limit:  "not " + strings.Join(names, ","),
		Failed: slices.Contains(r.FailOn, f.Verdict),
	}
}

// noDevice holds a result without device activity to AllowNoDevice. It is
// only evaluated on such a result: on any other there is nothing to say.
func (r Rules) noDevice(confidence analyze.Confidence, truncated bool) Outcome {
	o := Outcome{Rule: "no-device", Figure: fmt.Sprintf("no device activity (%s confidence)", confidence), Limit: "device activity"}
	if truncated {
		o.Figure = fmt.Sprintf("no device activity in a trace cut short (%s confidence)", confidence)
	}
	if r.AllowNoDevice {
		o.Limit = "none (no device allowed)"
		return o
	}
	o.Failed, o.Note = true, noDeviceNote
	return o
}

// utilization checks each device's busy share of the window (the steady
// state, warm-up left out) and reports the least busy device. A run
// without device activity fails: there is nothing to be busy.
func (r Rules) utilization(w *compare.WindowFigures) Outcome {
	o := Outcome{Rule: "min-utilization", Limit: human.Share(r.MinUtilization.Share)}
	if len(w.Devices) == 0 || w.Ns <= 0 {
		o.Figure, o.Failed = "no device activity", true
		return o
	}
	low, dev := 2.0, ""
	for _, d := range w.Devices {
		if u := fraction(d.BusyNs, w.Ns); u < low {
			low, dev = u, d.ID
		}
	}
	o.Figure = fmt.Sprintf("%s (%s)", human.Share(low), dev)
	o.Failed = low < r.MinUtilization.Share
	return o
}

func fraction(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}
