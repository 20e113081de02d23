package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/advice/jobadvice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/analyze/job"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace"
)

// slowInputJob analyses four ranks, rank 3's input (3 ms) three times its
// compute: the other ranks wait 1.95 ms a step in the all-reduce for it.
func slowInputJob(t *testing.T) *job.Result {
	t.Helper()
	return analyzeJob(t, tracetest.Job{Steps: 6, Input: []int64{200_000, 200_000, 200_000, 3_000_000}, Dispatch: 100_000,
		CollectiveDispatch: 50_000, Compute: 1_000_000, Transfer: 200_000})
}

// analyzeJob builds the ranks of spec and analyses them as a job.
func analyzeJob(t *testing.T, spec tracetest.Job) *job.Result {
	t.Helper()
	var ts []*trace.Trace
	for _, s := range spec.Specs() {
		ts = append(ts, tracetest.Build(s))
	}
	jr, err := adviseJob(ts)
	if err != nil {
		t.Fatal(err)
	}
	return jr
}

func TestWriteJobJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJob(&buf, slowInputJob(t), JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema        string
		Verdict       string
		IdleBreakdown report.BreakdownV1 `json:"idle_breakdown"`
		Job           struct {
			Ranks int
			Steps []struct {
				Straggler   int
				Doing       string
				Collectives []struct {
					WaitNs     []int64 `json:"wait_ns"`
					TransferNs []int64 `json:"transfer_ns"`
					Split      struct {
						InputNs int64 `json:"input_ns"`
						HostNs  int64 `json:"host_ns"`
						TotalNs int64 `json:"total_ns"`
					}
				}
			}
		}
		Ranks []struct {
			Rank         int
			Verdict      string
			VerdictAlone string `json:"verdict_alone"`
			Straggles    int
			Report       struct{ Schema string }
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, buf.Bytes())
	}
	if got.Schema != report.Schema || got.Verdict != "data-bound" || got.IdleBreakdown.Share[analyze.Input] <= 0.05 {
		t.Errorf("schema %q verdict %q input share %v; want %s, data-bound, over 5%%", got.Schema, got.Verdict, got.IdleBreakdown.Share[analyze.Input], report.Schema)
	}
	if got.Job.Ranks != 4 || len(got.Job.Steps) != 5 || len(got.Ranks) != 4 {
		t.Fatalf("job of %d ranks, %d steps, %d rank reports; want 4, 5, 4", got.Job.Ranks, len(got.Job.Steps), len(got.Ranks))
	}
	s := got.Job.Steps[0]
	c := s.Collectives[0]
	if s.Straggler != 3 || s.Doing != "input" || c.WaitNs[0] != 1_950_000 || c.WaitNs[3] != 0 || c.TransferNs[3] != 200_000 ||
		c.Split.InputNs != 3*1_850_000 || c.Split.HostNs != 3*100_000 || c.Split.TotalNs != 3*1_950_000 {
		t.Errorf("first step %+v: want rank 3 in input, ranks 0-2 waiting 1.95 ms (1.85 ms input, 100 us host)", s)
	}
	for i, r := range got.Ranks {
		alone, straggles := "parallel", 0
		if i == 3 {
			alone, straggles = "data-bound", 5
		}
		if r.Rank != i || r.Verdict != "data-bound" || r.VerdictAlone != alone || r.Straggles != straggles || r.Report.Schema != report.Schema {
			t.Errorf("rank report %d: %+v; want rank %d, data-bound in the job, %s alone, %d straggles, its own v1 report", i, r, i, alone, straggles)
		}
	}
}

// TestWriteJobFormats: text, Markdown and HTML carry the job's sections
// after the run's, with the straggler named.
// TestWriteJobJSONStreamed: the job's JSON, written one rank at a time,
// is byte for byte JobJSONReport encoded whole, as writeJSON encodes a
// run's; the ranks' names hold "<" and "&", which stay unescaped.
func TestWriteJobJSONStreamed(t *testing.T) {
	jr := slowInputJob(t)
	for i := range jr.Ranks {
		jr.Ranks[i].Result.Source.Path = fmt.Sprintf("rank<%d>&.json", i)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(JobJSONReport(jr)); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := WriteJob(&got, jr, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("streamed job JSON differs from the whole encoding:\n%s", lineDiff(got.String(), want.String()))
	}
}

// lineDiff returns the first line where a and b differ, with its number.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(al), len(bl))
}

func TestWriteJobFormats(t *testing.T) {
	jr := slowInputJob(t)
	tests := []struct {
		f    Format
		want []string
	}{
		{Text, []string{"data-bound", "Job of 4 ranks (world size 4)", "Stragglers by step", "rank 3 (input)", "ncclKernel_AllReduce_RING_LL_Sum_float"}},
		{Markdown, []string{"**data-bound**", "#### Job", "| rank 3 (input) |", "<details><summary>Collectives</summary>"}},
		{HTML, []string{"<h2>Job</h2>", "<b>rank 0 collectives</b>", "<b>rank 3 collectives</b>", "rank 3 (input)", "</html>"}},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := WriteJob(&buf, jr, tt.f, Options{}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s report lacks %q", tt.f, w)
			}
		}
		if tt.f == HTML && strings.Index(out, "<h2>Job</h2>") > strings.Index(out, "<h2>Findings</h2>") {
			t.Errorf("HTML: the job's tables come after the findings")
		}
	}
	if err := WriteJob(&bytes.Buffer{}, nil, Text, Options{}); err == nil {
		t.Error("a nil job result: no error")
	}
}

// timelineLabel matches the bold label of a timeline row: a device or a
// rank's collectives.
var timelineLabel = regexp.MustCompile(`<div class="label"><b>([^<]*)</b>`)

// TestJobHTMLTimeline: each rank's collectives row comes right under the
// rank's device row (each rank of slowInputJob has one GPU), and the legend
// names the colour of collective waits; a single run's page has neither.
func TestJobHTMLTimeline(t *testing.T) {
	jr := slowInputJob(t)
	var job, single bytes.Buffer
	if err := WriteJob(&job, jr, HTML, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Write(&single, jr.Ranks[0].Result, HTML, Options{}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 4 {
		want = append(want, jr.Overall.Devices[i].ID, "rank "+strconv.Itoa(i)+" collectives")
	}
	if got := labels(job.String()); !slices.Equal(got, want) {
		t.Errorf("job timeline rows %q; want %q", got, want)
	}
	const legend = "waiting in a collective for the slowest rank</span>"
	if !strings.Contains(job.String(), legend) {
		t.Errorf("job page: no legend for collective waits")
	}
	if got := labels(single.String()); len(got) != 1 || strings.Contains(single.String(), legend) || strings.Contains(single.String(), "<h2>Job</h2>") {
		t.Errorf("single run's page: timeline rows %q, or a job's legend or tables; want its device alone", got)
	}
}

func labels(page string) []string {
	var out []string
	for _, m := range timelineLabel.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestJobTablesAddUp: in a job's text report the idle table's shares,
// busy and the job's rest included, add up to the window, and a step's
// busy, idle and rest columns to its duration (in the table's rounding:
// a tenth of a percent a row).
func TestJobTablesAddUp(t *testing.T) {
	jr := slowInputJob(t)
	var buf bytes.Buffer
	if err := WriteJob(&buf, jr, Text, Options{}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	rows := []string{"in-sync", "after-sync", "input", "runtime", "host", "untraced", "below min-gap", "wait: compute", "wait: late", "outside rank", "busy"}
	var sum float64
	for _, name := range rows {
		i := strings.Index(text, "\n  "+name+" ")
		if i < 0 {
			t.Fatalf("no %q row in the idle table:\n%s", name, text)
		}
		f := strings.Fields(text[i+len(name)+3:])
		k := 2 // the share follows a duration: "0", or a number and a unit
		if f[0] == "0" {
			k = 1
		}
		var share float64
		if _, err := fmt.Sscanf(f[k], "%f%%", &share); err != nil {
			t.Fatalf("row %q: no share in %q", name, f[:3])
		}
		sum += share
	}
	if sum < 99.9-0.05*float64(len(rows)) || sum > 100.1+0.05*float64(len(rows)) {
		t.Errorf("the idle table's shares add up to %.1f%%, want 100%%", sum)
	}
	o := &jr.Overall
	for i, s := range o.Steps {
		r := jr.Steps[i].Rest
		if got := s.DeviceBusy + s.Idle.Attributed() + s.Idle.BelowMinGap + r.Total(); abs64(got-s.Dur) > 64 {
			t.Errorf("step %s: busy + idle + rest %d ns, duration %d", s.Name, got, s.Dur)
		}
	}
	for _, want := range []string{"wait w/o cause", "outside rank", "busy w/o waits/window", "- outside the rank's own step"} {
		if !strings.Contains(text, want) {
			t.Errorf("the job's text report lacks %q", want)
		}
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestJobJSONRest: the JSON report carries the rest of the window and of
// each step, and with it the window's busy and idle add up to the window
// (to the rounding of averaging over ranks).
func TestJobJSONRest(t *testing.T) {
	// Rank 2 computes 800 us a step more than the others, who wait for it
	// in the all-reduce: a wait no idle cause explains (compute).
	jr := analyzeJob(t, tracetest.Job{Steps: 6, Input: []int64{200_000, 200_000, 200_000, 200_000}, Dispatch: 100_000,
		CollectiveDispatch: 50_000, Compute: 1_000_000, ExtraCompute: []int64{0, 0, 800_000, 0}, Transfer: 200_000})
	var buf bytes.Buffer
	if err := WriteJob(&buf, jr, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Window struct {
			DurNs int64 `json:"dur_ns"`
		} `json:"window"`
		Figures struct {
			WindowBusyNs int64 `json:"window_busy_ns"`
		} `json:"figures"`
		Idle struct {
			IdleNs int64 `json:"idle_ns"`
		} `json:"idle_breakdown"`
		Job struct {
			Rest  report.RestV1 `json:"rest"`
			Steps []struct {
				Rest report.RestV1 `json:"rest"`
			} `json:"steps"`
		} `json:"job"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if want := jsonRest(jr.Rest); got.Job.Rest != want || want.ComputeNs == 0 {
		t.Errorf("job.rest %+v, want %+v (compute not zero: the others wait for rank 2's work)", got.Job.Rest, want)
	}
	r := got.Job.Rest
	if sum := got.Figures.WindowBusyNs + got.Idle.IdleNs + r.ComputeNs + r.LateNs + r.OutsideNs; abs64(sum-got.Window.DurNs) > 64 {
		t.Errorf("busy + idle + rest = %d ns, window %d", sum, got.Window.DurNs)
	}
	for i, s := range got.Job.Steps {
		if want := jsonRest(jr.Steps[i].Rest); s.Rest != want {
			t.Errorf("step %d: rest %+v, want %+v", i, s.Rest, want)
		}
	}
}

// TestJobMarkdownAddsUp: the Markdown job report has the rest rows and
// columns that make its idle table and steps add up, as the text has.
func TestJobMarkdownAddsUp(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJob(&buf, slowInputJob(t), Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{`\| wait: compute +\|`, `\| wait: late +\|`, `\| outside rank +\|`, `\| busy +\|`, `wait w/o cause`, `busy w/o waits/window`} {
		if !regexp.MustCompile(want).MatchString(md) {
			t.Errorf("the job's Markdown report lacks %s", want)
		}
	}
}

// TestJobVerdictFinding: a job of two ranks stalled behind another
// stream's event, with no collective to name a straggler: the text and
// Markdown job reports give the job's verdict with the ranks' finding and
// fix for it.
func TestJobVerdictFinding(t *testing.T) {
	var ts []*trace.Trace
	for r := range 2 {
		s := tracetest.StreamWait{Steps: 6, Dispatch: 1_000_000, Wait: 8_030_000, Compute: 4_000_000}.Spec()
		s.Rank, s.WorldSize = r, 2
		ts = append(ts, tracetest.Build(s))
	}
	jr, err := adviseJob(ts)
	if err != nil {
		t.Fatal(err)
	}
	if jr.Overall.Verdict != analyze.Stalled || len(jr.Overall.Findings) == 0 || jr.Overall.Findings[0].ID != "stalled-device" {
		t.Fatalf("job %s, findings %+v: want stalled, led by stalled-device", jr.Overall.Verdict, jr.Overall.Findings)
	}
	// Each rank stalls 40 of its 65 ms behind the event; averaged over
	// the ranks, each rank's dependency holds half of it.
	o := &jr.Overall
	if o.StalledInSync != 40_000_000 || len(o.Dependencies) != 2 || o.Dependencies[0].Idle != 20_000_000 || !strings.HasPrefix(o.Dependencies[0].Stream, "rank 0 ") {
		t.Errorf("job stalled in sync %d, dependencies %+v; want 40 ms, each rank's event holding 20 ms", o.StalledInSync, o.Dependencies)
	}
	for _, tt := range []struct {
		f    Format
		want []string
	}{
		{Text, []string{"stalled (high confidence)", "[high] stalled-device: The job is stalled, as the findings of 2 of its 2 ranks say.", "fix: Look at what the queued work waits on"}},
		{Markdown, []string{"**stalled**", "**high** `stalled-device`: The job is stalled", "*Fix:* Look at what the queued work waits on"}},
	} {
		var buf bytes.Buffer
		if err := WriteJob(&buf, jr, tt.f, Options{}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s job report lacks %q", tt.f, w)
			}
		}
	}
}

// adviseJob analyses the job of ts with the default options and writes
// its findings.
func adviseJob(ts []*trace.Trace) (*job.Result, error) {
	jr, err := job.Analyze(ts, analyze.DefaultOptions())
	if err == nil {
		jobadvice.Add(jr)
	}
	return jr, err
}
