package check

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
)

// TestSet sets rules by name, as the service's query parameters do: the
// same text as the command line's flags.
func TestSet(t *testing.T) {
	def := DefaultRules()
	tests := []struct {
		values map[string][]string
		want   Rules
		err    string
	}{
		{nil, def, ""},
		{map[string][]string{"fail-on": {"none"}}, Rules{}, ""},
		// The first use replaces the default; later ones add to it.
		{map[string][]string{"fail-on": {"Host-Bound,sequential", "host-bound"}}, Rules{FailOn: []analyze.Verdict{analyze.HostBound, analyze.Sequential}}, ""},
		{map[string][]string{"max-idle": {"30%"}, "max-sync-idle": {"0%"}, "max-input-idle": {"0.25"}, "min-utilization": {"70%"}, "min-steps": {"4"}},
			Rules{FailOn: def.FailOn, MaxIdle: limit(0.3), MaxSyncIdle: limit(0), MaxInputIdle: limit(0.25), MinUtilization: limit(0.7), MinSteps: 4}, ""},
		{map[string][]string{"allow-no-device": {"true"}}, Rules{FailOn: def.FailOn, AllowNoDevice: true}, ""},
		{map[string][]string{"allow-no-device": {"maybe"}}, Rules{}, `allow-no-device: invalid switch "maybe"`},
		{map[string][]string{"max-idle": {"lots"}}, Rules{}, `max-idle: invalid percentage "lots"`},
		{map[string][]string{"max-idle": {"1"}}, Rules{}, `max-idle: invalid percentage "1": a bare number is ambiguous`},
		{map[string][]string{"min-steps": {"three"}}, Rules{}, `min-steps: invalid integer "three"`},
		{map[string][]string{"min-steps": {"-2"}}, Rules{}, "invalid min-steps -2"},
		{map[string][]string{"max_idle": {"1%"}}, Rules{}, `unknown rule "max_idle": expected one of fail-on, max-idle, max-sync-idle, max-input-idle, min-utilization, min-steps, fail-on-finding, allow-no-device`},
	}
	for _, tt := range tests {
		got := DefaultRules()
		err := got.Set(tt.values)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Set(%v): error %v, want one containing %q", tt.values, err, tt.err)
		case tt.err == "" && (err != nil || !reflect.DeepEqual(got, tt.want)):
			t.Errorf("Set(%v) = %+v, %v; want %+v", tt.values, got, err, tt.want)
		}
	}
}

// TestEvaluateSummary: a summary kept as JSON gives the outcomes of the
// result it was taken from.
func TestEvaluateSummary(t *testing.T) {
	rules := Rules{FailOn: DefaultRules().FailOn, MaxIdle: limit(0.3), MaxSyncIdle: limit(0.25), MaxInputIdle: limit(0.2), MinUtilization: limit(0.65), MinSteps: 4}
	for name, r := range runs {
		res := r.result()
		b, err := json.Marshal(compare.Summarize(res))
		if err != nil {
			t.Fatal(err)
		}
		var f compare.Summary
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		n := 6 // one outcome a rule, and the no-device rule on a run without devices
		if res.Verdict == analyze.NoDevice {
			n++
		}
		if got, want := rules.EvaluateSummary(f), rules.Evaluate(res); !reflect.DeepEqual(got, want) || len(got) != n {
			t.Errorf("%s: outcomes from a stored summary %+v, want %+v", name, got, want)
		}
	}
}
