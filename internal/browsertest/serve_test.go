package browsertest

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/render"
	engine "github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/serve"
	_ "github.com/tracegap/tracegap/trace/all"
)

// service runs the upload service as `tracegap serve` wires it.
func service(t *testing.T) string {
	t.Helper()
	e := &engine.Engine{Analysis: analyze.DefaultOptions(), Jobs: 2}
	cfg := serve.Config{DataDir: t.TempDir()}
	cfg.UseEngine(e, render.Options{})
	s, err := serve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts.URL
}

var reportURL = regexp.MustCompile(`/traces/[0-9a-f]{16}$`)

// uploadForm uploads files through the upload form and waits for the
// report it lands on, whole: the first timeline shows while a long report
// is still arriving (a job's later ranks came after it on a loaded
// machine). It returns the report's URL.
func uploadForm(t *testing.T, ctx context.Context, base string, files ...string) string {
	t.Helper()
	var loc string
	run(t, ctx, "uploading "+filepath.Base(files[0]), chromedp.Navigate(base+"/"),
		chromedp.SetUploadFiles(`form.up input[type=file]`, files, chromedp.ByQuery),
		chromedp.Click(`form.up button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`section.run svg.tl`, chromedp.ByQuery),
		chromedp.Poll(`document.readyState === "complete"`, nil),
		chromedp.Location(&loc))
	if !reportURL.MatchString(loc) {
		t.Fatalf("the upload of %s landed on %s, want its report /traces/ID", files, loc)
	}
	return loc
}

// TestService: upload through the form and land on the report, go to the
// list by the header, upload the 8 DLRM ranks and get one job, compare two
// runs from a report's "compare with".
func TestService(t *testing.T) {
	ctx := tab(t)
	base := service(t)
	workers0 := realtraces.Path(t, "kineto-resnet50-workers0.pt.trace.json.gz")
	first := uploadForm(t, ctx, base, workers0)
	screenshot(t, ctx, "serve-report")

	var listed string
	run(t, ctx, "following the header to the list",
		chromedp.Click(`header.tg-nav a[href="/traces"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`form[action="/compare"] table`, chromedp.ByQuery),
		chromedp.Text(`form[action="/compare"] table`, &listed, chromedp.ByQuery))
	if !strings.Contains(listed, "kineto-resnet50-workers0.pt.trace.json.gz") || !strings.Contains(listed, "sequential") {
		t.Errorf("the list shows %q, want the upload and its verdict", listed)
	}

	dir := filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks")
	ranks, err := filepath.Glob(filepath.Join(dir, "*.pt.trace.json.gz"))
	if err != nil || len(ranks) != 8 {
		t.Fatalf("want the 8 DLRM ranks in %s, got %d (%v)", dir, len(ranks), err)
	}
	uploadForm(t, ctx, base, ranks...)
	var rows []string
	run(t, ctx, "reading the job's rows", chromedp.Evaluate(`Array.from(document.querySelectorAll(".tlrow .label b")).map(b => b.textContent)`, &rows))
	if n := strings.Count(strings.Join(rows, "\n"), " collectives"); n != 8 {
		t.Errorf("the 8 ranks' upload shows %d rank rows, want one job of 8: %q", n, rows)
	}
	screenshot(t, ctx, "serve-job")

	// workers4 is parallel where workers0 was sequential: the compare
	// page calls out the better verdict.
	uploadForm(t, ctx, base, realtraces.Path(t, "kineto-resnet50-workers4.pt.trace.json.gz"))
	firstID := first[strings.LastIndex(first, "/")+1:]
	var callout, verdictClass string
	var better, worse, bars int
	run(t, ctx, "comparing with the first run",
		chromedp.SetValue(`header.tg-nav select[name=new]`, firstID, chromedp.ByQuery),
		chromedp.Click(`header.tg-nav form[action="/compare"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`p.callout`, chromedp.ByQuery),
		chromedp.Text(`p.callout`, &callout, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("p.callout").className`, &verdictClass),
		chromedp.Evaluate(`document.querySelectorAll("td.better").length`, &better),
		chromedp.Evaluate(`document.querySelectorAll("td.worse").length`, &worse),
		chromedp.Evaluate(`document.querySelectorAll("figure.chart svg rect").length`, &bars))
	// The new run is workers0 (sequential), the base workers4 (parallel).
	if !strings.Contains(callout, "parallel in the base, sequential in the new run") || verdictClass != "callout worse" {
		t.Errorf("compare calls out %q (%s), want parallel -> sequential, worse", callout, verdictClass)
	}
	if better+worse == 0 {
		t.Error("no change on the compare page is marked better or worse")
	}
	// Two runs, each a bar stacked busy, input, syncs and other.
	if bars < 6 {
		t.Errorf("the compare page's chart has %d bars' parts, want the two runs' stacks", bars)
	}
	screenshot(t, ctx, "serve-compare")
	run(t, ctx, "back to the list", chromedp.Navigate(base+"/traces"), chromedp.WaitVisible(`table`, chromedp.ByQuery))
	screenshot(t, ctx, "serve-list")
}
