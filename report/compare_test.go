package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/analyze"
)

const ms = int64(1_000_000)

// stepRun is a one-device run of four 100 ms steps with busy device time
// and input time per step and the window's idle.
func stepRun(path string, v analyze.Verdict, busy, input int64, idle analyze.Breakdown) *analyze.Result {
	r := &analyze.Result{
		Source: analyze.Source{Path: path, Format: "chrome"}, Verdict: v, Confidence: analyze.High,
		Window:  analyze.Window{End: 400 * ms, Steps: 4},
		Devices: []analyze.Device{{ID: "GPU:0", WindowBusy: 4 * busy}},
		Idle:    idle,
	}
	for i := range 4 {
		r.Steps = append(r.Steps, analyze.Step{Start: int64(i) * 100 * ms, Dur: 100 * ms, DeviceBusy: busy, Input: input})
	}
	return r
}

func testComparison() *analyze.Comparison {
	base := stepRun("base.json", analyze.Parallel, 90*ms, 0, analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.Host: 40 * ms}})
	next := stepRun("new.json", analyze.Sequential, 60*ms, 10*ms, analyze.Breakdown{ByCause: [analyze.NumCauses]int64{analyze.InSync: 120 * ms, analyze.Host: 40 * ms}})
	for i := range next.Steps {
		next.Steps[i].Start, next.Steps[i].Dur = int64(i)*130*ms, 130*ms
	}
	next.Gaps = []analyze.Gap{{Device: "GPU:0", Dur: 30 * ms, Cause: analyze.InSync, Segments: []analyze.Segment{
		{Dur: 30 * ms, Cause: analyze.InSync, Stack: []string{"ProfilerStep#3", "aten::item", "cudaStreamSynchronize"}},
	}}}
	c := analyze.Compare(base, next)
	c.Check(0.05)
	return c
}

func TestComparisonText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteComparison(&buf, testComparison(), Text); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"base  base.json (chrome): parallel, high confidence, 4 steps\n",
		"verdict: parallel -> sequential\n",
		"  step time               100 ms   130 ms  +30.0 ms  1.30x\n",
		"  idle in-sync share        0.0%    30.0%  +30.0 pt      -\n",
		"synthetic-data test (base has no input-pipeline time",
		"a forced synchronization is the likely cause: cudaStreamSynchronize (30.0 ms in 1 gap).",
		"sync 30.0 ms in 1 gap: ProfilerStep#N > aten::item > cudaStreamSynchronize",
		"regressions (limit 5.0%): step time grew 30.0% (100 ms -> 130 ms), limit 5.0%; attributed idle share grew 30.0 points",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "after-sync") {
		t.Errorf("text shows after-sync rows, zero in both runs:\n%s", out)
	}
}

func TestComparisonJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteComparison(&buf, testComparison(), JSON); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string `json:"schema"`
		Base   struct {
			StepNs     int64            `json:"step_ns"`
			IdlePerStp map[string]int64 `json:"idle_per_step_ns"`
		} `json:"base"`
		Changed bool `json:"verdict_changed"`
		Rows    []struct {
			Metric string   `json:"metric"`
			Unit   string   `json:"unit"`
			Diff   float64  `json:"diff"`
			Ratio  *float64 `json:"ratio"`
		} `json:"rows"`
		Synthetic *struct {
			InputFits bool `json:"input_fits"`
			Slower    bool `json:"slower"`
			Syncs     []struct {
				Name string `json:"name"`
				Ns   int64  `json:"ns"`
			} `json:"syncs"`
		} `json:"synthetic"`
		Limit       float64 `json:"regression_limit"`
		Regressions []struct {
			Metric string `json:"metric"`
		} `json:"regressions"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, buf.String())
	}
	if doc.Schema != CompareSchema || doc.Base.StepNs != 100*ms || doc.Base.IdlePerStp["host"] != 10*ms || !doc.Changed {
		t.Errorf("header = %+v", doc)
	}
	rows := map[string]int{}
	for i, r := range doc.Rows {
		rows[r.Metric] = i
	}
	if i, ok := rows["idle in-sync share"]; !ok || doc.Rows[i].Ratio != nil || doc.Rows[i].Unit != "share" || doc.Rows[i].Diff != 0.3 {
		t.Errorf("in-sync share row = %+v, want a 0.3 share change with a null ratio", doc.Rows[i])
	}
	if i, ok := rows["step time"]; !ok || doc.Rows[i].Ratio == nil || *doc.Rows[i].Ratio != 1.3 || doc.Rows[i].Unit != "ns" {
		t.Errorf("step time row = %+v, want ratio 1.3 in ns", doc.Rows[i])
	}
	if s := doc.Synthetic; s == nil || !s.InputFits || !s.Slower || len(s.Syncs) != 1 || s.Syncs[0].Name != "cudaStreamSynchronize" || s.Syncs[0].Ns != 30*ms {
		t.Errorf("synthetic = %+v", doc.Synthetic)
	}
	if doc.Limit != 0.05 || len(doc.Regressions) != 2 || doc.Regressions[0].Metric != "step time" {
		t.Errorf("limit %g regressions %+v", doc.Limit, doc.Regressions)
	}
}

func TestComparisonMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteComparison(&buf, testComparison(), Markdown); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"## tracegap compare: parallel -> sequential\n",
		"| metric | base | new | change | ratio |\n",
		"| step time | 100 ms | 130 ms | +30.0 ms | 1.30x |\n",
		"### Synthetic-data test",
		"- `ProfilerStep#N > aten::item > cudaStreamSynchronize`: 30.0 ms in 1 gap\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if err := WriteComparison(&buf, testComparison(), HTML); err == nil {
		t.Error("WriteComparison(HTML) succeeded; want an error naming the formats it writes")
	}
}
