package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
)

const ms = int64(1_000_000)

// stepRun is a one-device run of four 100 ms steps with busy device time
// and input time per step and the window's idle.
func stepRun(path string, v analyze.Verdict, busy, input int64, idle map[analyze.Cause]int64) *analyze.Result {
	r := &analyze.Result{
		Source: analyze.Source{Path: path, Format: "chrome"}, Verdict: v, Confidence: analyze.High,
		Window:  analyze.Window{End: 400 * ms, Steps: 4},
		Devices: []analyze.Device{{ID: "GPU:0", WindowBusy: 4 * busy}},
	}
	for c, d := range idle {
		r.Idle.Add(c, d)
	}
	for i := range 4 {
		r.Steps = append(r.Steps, analyze.Step{Start: int64(i) * 100 * ms, Dur: 100 * ms, DeviceBusy: busy, Input: input})
	}
	return r
}

func testComparison() *compare.Comparison {
	base := stepRun("base.json", analyze.Parallel, 90*ms, 0, map[analyze.Cause]int64{analyze.Host: 40 * ms})
	next := stepRun("new.json", analyze.Sequential, 60*ms, 10*ms, map[analyze.Cause]int64{analyze.InSync: 156 * ms, analyze.Host: 52 * ms})
	for i := range next.Steps {
		next.Steps[i].Start, next.Steps[i].Dur = int64(i)*130*ms, 130*ms
	}
	next.Window.End = 4 * 130 * ms
	next.Gaps = []analyze.Gap{{Device: "GPU:0", Dur: 30 * ms, Cause: analyze.InSync}}
	next.SetSegments(&next.Gaps[0], analyze.NamedSegment{Dur: 30 * ms, Cause: analyze.InSync, Stack: []string{"ProfilerStep#3", "aten::item", "cudaStreamSynchronize"}})
	c := compare.Compare(compare.Summarize(base), compare.Summarize(next), compare.Options{})
	c.Check(0.05)
	return c
}

func TestComparisonText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteComparison(&buf, testComparison(), Text, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"base  base.json (chrome): parallel, high confidence, 4 steps\n",
		"verdict: parallel -> sequential\n",
		"  step time                  100 ms   130 ms  +30.0 ms  1.30x\n",
		"  idle in-sync share           0.0%    30.0%  +30.0 pt      -\n",
		"  attributed idle per step  10.0 ms  52.0 ms  +42.0 ms  5.20x\n",
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
	if err := WriteComparison(&buf, testComparison(), JSON, Options{}); err != nil {
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
	if err := WriteComparison(&buf, testComparison(), Markdown, Options{}); err != nil {
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
	if err := WriteComparison(&buf, testComparison(), HTML, Options{}); err == nil {
		t.Error("WriteComparison(HTML) succeeded; want an error naming the formats it writes")
	}
}

// TestComparisonHostileNames checks that names from a trace cannot drive a
// terminal nor break out of Markdown code.
func TestComparisonHostileNames(t *testing.T) {
	c := testComparison()
	evil := "sync\x1b]0;pwned\x07`**x**`\u202e"
	c.Synthetic.Syncs = []compare.SyncSite{{Name: evil, Stack: []string{"step", evil}, Time: 30 * ms, Gaps: 1}}
	c.New.Path = "new\x1b[2J.json"
	tests := []struct {
		format Format
		want   []string
	}{
		{Text, []string{`sync\x1b]0;pwned\a` + "`**x**`" + `\u202e (30.0 ms in 1 gap)`, `new\x1b[2J.json (chrome)`}},
		{Markdown, []string{"- ``step > sync\\x1b]0;pwned\\a`**x**`\\u202e``: 30.0 ms in 1 gap\n", "- new: `new\\x1b[2J.json` (chrome)"}},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := WriteComparison(&buf, c, tt.format, Options{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.ContainsAny(out, "\x1b\x07\u202e") {
			t.Errorf("%s output holds control characters:\n%q", tt.format, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s output lacks %q:\n%s", tt.format, w, out)
			}
		}
	}
}

// TestSyntheticConclusionUnseen checks that the synthetic-data test says
// why it cannot conclude when the new run's input cannot be seen, and
// claims no input figure when the new run reaches a declared target.
func TestSyntheticConclusionUnseen(t *testing.T) {
	const why = "its JAX loop thread shows no Python frames"
	tests := []struct {
		name string
		s    compare.Synthetic
		want []string
	}{
		{
			name: "slower, base detected",
			s:    compare.Synthetic{Target: 10 * ms, NewStep: 21 * ms, Slower: true, InputUnseen: why, Outcome: compare.InputUnseen},
			want: []string{"the new run's input time cannot be seen: " + why, "the base may not be synthetic either", "Its step (21.0 ms) is 110.0% slower than the target (10.0 ms), from input or a sync the test cannot tell apart."},
		},
		{
			name: "declared base, at target",
			s:    compare.Synthetic{Forced: true, Target: 10 * ms, NewStep: 10 * ms, InputUnseen: why, Outcome: compare.KeepsUp},
			want: []string{"reaches the target (10.0 ms): it keeps up, though its input time cannot be seen: " + why + "."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SyntheticConclusion(&tt.s)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("conclusion %q lacks %q", got, w)
				}
			}
			if strings.Contains(got, "fits inside") || strings.Contains(got, "bottleneck") {
				t.Errorf("conclusion %q concludes on input it cannot see", got)
			}
		})
	}
}

// TestSyntheticConclusionInput checks that input which fits inside the
// synthetic run's compute, yet holds the slower new run back, is blamed on
// the loader as the new run's analysis found it (the verdict rule), never
// on a sync.
func TestSyntheticConclusionInput(t *testing.T) {
	const fix = "Load in background workers: DataLoader(num_workers=2)."
	base := compare.Synthetic{Target: 20 * ms, BaseCompute: 20 * ms, NewStep: 24 * ms, NewInput: 12 * ms,
		NewInputIdle: 5 * ms, InputFits: true, Slower: true,
		Syncs: []compare.SyncSite{{Name: "cudaStreamSynchronize", Time: ms, Gaps: 1}}}
	tests := []struct {
		name    string
		outcome compare.Outcome
		finding string
		want    string
	}{
		{"inline loader", compare.InlineInput, "inline-input",
			"its device idles 5.00 ms per step waiting on input (0 on syncs): its loader (loader.next) runs inline on the loop, fast enough but not overlapped with compute, so the input pipeline, not a sync, is the cause. " + fix},
		{"background workers", compare.InputBound, "slow-input",
			"its device idles 5.00 ms per step waiting on input (0 on syncs): the loop waits on the background workers of its loader (loader.next), so the input pipeline is the bottleneck. " + fix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			s.Outcome = tt.outcome
			s.InputFinding = &compare.InputFinding{ID: tt.finding, Loader: "loader.next", Fix: fix}
			got := SyntheticConclusion(&s)
			if !strings.Contains(got, "fits inside") || !strings.HasSuffix(got, tt.want) {
				t.Errorf("conclusion %q\nwant it to end %q", got, tt.want)
			}
			if strings.Contains(got, "synchronization") || strings.Contains(got, "cudaStreamSynchronize") {
				t.Errorf("conclusion %q blames a sync", got)
			}
		})
	}
}
