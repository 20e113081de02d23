package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/report"
)

func TestDuration(t *testing.T) {
	if got := shortDuration(20_000); got != "20 us" {
		t.Errorf("shortDuration(20us) = %q, want 20 us", got)
	}
	if got := shortPercent(0.025); got != "2.5%" {
		t.Errorf("shortPercent(0.025) = %q, want 2.5%%", got)
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Format
		ok   bool
	}{
		{"text", Text, true}, {"JSON", JSON, true}, {"md", Markdown, true},
		{"markdown", Markdown, true}, {" html", HTML, true}, {"xml", "", false}, {"", "", false},
	}
	for _, tt := range tests {
		got, err := ParseFormat(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "expected "+FormatNames(OfRuns)) {
			t.Errorf("ParseFormat(%q) error %q does not say what is expected", tt.in, err)
		}
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name   string
		modify func(r *analyze.Result)
		want   string
	}{
		{"data-bound", func(*analyze.Result) {},
			"data-bound (high confidence): the GPU waited on the input pipeline for 15.0% of the 2 steps; the input pipeline takes 750 us per step against 3.70 ms of GPU work"},
		{"data-bound exposed by a sync", func(r *analyze.Result) { r.Idle.ByCause[analyze.InSync] = 3 * ms },
			"data-bound (high confidence): the GPU waited on blocking calls that exposed the input pipeline for 30.0% of the 2 steps; the input pipeline takes 750 us per step against 3.70 ms of GPU work"},
		{"sequential", func(r *analyze.Result) {
			r.Verdict, r.Confidence, r.Idle.ByCause[analyze.AfterSync] = analyze.Sequential, analyze.Medium, 1*ms
		}, "sequential (medium confidence): the GPU waited on the host's blocking calls for 15.0% of the 2 steps: 5.0% inside a sync, 10.0% right after one"},
		{"host-bound, no steps", func(r *analyze.Result) {
			r.Verdict, r.Window.Steps, r.Idle.ByCause[analyze.Host] = analyze.HostBound, 0, 2*ms
		}, "host-bound (high confidence): the GPU waited on other host work (op dispatch, launches, Python, CPU ops, runtime) for 20.0% of the traced span (no steps found)"},
		{"host-bound on run-time work", func(r *analyze.Result) {
			r.Verdict, r.Window.Steps, r.Idle.ByCause[analyze.Runtime] = analyze.HostBound, 0, 2*ms
		}, "host-bound (high confidence): the GPU waited on run-time work (compilation, module loading, allocation, warm-up) and other host work for 25.0% of the traced span (no steps found)"},
		{"host-bound on communication", func(r *analyze.Result) {
			r.Verdict, r.Window.Steps, r.Idle.ByCause[analyze.Host] = analyze.HostBound, 0, 2*ms
			r.Findings = append(r.Findings, analyze.Finding{ID: advice.FindCommWait})
		}, "host-bound (high confidence): the GPU waited on the host's communication calls (MPI, gloo, NCCL set-up) and other host work for 20.0% of the traced span (no steps found)"},
		{"parallel, two TPUs, warm-up dropped", func(r *analyze.Result) {
			r.Verdict, r.Window.WarmupDropped = analyze.Parallel, true
			r.Devices = []analyze.Device{{ID: "TPU:0", WindowBusy: 9 * ms}, {ID: "TPU:1", WindowBusy: 8 * ms}}
		}, "parallel (high confidence): the 2 TPUs were busy 85.0% of the 2 steady-state steps; no cause of idle is over its threshold (sync 5.0%, input 15.0%, other host work 5.0%)"},
		{"no device", func(r *analyze.Result) {
			r.Verdict, r.Devices, r.Reasons = analyze.NoDevice, nil, []string{"the trace holds 12 host events but no device activity"}
		}, "no-device: the trace holds 12 host events but no device activity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fixtureResult()
			tt.modify(r)
			if got := Summary(r); got != tt.want {
				t.Errorf("Summary =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestJSONReport(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, fixtureResult(), JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var r report.Report
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("decoding the report into report.Report: %v", err)
	}
	if r.Schema != "tracegap/report/v1" || r.Verdict != "data-bound" || r.Confidence != "high" {
		t.Errorf("schema, verdict, confidence = %q, %q, %q", r.Schema, r.Verdict, r.Confidence)
	}
	if r.Source.Path != "runs/a.pt.trace.json.gz" || r.Source.Bytes != 12_345_678 || r.Source.Events != 54_321 || len(r.Source.Warnings) != 1 {
		t.Errorf("source = %+v", r.Source)
	}
	if th := r.Thresholds; th.MinGapNs != 20_000 || th.SyncSlackNs != 50_000 || th.Sync != 0.05 || th.Input != 0.05 || th.Host != 0.15 {
		t.Errorf("thresholds = %+v", th)
	}
	if w := r.Window; w.StartNs != 1*ms || w.EndNs != 11*ms || w.DurNs != 10*ms || w.Steps != 2 || w.StepSource != "ProfilerStep" {
		t.Errorf("window = %+v", w)
	}
	b := r.IdleBreakdown
	if b.Ns[analyze.InSync] != 500_000 || b.Ns[analyze.Input] != 1_500_000 || b.Ns[analyze.Host] != 500_000 || b.Ns[analyze.Untraced] != 100_000 ||
		b.BelowMinGapNs != 50_000 || b.IdleNs != 2_650_000 {
		t.Errorf("idle breakdown ns = %+v", b)
	}
	if b.Share[analyze.Input] != 0.15 || b.SyncShare != 0.05 || b.Share[analyze.Untraced] != 0.01 || b.IdleShare != 0.265 {
		t.Errorf("idle breakdown shares = %+v", b)
	}
	if len(r.Devices) != 1 || r.Devices[0].SpanNs != 12*ms || r.Devices[0].Utilization != 0.7792 || r.Devices[0].WindowIdle.Share[analyze.Input] != 0.15 {
		t.Errorf("devices = %+v", r.Devices)
	}
	if len(r.Steps) != 2 || r.Steps[1].SyncNs != 500_000 || r.Steps[1].Verdict != "sequential" || r.Steps[0].Idle.Share[analyze.Input] != 0.3 {
		t.Errorf("steps = %+v", r.Steps)
	}
	if len(r.TopGaps) != 3 {
		t.Fatalf("%d top gaps, want 3", len(r.TopGaps))
	}
	g := r.TopGaps[0]
	if g.Cause != "input" || g.DurNs != 2*ms || g.Step != 0 || len(g.Stacks) != 2 || g.Split.Share[analyze.Input] != 0.75 ||
		g.Stacks[0].DurNs != 1_500_000 || g.Stacks[1].Cause != "host" ||
		strings.Join(g.HostStack, ";") != "ProfilerStep#1;enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" {
		t.Errorf("top gap 0 = %+v", g)
	}
	if g := r.TopGaps[2]; g.HostStack == nil || len(g.HostStack) != 0 || g.Stacks[0].Stack == nil {
		t.Errorf("untraced gap stacks must be empty lists, not null: %+v", g)
	}
	if len(r.Findings) != 1 || r.Findings[0].ID != "slow-input" || r.Findings[0].Fix == "" {
		t.Errorf("findings = %+v", r.Findings)
	}
	if len(r.Secondary) != 1 || r.Secondary[0] != "sequential" {
		t.Errorf("secondary = %v", r.Secondary)
	}
}

func TestJSONSeveralAndEmptyLists(t *testing.T) {
	empty := &analyze.Result{Verdict: analyze.NoDevice, Confidence: analyze.High, Options: analyze.DefaultOptions()}
	var buf bytes.Buffer
	if err := WriteAll(&buf, []*analyze.Result{fixtureResult(), empty}, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var rs []report.Report
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rs); err != nil {
		t.Fatalf("several results must make a JSON array of reports: %v", err)
	}
	if len(rs) != 2 || rs[0].Verdict != "data-bound" || rs[1].Verdict != "no-device" {
		t.Fatalf("decoded %d reports: %+v", len(rs), rs)
	}
	if bytes.Contains(buf.Bytes(), []byte("null")) {
		t.Errorf("a report holds null; lists must be [] instead:\n%s", buf.String())
	}
}

func TestText(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, fixtureResult(), Text, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// Compare with runs of spaces collapsed: column widths are
	// tablewriter's business.
	spaces := regexp.MustCompile(` +`)
	flat := spaces.ReplaceAllString(out, " ")
	want := []string{
		"runs/a.pt.trace.json.gz  (chrome, 12.3 MB, 54,321 events)\n\ndata-bound (high confidence): the GPU waited",
		"also over its threshold: sequential",
		"input 1.50 ms 15.0% in the input pipeline",
		"all idle 2.65 ms 26.5%",
		"sync 5.0% (threshold 5%), input 15.0% (threshold 5%) OVER, host 5.0% (threshold 15%)",
		"Longest gaps (3 of 3)",
		"1 GPU:0 2.000 ms 2.00 ms input ProfilerStep#1 thread 7 (python) ProfilerStep#1 > enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
		"ProfilerStep#2 > aten::item > cudaStreamSynchronize",
		"(no event on this thread)",
		"mean 5.00 ms 3.70 ms 750 us 250 us 1.32 ms",
		"[high] slow-input: Single-process DataLoader",
		"    fix: DataLoader(num_workers=2, pin_memory=True)",
		"Thresholds: min-gap 20 us, sync-slack 50 us, sync 5%, input 5%, host 15%",
		"Warnings (1):\n  - dropped 3 events",
	}
	for _, w := range want {
		if !strings.Contains(flat, spaces.ReplaceAllString(w, " ")) {
			t.Errorf("text report lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("text without Options.Color holds ANSI escapes")
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.TrimRight(line, " ") != line {
			t.Errorf("line %d ends in spaces: %q", i+1, line)
		}
	}
	buf.Reset()
	if err := Write(&buf, fixtureResult(), Text, Options{Color: true, Top: 1, MaxSteps: 1}); err != nil {
		t.Fatal(err)
	}
	out = buf.String()
	for _, w := range []string{"\x1b[1m\x1b[31mdata-bound\x1b[0m (high", "Longest gaps (1 of 3)", "... 1 more steps"} {
		if !strings.Contains(out, w) {
			t.Errorf("coloured, capped text report lacks %q:\n%s", w, out)
		}
	}
}

func TestMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, fixtureResult(), Markdown, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{
		"### tracegap: `a.pt.trace.json.gz` is **data-bound**",
		`takes 750 us per step \| against &lt;3.70 ms&gt; of GPU work`,
		`*Fix:* DataLoader(num\_workers=2, pin\_memory=True)`,
		"<summary>Longest gaps (3 of 3)</summary>",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("markdown lacks %q:\n%s", w, out)
		}
	}
	// Every row of a table has as many unescaped pipes as its header.
	unescaped := regexp.MustCompile(`(^|[^\\])\|`)
	pipes := -1
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			pipes = -1
			continue
		}
		n := len(unescaped.FindAllString(line, -1))
		if pipes >= 0 && n != pipes {
			t.Errorf("table row has %d cell separators, header %d: %q", n, pipes, line)
		}
		if pipes < 0 {
			pipes = n
		}
	}
}

func TestHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, fixtureResult(), HTML, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{
		"<!DOCTYPE html>", `<span class="verdict v-data-bound">data-bound</span>`,
		// The badge shows the verdict; the summary goes on from the confidence.
		`<p class="summary">high confidence: the GPU waited on the input pipeline for 15.0% of the 2 steps; the input pipeline takes 750 us per step against 3.70 ms of GPU work</p>`,
		`<svg class="tl steps"`, `<svg class="tl" data-h="50"`,
		// Every gap is drawn with its cause colour and its host stack.
		`fill="` + causeColor[analyze.Input] + `"><title>gap 2.00 ms at 2.000 ms: input`,
		"mostly in:&#10;  ProfilerStep#2&#10;  aten::item&#10;  cudaStreamSynchronize</title>",
		"<title>untraced for 100 us:&#10;  (no event on this thread)</title>",
		// Steps are picked by their number (#step=1).
		`<option class="step" value="833.3,5000" data-num="1">ProfilerStep#1</option>`,
		`Single-process DataLoader takes 750 us per step | against &lt;3.70 ms&gt;`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("HTML lacks %q", w)
		}
	}
	// Self-contained: nothing loaded from elsewhere, nothing the template
	// engine refused.
	for _, bad := range []string{"http://", "https://", " src=", "@import", "url(", "ZgotmplZ"} {
		if strings.Contains(out, bad) {
			t.Errorf("HTML holds %q", bad)
		}
	}
	if n := strings.Count(out, "<svg"); n != 3 {
		t.Errorf("%d SVGs, want 3 (steps, the step chart and GPU:0)", n)
	}
}

func TestCoalesce(t *testing.T) {
	m := func(s, e int64, c string) mark { return mark{start: s, end: e, color: c, busy: e - s} }
	marks := []mark{
		m(0, 2, "a"), m(3, 5, "b"), m(5, 6, "b"), // merged: one bucket of width 10
		m(20, 60, "c"),                 // wide: kept
		m(70, 71, "a"), m(85, 86, "a"), // different buckets: kept apart
	}
	got := coalesce(marks, 10, "gaps")
	want := []mark{
		{start: 0, end: 6, color: "b", busy: 5, title: "3 gaps, 5 ns in 6 ns"},
		m(20, 60, "c"), m(70, 71, "a"), m(85, 86, "a"),
	}
	if len(got) != len(want) {
		t.Fatalf("coalesce = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mark %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestHTMLStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 200,000 intervals")
	}
	// 200,000 busy intervals and 100,000 gaps over 10 s: the timeline
	// merges what is narrower than a bucket, so the page stays small.
	r := fixtureResult()
	d := &r.Devices[0]
	d.Start, d.End, d.Intervals = 0, 10_000*ms, nil
	r.Window = analyze.Window{Start: 0, End: 10_000 * ms}
	r.Gaps, r.TopGaps, r.Steps = nil, nil, nil
	for i := int64(0); i < 200_000; i++ {
		d.Intervals = append(d.Intervals, analyze.Interval{Start: i * 50_000, End: i*50_000 + 30_000})
		if i%2 == 0 {
			g := analyze.Gap{Device: "GPU:0", Start: i*50_000 + 30_000, Dur: 20_000, Cause: analyze.Host}
			r.SetSegments(&g, analyze.NamedSegment{Start: g.Start, Dur: 20_000, Cause: analyze.Host, Stack: []string{"aten::linear"}})
			r.Gaps = append(r.Gaps, g)
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, r, HTML, Options{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "<rect"); n > 3*timelineBuckets+10 {
		t.Errorf("%d rects for one device, want at most %d", n, 3*timelineBuckets+10)
	}
	if buf.Len() > 3<<20 {
		t.Errorf("page is %d bytes, want under 3 MiB", buf.Len())
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error { io.WriteString(w, "partial"); return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("WriteFile error = %v, want boom naming %s", err, path)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "first" {
		t.Errorf("after a failed write the file holds %q, want the old content", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
	// A missing folder is said in words, without the temporary file's name.
	missing := filepath.Join(dir, "no", "such", "dir.json")
	want := "creating " + missing + ": the folder " + filepath.Join(dir, "no", "such") + " does not exist: create it first, or give another path"
	if err := WriteFile(missing, func(io.Writer) error { return nil }); err == nil || err.Error() != want {
		t.Errorf("WriteFile into a missing directory: %v, want %q", err, want)
	}
}

// TestWriteFilePanic checks that a write that panics (out of memory under
// run.Protect) leaves no temporary file behind, and the old file whole.
func TestWriteFilePanic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := os.WriteFile(path, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() { recover() }()
		WriteFile(path, func(w io.Writer) error { io.WriteString(w, "partial"); panic("out of memory") })
	}()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("after a panic, files %v, want only %s", ents, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "first" {
		t.Errorf("after a panic the file holds %q, want the old content", got)
	}
}

func TestWriteRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, fixtureResult(), Format("xml"), Options{}); err == nil {
		t.Error("Write accepted format xml")
	}
	if err := WriteAll(&buf, []*analyze.Result{nil}, Text, Options{}); err == nil {
		t.Error("WriteAll accepted a nil result")
	}
}

func TestGapStacks(t *testing.T) {
	seg := func(d int64, c analyze.Cause, stack ...string) analyze.NamedSegment {
		return analyze.NamedSegment{Dur: d, Cause: c, Stack: stack}
	}
	res, g := gapOf(
		seg(10, analyze.Input, "loader", "cat"), seg(30, analyze.Input, "loader", "stack"),
		seg(15, analyze.Input, "loader", "cat"), seg(5, analyze.Host, "loader", "cat"),
		seg(1, analyze.Input, "loader", "x"), seg(2, analyze.Untraced),
	)
	got := gapStacks(res, g, 3)
	want := []string{"input loader;stack 30 1", "input loader;cat 25 2", "host loader;cat 5 1"}
	if len(got) != len(want) {
		t.Fatalf("gapStacks = %+v, want %v", got, want)
	}
	for i, s := range got {
		if d := fmt.Sprintf("%s %s %d %d", s.Cause, strings.Join(s.Stack, ";"), s.DurNs, s.Segments); d != want[i] {
			t.Errorf("stack %d = %s, want %s", i, d, want[i])
		}
	}
}

// gapOf returns a result holding one gap, of segs.
func gapOf(segs ...analyze.NamedSegment) (*analyze.Result, *analyze.Gap) {
	res := &analyze.Result{Gaps: []analyze.Gap{{}}}
	res.SetSegments(&res.Gaps[0], segs...)
	return res, &res.Gaps[0]
}

func TestDescribeStack(t *testing.T) {
	seg := func(stack ...string) analyze.NamedSegment {
		return analyze.NamedSegment{Dur: int64(len(stack)), Stack: stack}
	}
	tests := []struct {
		segs []analyze.NamedSegment
		want string
	}{
		{nil, "(no event on this thread)"},
		{[]analyze.NamedSegment{seg("step", "a", "b", "c", "d")}, "... > b > c > d"},
		{[]analyze.NamedSegment{seg("step", "loader"), seg("step", "loader", "stack", "cat", "_cat"), seg("step", "loader", "x")},
			"step > loader > ... > _cat"},
		{[]analyze.NamedSegment{seg("step", "loader"), seg("step", "loader", "cat")}, "step > loader > cat"},
		{[]analyze.NamedSegment{seg("a", "b"), seg("c", "d", "e")}, "c > d > e"},
	}
	for _, tt := range tests {
		res, g := gapOf(tt.segs...)
		if got := describeStack(res, g, 3); got != tt.want {
			t.Errorf("describeStack(%v) = %q, want %q", tt.segs, got, tt.want)
		}
	}
	// Stretches of another cause (the thread between two loader calls)
	// do not hide the frames the input stretches share.
	res, g := gapOf(
		analyze.NamedSegment{Dur: 9, Cause: analyze.Input, Stack: []string{"step", "loader", "stack", "cat"}},
		analyze.NamedSegment{Dur: 1, Cause: analyze.Host, Stack: []string{"step"}},
		analyze.NamedSegment{Dur: 2, Cause: analyze.Input, Stack: []string{"step", "loader", "collate"}},
	)
	g.Cause = analyze.Input
	if got, want := describeStack(res, g, 3), "step > loader > ... > cat"; got != want {
		t.Errorf("describeStack of a mixed gap = %q, want %q", got, want)
	}
	// An in-sync gap whose waited-for thread shows nothing (JAX's runtime
	// thread while Python blocks) names the call its time went to: the
	// longest in-sync stretch's.
	res, g = gapOf(
		analyze.NamedSegment{Dur: 2, Cause: analyze.InSync, Sync: "jax.block_until_ready"},
		analyze.NamedSegment{Dur: 5, Cause: analyze.InSync, Sync: "aten::item"},
		analyze.NamedSegment{Dur: 9, Cause: analyze.Untraced},
	)
	g.Cause = analyze.InSync
	if got, want := describeStack(res, g, 3), "blocked in aten::item"; got != want {
		t.Errorf("describeStack of an in-sync gap without stack = %q, want %q", got, want)
	}
	// A runtime gap whose thread waited inside a dispatch for another
	// thread's runtime work names that work after the dispatch: the
	// longest runtime stretch's.
	exec := []string{"PjitFunction(f)", "TfrtTpuLoadedExecutable::Execute"}
	res, g = gapOf(
		analyze.NamedSegment{Dur: 3, Cause: analyze.Runtime, Stack: exec, Sync: "LoadProgramCacheMiss"},
		analyze.NamedSegment{Dur: 5, Cause: analyze.Runtime, Stack: exec, Sync: "TfrtTpuClient::DefragmentMemory"},
		analyze.NamedSegment{Dur: 1, Cause: analyze.Host, Stack: exec},
	)
	g.Cause = analyze.Runtime
	if got, want := describeStack(res, g, 3), "TfrtTpuLoadedExecutable::Execute waiting on TfrtTpuClient::DefragmentMemory"; got != want {
		t.Errorf("describeStack of a runtime gap behind a dispatch = %q, want %q", got, want)
	}
	// The HTML timeline's tooltip says it too.
	g.Thread = "main/1"
	if got := gapTitle(res, g); !strings.HasSuffix(got, "\n  waiting on TfrtTpuClient::DefragmentMemory") {
		t.Errorf("gap tooltip %q does not end with the work it waited on", got)
	}
}

func TestHTMLSeveralRuns(t *testing.T) {
	second := fixtureResult()
	second.Source.Path = "runs/b.xplane.pb"
	var buf bytes.Buffer
	if err := WriteAll(&buf, []*analyze.Result{fixtureResult(), second}, HTML, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{`<section class="run" id="run0"`, `<section class="run" id="run1"`, "<title>tracegap: a.pt.trace.json.gz: data-bound, b.xplane.pb: data-bound</title>"} {
		if !strings.Contains(out, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if n := strings.Count(out, `<select class="zoom">`); n != 2 {
		t.Errorf("%d zoom selectors, want one per run", n)
	}
}

func TestTipStack(t *testing.T) {
	var deep []string
	for i := range 12 {
		deep = append(deep, fmt.Sprintf("f%d", i))
	}
	deep[11] = strings.Repeat("x", 150)
	got := tipStack(deep)
	want := "\n  (4 outer frames)\n  f4\n  f5\n  f6\n  f7\n  f8\n  f9\n  f10\n  " + strings.Repeat("x", 97) + "..."
	if got != want {
		t.Errorf("tipStack = %q, want %q", got, want)
	}
}

func TestNoDevice(t *testing.T) {
	res := &analyze.Result{
		Source:     analyze.Source{Path: "cpu.json", Format: "chrome", Events: 7},
		Verdict:    analyze.NoDevice,
		Confidence: analyze.High,
		Reasons:    []string{"the trace holds 7 host events but no device activity", "one more thing"},
		Options:    analyze.DefaultOptions(),
	}
	for _, f := range Formats(OfRuns) {
		var buf bytes.Buffer
		if err := Write(&buf, res, f, Options{}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out := buf.String()
		if n := strings.Count(out, "the trace holds 7 host events but no device activity"); n != 1 && f != JSON {
			t.Errorf("%s: the reason appears %d times, want once (in the summary)", f, n)
		}
		if !strings.Contains(out, "one more thing") {
			t.Errorf("%s: the second reason is missing", f)
		}
		if f != JSON && (strings.Contains(out, "Longest gaps") || strings.Contains(out, "<svg")) {
			t.Errorf("%s: a no-device report shows gaps or timelines", f)
		}
		const badged = `<span class="verdict v-no-device">no-device</span>cpu.json</h1>
<div class="facts">cpu.json (chrome, 7 events)</div>
<p class="summary">the trace holds 7 host events but no device activity</p>`
		if f == HTML && !strings.Contains(out, badged) {
			t.Errorf("HTML: no badge no-device followed by the reason alone as the summary")
		}
	}
}

// TestUnsitedNote: the note under the call sites names, by cause, the idle
// no call site holds. Sync (in-sync 40 + after-sync 10) is all in its
// site; runtime 30 has 20 in a site, host 5 none, untraced 7 never can.
func TestUnsitedNote(t *testing.T) {
	res := &analyze.Result{
		Idle: analyze.Breakdown{ByCause: [analyze.NumCauses]int64{
			analyze.InSync: 40_000, analyze.AfterSync: 10_000, analyze.Runtime: 30_000, analyze.Host: 5_000, analyze.Untraced: 7_000}},
		CallSites: []analyze.CallSite{
			{Call: "aten::item", Cause: analyze.InSync, Idle: 50_000},
			{Call: "TfrtTpuClient::DefragmentMemory", Cause: analyze.Runtime, Idle: 20_000},
		},
	}
	want := "Idle with no traced call to blame, in no call site: runtime 10.0 us, host 5.00 us, untraced 7.00 us."
	if got := unsitedNote(res); got != want {
		t.Errorf("unsitedNote = %q, want %q", got, want)
	}
	res.CallSites[1].Idle = 30_000
	res.Idle.ByCause[analyze.Host], res.Idle.ByCause[analyze.Untraced] = 0, 0
	if got := unsitedNote(res); got != "" {
		t.Errorf("unsitedNote with every cause in its sites = %q, want none", got)
	}
}

// TestMoreSitesNote: the call sites past the table's rows are summed by
// cause, so that a cause's rows, this note and the unsited note add up to
// its idle.
func TestMoreSitesNote(t *testing.T) {
	res := &analyze.Result{}
	for i := range insightRows + 3 {
		c := analyze.Host
		if i%2 == 1 {
			c = analyze.InSync
		}
		res.CallSites = append(res.CallSites, analyze.CallSite{Call: fmt.Sprint("call", i), Cause: c, Idle: int64(1000 * (10 - i))})
	}
	// Rows 5, 6, 7 are left out: sync 5 us and 3 us, host 4 us.
	if got, want := moreSitesNote(res), "3 more call sites, not shown (the JSON report lists every one): sync 8.00 us, host 4.00 us."; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	res.CallSites = res.CallSites[:insightRows]
	if got := moreSitesNote(res); got != "" {
		t.Errorf("note %q with every site shown, want none", got)
	}
}
