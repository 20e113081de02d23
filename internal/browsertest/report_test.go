package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/tracegap/tracegap/internal/cli"
	"github.com/tracegap/tracegap/internal/realtraces"
)

// writeReport runs `tracegap analyze` on the real trace (or directory of
// ranks) name and returns the file URL of its HTML report and its JSON
// report.
func writeReport(t *testing.T, name string) (url string, js jsonReport) {
	t.Helper()
	in := realtraces.Path(t, name)
	dir := t.TempDir()
	for _, f := range []string{"html", "json"} {
		out := filepath.Join(dir, "report."+f)
		if code := cli.Main([]string{"analyze", "--format", f, "-o", out, in}, io.Discard, io.Discard); code != 0 {
			t.Fatalf("tracegap analyze --format %s %s: exit %d", f, name, code)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.Join(dir, "report.html"), js
}

// jsonReport is what the tests need of the v1 JSON report.
type jsonReport struct {
	Steps []struct {
		Name    string `json:"name"`
		Num     int64  `json:"num"`
		StartNs int64  `json:"start_ns"`
		DurNs   int64  `json:"dur_ns"`
	} `json:"steps"`
	TopGaps []struct {
		StartNs int64 `json:"start_ns"`
		DurNs   int64 `json:"dur_ns"`
	} `json:"top_gaps"`
}

// view is the range the first run's timelines show, in trace ns.
type view struct{ a, b int64 }

func readView(t *testing.T, ctx context.Context) view {
	t.Helper()
	var s string
	run(t, ctx, "reading the view", chromedp.AttributeValue("section.run", "data-view", &s, nil, chromedp.ByQuery))
	a, b, ok := strings.Cut(s, ",")
	v := view{}
	var err1, err2 error
	v.a, err1 = strconv.ParseInt(a, 10, 64)
	v.b, err2 = strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("data-view = %q, want two integers", s)
	}
	return v
}

// holds reports whether v shows [start, end) with at most slack of its
// length either side (the page pads a zoom by 1%; SVG units round).
func (v view) holds(start, end int64, slack float64) bool {
	pad := int64(float64(end-start) * slack)
	return v.a <= start && v.b >= end && v.a >= start-pad && v.b <= end+pad
}

// blocks counts the drawn blocks: those of the first view and those drawn
// from the fine level, inside the visible range (SVG units).
const countBlocks = `(function () {
  var run = document.querySelector("section.run"), svg = run.querySelector("svg.tl:not(.steps)");
  var vb = svg.viewBox.baseVal, a = vb.x, b = vb.x + vb.width, n = {coarse: 0, fine: 0};
  ["coarse", "fine"].forEach(function (k) {
    svg.querySelectorAll("g." + k + " rect").forEach(function (r) {
      var x = Number(r.getAttribute("x")), w = Number(r.getAttribute("width"));
      if (x + w >= a && x <= b) n[k]++;
    });
  });
  return n;
})()`

type blockCount struct{ Coarse, Fine int }

func click(sel string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new MouseEvent("click", {bubbles: true}))`, sel), nil)
}

// TestReportZoomToStep: a click on a step shows that step, redrawn from the
// fine level with more blocks than the first view had there; the label on
// the band names it.
func TestReportZoomToStep(t *testing.T) {
	url, js := writeReport(t, "kineto-resnet50-workers0.pt.trace.json.gz")
	ctx := tab(t)
	run(t, ctx, "loading the report", chromedp.Navigate(url), chromedp.WaitVisible("section.run svg.tl", chromedp.ByQuery))
	screenshot(t, ctx, "report-html")
	const k = 2 // ProfilerStep#8
	st := js.Steps[k]
	var before blockCount
	run(t, ctx, "zooming to a step", chromedp.Evaluate(`document.querySelector("select.zoom").selectedIndex = 0`, nil),
		chromedp.Evaluate(`(function(){ var s = document.querySelector("select.zoom"); s.dispatchEvent(new Event("change")); })()`, nil),
		chromedp.Evaluate(countBlocks, &before), click(fmt.Sprintf(`rect.s[data-i="%d"]`, k)))
	if v := readView(t, ctx); !v.holds(st.StartNs, st.StartNs+st.DurNs, 0.03) {
		t.Errorf("after a click on %s the view is %d..%d, want %d..%d", st.Name, v.a, v.b, st.StartNs, st.StartNs+st.DurNs)
	}
	var after blockCount
	var selected, labels string
	run(t, ctx, "counting blocks", chromedp.Evaluate(countBlocks, &after),
		chromedp.Evaluate(`document.querySelector("select.zoom").selectedOptions[0].textContent`, &selected),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".steplabels span")).map(s => s.textContent).join(" ")`, &labels))
	if selected != st.Name {
		t.Errorf("selector shows %q, want %q", selected, st.Name)
	}
	if after.Fine <= before.Coarse/5 || after.Fine <= 0 {
		t.Errorf("zoomed to %s: %d blocks from the fine level, want more than the first view's %d over the whole span / 5", st.Name, after.Fine, before.Coarse)
	}
	if !strings.Contains(" "+labels+" ", fmt.Sprintf(" %d ", st.Num)) {
		t.Errorf("step band labels %q, want %d among them", labels, st.Num)
	}
	screenshot(t, ctx, "report-html-step")
}

// TestReportZoomToGap: a click on the longest gap of the JAX benchmark
// zooms in on it (it once zoomed out past the span), and the selector says
// so.
func TestReportZoomToGap(t *testing.T) {
	url, js := writeReport(t, "tracelens-jax-conv-block-until-ready.xplane.pb")
	ctx := tab(t)
	run(t, ctx, "loading the report", chromedp.Navigate(url), chromedp.WaitVisible("section.run svg.tl", chromedp.ByQuery))
	before := readView(t, ctx)
	g := js.TopGaps[0]
	// The gap's block in the first view is the one widest among gaps.
	run(t, ctx, "clicking the longest gap", chromedp.Evaluate(`(function () {
  var best = null;
  document.querySelectorAll("g.coarse rect.g").forEach(function (r) {
    if (!best || Number(r.getAttribute("width")) > Number(best.getAttribute("width"))) best = r;
  });
  best.dispatchEvent(new MouseEvent("click", {bubbles: true}));
})()`, nil))
	v := readView(t, ctx)
	if v.a > g.StartNs || v.b < g.StartNs+g.DurNs {
		t.Errorf("view %d..%d does not hold the gap %d..%d", v.a, v.b, g.StartNs, g.StartNs+g.DurNs)
	}
	if v.b-v.a >= before.b-before.a || v.b-v.a > 3*g.DurNs {
		t.Errorf("view %d..%d is not zoomed in on the %d ns gap (before: %d..%d)", v.a, v.b, g.DurNs, before.a, before.b)
	}
	var selected string
	run(t, ctx, "reading the selector", chromedp.Evaluate(`document.querySelector("select.zoom").selectedOptions[0].textContent`, &selected))
	if !strings.HasPrefix(selected, "the gap at ") {
		t.Errorf("selector shows %q, want the gap", selected)
	}
}

// TestReportStepLink: #step=9 opens the page on ProfilerStep#9, the step
// numbered 9, not the tenth.
func TestReportStepLink(t *testing.T) {
	url, js := writeReport(t, "kineto-resnet50-workers0.pt.trace.json.gz")
	ctx := tab(t)
	run(t, ctx, "following #step=9", chromedp.Navigate(url+"#step=9"), chromedp.WaitVisible("section.run svg.tl", chromedp.ByQuery))
	var selected string
	run(t, ctx, "reading the selector", chromedp.Evaluate(`document.querySelector("select.zoom").selectedOptions[0].textContent`, &selected))
	if selected != "ProfilerStep#9" {
		t.Errorf("#step=9 selects %q, want ProfilerStep#9", selected)
	}
	for _, st := range js.Steps {
		if st.Num == 9 {
			if v := readView(t, ctx); !v.holds(st.StartNs, st.StartNs+st.DurNs, 0.03) {
				t.Errorf("#step=9 shows %d..%d, want %d..%d", v.a, v.b, st.StartNs, st.StartNs+st.DurNs)
			}
		}
	}
}

// TestReportPrints: printed, the controls are gone and nothing is wider than
// an A4 page (the gaps table once ran off it); the PDF is made.
func TestReportPrints(t *testing.T) {
	url, _ := writeReport(t, "hta-torchrec-a100-rank0.json.gz")
	ctx := tab(t)
	// A4 at 96 dpi less 1 cm margins: 718 px.
	const pageW = 718
	var overflow []string
	var selectShown bool
	var pdf []byte
	run(t, ctx, "loading", chromedp.Navigate(url), chromedp.WaitVisible("section.run", chromedp.ByQuery))
	run(t, ctx, "print media", emulation.SetEmulatedMedia().WithMedia("print"))
	run(t, ctx, "viewport", chromedp.EmulateViewport(pageW, 1000))
	run(t, ctx, "printing", chromedp.Evaluate(`(function () {
  var w = document.documentElement.clientWidth, out = [];
  if (document.documentElement.scrollWidth > w) out.push("the page scrolls to " + document.documentElement.scrollWidth);
  document.querySelectorAll("body *").forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 1 && !e.closest("svg")) out.push(e.tagName + "." + e.className + " ends at " + Math.round(r.right));
  });
  return out.slice(0, 5);
})()`, &overflow),
		chromedp.Evaluate(`getComputedStyle(document.querySelector("select.zoom")).display !== "none"`, &selectShown),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			pdf, _, err = page.PrintToPDF().WithPaperWidth(8.27).WithPaperHeight(11.69).Do(ctx)
			return err
		}))
	if len(overflow) > 0 {
		t.Errorf("printed at %d px wide, these overflow: %v", pageW, overflow)
	}
	if selectShown {
		t.Error("the zoom selector prints")
	}
	if !strings.HasPrefix(string(pdf), "%PDF") {
		t.Errorf("PrintToPDF gave %d bytes, not a PDF", len(pdf))
	}
}

// TestJobReport: the job's page shows each rank's collective row right
// under that rank's device row, and no label wraps.
func TestJobReport(t *testing.T) {
	url, _ := writeReport(t, "param-dlrm-8ranks")
	ctx := tab(t)
	var labels []string
	var wrapped []string
	run(t, ctx, "loading the job report", chromedp.Navigate(url), chromedp.WaitVisible("section.run svg.tl", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".tlrow .label b")).map(b => b.textContent)`, &labels),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".tlrow .label b, .tlrow .label small")).filter(e => e.getClientRects().length > 1 || e.offsetHeight > 20).map(e => e.textContent)`, &wrapped))
	screenshot(t, ctx, "report-html-job")
	var ranks int
	for i, l := range labels {
		if !strings.HasSuffix(l, " collectives") {
			continue
		}
		ranks++
		rank := strings.TrimSuffix(l, " collectives") // "rank N"
		if i == 0 || !strings.HasPrefix(labels[i-1], rank+" ") {
			t.Errorf("row %q follows %q, want that rank's device", l, labels[max(i-1, 0)])
		}
	}
	if ranks != 8 {
		t.Errorf("%d rank rows, want 8: %q", ranks, labels)
	}
	if len(wrapped) > 0 {
		t.Errorf("labels wrap: %q", wrapped)
	}
}

// TestReportStepChart: the step chart shows a bar per step of the window,
// laid out across the page's width, and the sections the text report has
// (call sites, host ops) are on the page.
func TestReportStepChart(t *testing.T) {
	url, js := writeReport(t, "kineto-resnet50-workers0.pt.trace.json.gz")
	ctx := tab(t)
	var chart struct {
		Steps   int
		Width   float64
		Height  float64
		Headers []string
	}
	run(t, ctx, "loading the report", chromedp.Navigate(url), chromedp.WaitVisible("svg.stepchart", chromedp.ByQuery),
		chromedp.Evaluate(`(function(){
			var svg = document.querySelector("svg.stepchart"), r = svg.getBoundingClientRect();
			var steps = new Set(Array.from(svg.querySelectorAll("rect.sc")).map(e => e.dataset.step));
			return {Steps: steps.size, Width: r.width, Height: r.height,
				Headers: Array.from(document.querySelectorAll("h2")).map(h => h.textContent)};
		})()`, &chart))
	if chart.Steps != len(js.Steps) || chart.Width < 400 || chart.Height < 100 {
		t.Errorf("step chart: %d steps in %.0fx%.0f px, want %d steps, drawn large", chart.Steps, chart.Width, chart.Height, len(js.Steps))
	}
	for _, h := range []string{"Step time and its shares", "Call sites (where the idle was caused)", "Host ops holding the device idle"} {
		if !slices.Contains(chart.Headers, h) {
			t.Errorf("the page lacks %q: %q", h, chart.Headers)
		}
	}
}
