package render_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/report"
)

// TestRealReports renders every real trace that analyses in every format
// and checks each report against the result: the real traces stay out of
// the golden files (they are not in the repository), so this is what keeps
// their reports honest. analyze.TestRealFigures pins the figures.
func TestRealReports(t *testing.T) {
	for _, c := range realtraces.Sample(t) {
		if slices.Contains(c.Expect, "error") {
			continue
		}
		t.Run(c.File, func(t *testing.T) {
			res := analyzed(t, goldenTrace{name: c.File, path: "../shared/traces/" + c.File})
			out := map[string]string{}
			for _, gf := range goldenFormats {
				var buf bytes.Buffer
				if err := render.Write(&buf, res, gf.f, render.Options{}); err != nil {
					t.Fatalf("%s: %v", gf.f, err)
				}
				out[gf.ext] = buf.String()
			}
			verdict := string(res.Verdict)
			named := strings.Contains(out["txt"], "\n"+verdict+" (") || strings.Contains(out["txt"], "\n"+verdict+": ")
			if !strings.HasPrefix(out["txt"], c.File+"  (") || !named {
				t.Errorf("text report does not open with %s and its verdict %s:\n%.300s", c.File, verdict, out["txt"])
			}
			if want := "### tracegap: `" + c.File + "` is **" + verdict + "**"; !strings.HasPrefix(out["md"], want) {
				t.Errorf("Markdown report opens with %.100q, want %q", out["md"], want)
			}
			checkRealJSON(t, out["json"], res)
			// One timeline per device, and a band of steps where there are
			// steps; the page stays small whatever the trace.
			want := len(res.Devices)
			if len(res.Steps) > 0 && want > 0 {
				want++
			}
			if n := strings.Count(out["html"], `<svg class="tl`); n != want {
				t.Errorf("HTML report has %d timelines, want %d", n, want)
			}
			if n := len(out["html"]); n > 2<<20 {
				t.Errorf("HTML report is %d bytes, want at most 2 MiB", n)
			}
		})
	}
}

// checkRealJSON checks that the JSON report carries the result's verdict,
// window and device figures.
func checkRealJSON(t *testing.T, text string, res *analyze.Result) {
	t.Helper()
	var rep report.Report
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("JSON report: %v", err)
	}
	if rep.Verdict != string(res.Verdict) || rep.Source.Events != res.Source.Events {
		t.Errorf("JSON report: verdict %s, %d events; want %s, %d", rep.Verdict, rep.Source.Events, res.Verdict, res.Source.Events)
	}
	if w := rep.Window; w.StartNs != res.Window.Start || w.EndNs != res.Window.End || w.Steps != res.Window.Steps {
		t.Errorf("JSON report: window %+v, want %+v", w, res.Window)
	}
	if len(rep.Devices) != len(res.Devices) {
		t.Fatalf("JSON report: %d devices, want %d", len(rep.Devices), len(res.Devices))
	}
	for i, d := range rep.Devices {
		r := &res.Devices[i]
		if d.ID != r.ID || d.BusyNs != r.Busy || d.IdleNs != r.Idle || d.Gaps != r.Gaps {
			t.Errorf("JSON report: device %s busy %d idle %d ns, %d gaps; want %s %d %d, %d", d.ID, d.BusyNs, d.IdleNs, d.Gaps, r.ID, r.Busy, r.Idle, r.Gaps)
		}
	}
}
