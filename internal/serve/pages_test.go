package serve

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
)

// TestReportPageActions: a stored report is served under the service's
// header with its actions, and the Delete button deletes, from the
// service's own page only and with the token.
func TestReportPageActions(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze, Token: "tok"})
	auth := map[string]string{"Authorization": "Bearer tok"}
	var a, b uploadAnswer
	ts.upload(t, "a", fakeReport("parallel", 1, 1e6), auth).json(t, &a)
	ts.upload(t, "b", fakeReport("sequential", 1, 2e6), auth).json(t, &b)
	page := get(t, ts.URL+"/traces/"+a.ID)
	for _, want := range []string{
		`<header class="tg-nav"`, `href="/traces">Traces</a>`,
		`href="/api/v1/traces/` + a.ID + `/raw" download>Raw trace</a>`,
		`<input type="hidden" name="base" value="` + a.ID + `">`, `<option value="` + b.ID + `">b (` + b.ID + `)</option>`,
		`action="/traces/` + a.ID + `/delete"`, `name="token"`,
	} {
		if !bytes.Contains(page.body, []byte(want)) {
			t.Errorf("report page lacks %q:\n%s", want, page.body)
		}
	}
	if bytes.Contains(page.body, []byte(`<option value="`+a.ID+`"`)) {
		t.Error("the report offers to compare the trace with itself")
	}

	del := ts.URL + "/traces/" + a.ID + "/delete"
	form := func(token string) *strings.Reader { return strings.NewReader(url.Values{"token": {token}}.Encode()) }
	formType := "application/x-www-form-urlencoded"
	tests := []struct {
		name   string
		header map[string]string
		token  string
		code   int
	}{
		{"another site", map[string]string{"Sec-Fetch-Site": "cross-site"}, "tok", http.StatusForbidden},
		{"another origin", map[string]string{"Origin": "http://evil.example"}, "tok", http.StatusForbidden},
		{"no token", map[string]string{"Sec-Fetch-Site": "same-origin"}, "", http.StatusUnauthorized},
		{"the page", map[string]string{"Sec-Fetch-Site": "same-origin"}, "tok", http.StatusSeeOther},
	}
	for _, tt := range tests {
		tt.header["Content-Type"] = formType
		if r := do(t, "POST", del, form(tt.token), tt.header); r.code != tt.code {
			t.Errorf("delete from %s = %d, want %d", tt.name, r.code, tt.code)
		}
	}
	if r := get(t, ts.URL+"/api/v1/traces/"+a.ID); r.code != http.StatusNotFound {
		t.Errorf("after the delete, GET = %d, want 404", r.code)
	}
}

// TestCompareRows: a change is better or worse by the figure's sense.
func TestCompareRows(t *testing.T) {
	c := &compare.Comparison{Rows: []compare.Row{
		{Metric: compare.MetricStepTime, Unit: compare.UnitTime, Base: 2e6, New: 1e6, Diff: -1e6, Ratio: 0.5},
		{Metric: "utilization", Unit: compare.UnitShare, Base: 0.5, New: 0.4, Diff: -0.1, Ratio: 0.8},
		{Metric: "device busy per step", Unit: compare.UnitTime, Base: 1e6, New: 2e6, Diff: 1e6, Ratio: 2},
		{Metric: "idle host share", Unit: compare.UnitShare}, // zero in both: left out
		{Metric: "idle input share", Unit: compare.UnitShare, Base: 0.1, New: 0.3, Diff: 0.2, Ratio: 3},
	}}
	var got []string
	for _, r := range compareRows(c) {
		got = append(got, r.Cells[0]+":"+r.Class)
	}
	want := "step time:better utilization:worse device busy per step: idle input share:worse"
	if strings.Join(got, " ") != want {
		t.Errorf("compareRows = %q, want %q", strings.Join(got, " "), want)
	}
}

func TestVerdictChange(t *testing.T) {
	tests := []struct {
		base, new analyze.Verdict
		class     string
	}{
		{analyze.Sequential, analyze.Parallel, "better"},
		{analyze.Parallel, analyze.DataBound, "worse"},
		{analyze.Sequential, analyze.HostBound, ""},
	}
	for _, tt := range tests {
		c := &compare.Comparison{Base: compare.Summary{Verdict: tt.base}, New: compare.Summary{Verdict: tt.new}}
		v := verdictChange(c)
		if v == nil || v.Class != tt.class || !strings.Contains(v.Text, string(tt.base)+" in the base, "+string(tt.new)) {
			t.Errorf("verdictChange(%s -> %s) = %+v, want class %q", tt.base, tt.new, v, tt.class)
		}
	}
	same := &compare.Comparison{Base: compare.Summary{Verdict: analyze.Parallel}, New: compare.Summary{Verdict: analyze.Parallel}}
	if v := verdictChange(same); v != nil {
		t.Errorf("verdictChange of an unchanged verdict = %+v, want none", v)
	}
}
