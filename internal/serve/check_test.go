package serve

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

const ms = 1_000_000

// TestCheck holds a stored run to rules given as query parameters, written
// as `tracegap check`'s flags, on top of the server's rules.
func TestCheck(t *testing.T) {
	// Each step reads input for 30 ms, dispatches for 1 ms and runs a
	// 20 ms kernel that overlaps the next step's input; of the 155 ms
	// window after the warm-up step, five kernels fill 100 ms: input idle
	// 50 ms (32.3%), all idle 55 ms (35.5%), busy 64.5%; data-bound.
	var data bytes.Buffer
	if err := tracetest.WriteXPlane(&data, tracetest.Loop{Steps: 6, Input: 30 * ms, Dispatch: 1 * ms, Compute: 20 * ms}.Spec()); err != nil {
		t.Fatal(err)
	}
	an := NewAnalyzer(&run.Engine{Analysis: analyze.DefaultOptions()}, render.Options{})
	ts := start(t, Config{Analyze: an, Rules: &check.Rules{MinSteps: 6}})
	id := ts.mustUpload(t, "loop.xplane.pb", data.Bytes()).ID

	tests := []struct {
		query  string
		failed bool
		want   []outcomeJSON
	}{
		{"", true, []outcomeJSON{
			{"min-steps", "5 steps", "6 steps", true, "min-steps: measured 5 steps, limit 6 steps"},
		}},
		{"?min-steps=0&fail-on=sequential&fail-on=data-bound&max-idle=36%25&max-input-idle=0.3&min-utilization=60%25", true, []outcomeJSON{
			{"verdict", "data-bound (high confidence)", "not sequential,data-bound", true, "verdict: measured data-bound (high confidence), limit not sequential,data-bound"},
			{"max-idle", "35.5%", "36.0%", false, "max-idle: measured 35.5%, limit 36.0%"},
			{"max-input-idle", "32.3%", "30.0%", true, "max-input-idle: measured 32.3%, limit 30.0%"},
			{"min-utilization", "64.5% (GPU:0)", "60.0%", false, "min-utilization: measured 64.5% (GPU:0), limit 60.0%"},
		}},
		{"?fail-on=none&min-steps=5", false, []outcomeJSON{
			{"min-steps", "5 steps", "5 steps", false, "min-steps: measured 5 steps, limit 5 steps"},
		}},
	}
	for _, tt := range tests {
		r := get(t, ts.URL+"/api/v1/traces/"+id+"/check"+tt.query)
		var a checkAnswer
		r.json(t, &a)
		if r.code != 200 || a.ID != id || a.Verdict != "data-bound" || a.Failed != tt.failed || !reflect.DeepEqual(a.Outcomes, tt.want) {
			t.Errorf("check%s = %d %s, want failed %v with %+v", tt.query, r.code, r.body, tt.failed, tt.want)
		}
	}

	bad := []struct {
		query string
		code  int
		want  string
	}{
		{"?max-idle=200%25", 400, `max-idle: invalid percentage "200%"`},
		{"?fail-on=slow", 400, `fail-on: unknown verdict "slow"`},
		{"?min-steps=-1", 400, "invalid min-steps -1: expected 0 (off) or more"},
		{"?max_idle=1%25", 400, `unknown rule "max_idle": expected one of fail-on, max-idle`},
	}
	for _, tt := range bad {
		r := get(t, ts.URL+"/api/v1/traces/"+id+"/check"+tt.query)
		if msg := r.errorText(t); r.code != tt.code || !bytes.Contains([]byte(msg), []byte(tt.want)) {
			t.Errorf("check%s = %d %q, want %d containing %q", tt.query, r.code, msg, tt.code, tt.want)
		}
	}
	if r := get(t, ts.URL+"/api/v1/traces/ffffffffffffffff/check"); r.code != http.StatusNotFound {
		t.Errorf("check of a missing trace = %d, want 404", r.code)
	}
}

// TestCheckWithoutFigures checks a trace stored without check figures (as
// before the service kept them): refused with a way out.
func TestCheckWithoutFigures(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	id := ts.mustUpload(t, "old", fakeReport("sequential", 1, 100e6)).ID
	r := get(t, ts.URL+"/api/v1/traces/"+id+"/check")
	want := "trace " + id + " was stored before checks were kept: delete it and upload it again"
	if r.code != http.StatusConflict || r.errorText(t) != want {
		t.Errorf("check = %d %s, want 409 %q", r.code, r.body, want)
	}
}
