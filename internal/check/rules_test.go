package check

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
)

const ms = 1_000_000

// run describes a result by the figures the rules read.
type run struct {
	verdict analyze.Verdict
	window  int64 // ns
	steps   int
	idle    map[analyze.Cause]int64
	busy    map[string]int64 // device id -> busy time in the window
}

func (r run) result() *analyze.Result {
	res := &analyze.Result{Verdict: r.verdict, Confidence: analyze.High, Window: analyze.Window{Start: 10 * ms, End: 10*ms + r.window, Steps: r.steps}}
	for c, d := range r.idle {
		res.Idle.Add(c, d)
	}
	for _, id := range slices.Sorted(maps.Keys(r.busy)) {
		res.Devices = append(res.Devices, analyze.Device{ID: id, WindowBusy: r.busy[id]})
	}
	return res
}

// The runs of internal/cli's generated loops, as analyze measures them.
var runs = map[string]run{
	// Input idle 50 of 175 ms (28.6%), all idle 55 (31.4%), busy 68.6%.
	"data-bound": {analyze.DataBound, 175 * ms, 5, map[analyze.Cause]int64{analyze.Input: 50 * ms, analyze.Host: 5 * ms}, map[string]int64{"GPU:0": 120 * ms}},
	// Idle after each sync 20 of 100 ms; busy 80%.
	"sequential": {analyze.Sequential, 100 * ms, 5, map[analyze.Cause]int64{analyze.AfterSync: 20 * ms}, map[string]int64{"GPU:0": 80 * ms}},
	// GPU:1 busy 60%, GPU:0 80%.
	"two devices": {analyze.Sequential, 100 * ms, 5, map[analyze.Cause]int64{analyze.InSync: 5 * ms, analyze.AfterSync: 25 * ms}, map[string]int64{"GPU:0": 80 * ms, "GPU:1": 60 * ms}},
	"short":       {analyze.Parallel, 62 * ms, 3, map[analyze.Cause]int64{analyze.Host: 2 * ms}, map[string]int64{"GPU:0": 60 * ms}},
	// Stalled with the work queued 60 of 100 ms; busy 35%.
	"stalled":   {analyze.Stalled, 100 * ms, 5, map[analyze.Cause]int64{analyze.Stall: 60 * ms, analyze.AfterSync: 5 * ms}, map[string]int64{"GPU:0": 35 * ms}},
	"no device": {analyze.NoDevice, 0, 0, nil, nil},
}

func limit(share float64) Limit { return Limit{Share: share, On: true} }

// none turns the verdict rule off.
var none = []analyze.Verdict{}

func TestEvaluate(t *testing.T) {
	def := DefaultRules()
	tests := []struct {
		run   string
		rules Rules
		// fail lists the failed rules' messages; pass the rules that
		// passed.
		fail []string
		pass []string
	}{
		{"data-bound", def, []string{"verdict: measured data-bound (high confidence), limit not sequential,data-bound"}, nil},
		{"data-bound", Rules{FailOn: []analyze.Verdict{analyze.Sequential}}, nil, []string{"verdict"}},
		{"data-bound", Rules{FailOn: none}, nil, nil},
		{"sequential", def, []string{"verdict: measured sequential (high confidence), limit not sequential,data-bound"}, nil},
		{"sequential", Rules{FailOn: []analyze.Verdict{analyze.DataBound, analyze.HostBound}}, nil, []string{"verdict"}},
		{"short", def, nil, []string{"verdict"}},
		// Not failed by default: the host is not what to fix.
		{"stalled", def, nil, []string{"verdict"}},
		{"stalled", Rules{FailOn: []analyze.Verdict{analyze.Stalled}}, []string{"verdict: measured stalled (high confidence), limit not stalled"}, nil},
		{"stalled", Rules{MaxSyncIdle: limit(0.10)}, nil, []string{"max-sync-idle"}},
		{"data-bound", Rules{MaxIdle: limit(0.30)}, []string{"max-idle: measured 31.4%, limit 30.0%"}, nil},
		{"data-bound", Rules{MaxIdle: limit(0.32)}, nil, []string{"max-idle"}},
		{"data-bound", Rules{MaxInputIdle: limit(0.25)}, []string{"max-input-idle: measured 28.6%, limit 25.0%"}, nil},
		// A limit of 0 is on: nothing may exceed it.
		{"data-bound", Rules{MaxInputIdle: limit(0.30), MaxSyncIdle: limit(0)}, nil, []string{"max-sync-idle", "max-input-idle"}},
		{"sequential", Rules{MaxSyncIdle: limit(0.10)}, []string{"max-sync-idle: measured 20.0%, limit 10.0%"}, nil},
		{"sequential", Rules{MaxSyncIdle: limit(0.21), MaxInputIdle: limit(0.01)}, nil, []string{"max-sync-idle", "max-input-idle"}},
		// In-sync and after-sync idle both count as sync idle.
		{"two devices", Rules{MaxSyncIdle: limit(0.25)}, []string{"max-sync-idle: measured 30.0%, limit 25.0%"}, nil},
		// The figure equal to the limit passes.
		{"two devices", Rules{MaxIdle: limit(0.30)}, nil, []string{"max-idle"}},
		{"data-bound", Rules{MinUtilization: limit(0.70)}, []string{"min-utilization: measured 68.6% (GPU:0), limit 70.0%"}, nil},
		{"sequential", Rules{MinUtilization: limit(0.80)}, nil, []string{"min-utilization"}},
		{"two devices", Rules{MinUtilization: limit(0.70)}, []string{"min-utilization: measured 60.0% (GPU:1), limit 70.0%"}, nil},
		{"two devices", Rules{MinUtilization: limit(0.60)}, nil, []string{"min-utilization"}},
		{"short", Rules{FailOn: def.FailOn, MinSteps: 4}, []string{"min-steps: measured 3 steps, limit 4 steps"}, []string{"verdict"}},
		{"short", Rules{FailOn: def.FailOn, MinSteps: 3}, nil, []string{"verdict", "min-steps"}},
		{"data-bound", Rules{FailOn: def.FailOn, MinSteps: 5, MaxIdle: limit(0.10)},
			[]string{"verdict: measured data-bound (high confidence), limit not sequential,data-bound", "max-idle: measured 31.4%, limit 10.0%"},
			[]string{"min-steps"}},
		// Without a device, idle shares are 0 and nothing is busy; the
		// trace fails unless a trace without device activity is allowed.
		{"no device", Rules{MaxIdle: limit(0.10), MinUtilization: limit(0.50)},
			[]string{noDeviceFailure, "min-utilization: measured no device activity, limit 50.0%"}, []string{"max-idle"}},
		{"no device", def, []string{noDeviceFailure}, []string{"verdict"}},
		{"no device", Rules{FailOn: def.FailOn, AllowNoDevice: true}, nil, []string{"no-device", "verdict"}},
		// Listing no-device among the failing verdicts fails it whatever
		// AllowNoDevice says.
		{"no device", Rules{FailOn: []analyze.Verdict{analyze.NoDevice}, AllowNoDevice: true},
			[]string{"verdict: measured no-device (high confidence), limit not no-device"}, []string{"no-device"}},
		// The rule is on in the zero Rules, and says nothing of a trace
		// with device activity.
		{"no device", Rules{}, []string{noDeviceFailure}, nil},
		{"short", Rules{}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.run, func(t *testing.T) {
			var fail, pass []string
			for _, o := range tt.rules.Evaluate(runs[tt.run].result()) {
				if o.Failed {
					fail = append(fail, o.Message())
				} else {
					pass = append(pass, o.Rule)
				}
			}
			if !slices.Equal(fail, tt.fail) || !slices.Equal(pass, tt.pass) {
				t.Errorf("%+v: failed %q passed %q\nwant failed %q passed %q", tt.rules, fail, pass, tt.fail, tt.pass)
			}
		})
	}
}

// noDeviceFailure is the no-device rule's message on a whole trace.
const noDeviceFailure = "no-device: measured no device activity (high confidence), limit device activity: " +
	"a profiler that could not record the device (CUPTI without permission) or a trace cut before its device events looks like this; " +
	"if the run really has no device, allow it with --allow-no-device or allow_no_device = true in [check]"

// TestNoDeviceCut: a cut trace without device activity says so, with the
// analysis's (low) confidence.
func TestNoDeviceCut(t *testing.T) {
	res := runs["no device"].result()
	res.Confidence, res.Source.Truncated = analyze.Low, true
	out := DefaultRules().Evaluate(res)
	if len(out) != 2 || !out[0].Failed || out[0].Rule != "no-device" || out[0].Figure != "no device activity in a trace cut short (low confidence)" {
		t.Errorf("outcomes %+v, want a failed no-device rule naming the cut first", out)
	}
}

func TestDefaultRulesAreFresh(t *testing.T) {
	r := DefaultRules()
	r.FailOn[0] = analyze.Parallel
	if got := DefaultRules().FailOn; !slices.Equal(got, []analyze.Verdict{analyze.Sequential, analyze.DataBound}) {
		t.Errorf("changing one DefaultRules changed the next: %v", got)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		rules Rules
		want  string // "" for valid
	}{
		{DefaultRules(), ""},
		{Rules{MaxIdle: limit(0), MinUtilization: limit(1), MinSteps: 3}, ""},
		// An off limit is not read.
		{Rules{MaxIdle: Limit{Share: 5}}, ""},
		{Rules{FailOn: []analyze.Verdict{"slow"}}, `fail-on: unknown verdict "slow"`},
		{Rules{MaxSyncIdle: limit(1.5)}, "invalid max-sync-idle 1.5: expected a share from 0 to 1"},
		{Rules{MaxInputIdle: limit(-0.1)}, "invalid max-input-idle -0.1"},
		{Rules{MinUtilization: limit(math.NaN())}, "invalid min-utilization NaN"},
		{Rules{MinSteps: -1}, "invalid min-steps -1: expected 0 (off) or more"},
	}
	for _, tt := range tests {
		err := tt.rules.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: Validate() = %v, want %q", tt.rules, err, tt.want)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		in   string
		want analyze.Verdict
		err  string
	}{
		{"data-bound", analyze.DataBound, ""},
		{" Host-Bound ", analyze.HostBound, ""},
		{"no-device", analyze.NoDevice, ""},
		{"Stalled", analyze.Stalled, ""},
		{"none", "", `unknown verdict "none"`},
		{"slow", "", `unknown verdict "slow": expected parallel, sequential, data-bound, host-bound, stalled, no-device or none`},
	}
	for _, tt := range tests {
		v, err := ParseVerdict(tt.in)
		if v != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseVerdict(%q) = %q, %v; want %q, %q", tt.in, v, err, tt.want, tt.err)
		}
	}
}
