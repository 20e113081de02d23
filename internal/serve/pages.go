package serve

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/compare"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/untrusted"
	"github.com/tracegap/tracegap/trace"
)

// pageCSP keeps pages self-contained: inline styles (and the report's inline
// script), data: images, nothing fetched from elsewhere.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// pageStyle is the pages' style; verdict badges take the report's colours
// (render.VerdictCSS), better and worse the same palette's green and
// vermilion, darkened for text.
var pageStyle = `
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto 2rem;max-width:70rem;padding:0 1rem;color:#1d2330}
a{color:#1958b7}h1{font-size:1.5rem}
header.tg-nav{display:flex;gap:1.2rem;align-items:center;padding:.6rem 0;border-bottom:1px solid #dde2ea;margin-bottom:1rem}
header.tg-nav b a{color:inherit;text-decoration:none;font-size:1.1rem}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #dde2ea}
th{background:#f3f5f9}td.n{text-align:right;font-variant-numeric:tabular-nums}
.v{font-weight:600;padding:.1rem .45rem;border-radius:.3rem;background:#eef1f6}
form.up{border:1px dashed #aab4c4;padding:1rem;border-radius:.5rem;background:#fafbfd}
.err{background:#fde3e1;padding:.6rem 1rem;border-radius:.4rem}
.better{color:#00664b;font-weight:600}.worse{color:#a34400;font-weight:600}
.callout{padding:.6rem 1rem;border-radius:.4rem;background:#f3f5f9;border-left:4px solid #999;color:#1d2330}
.callout.better{border-color:#009E73}.callout.worse{border-color:#D55E00}
` + render.VerdictCSS()

// header is the navigation at the top of every page, the stored reports'
// included (reportBar).
const header = `<header class="tg-nav"><b><a href="/">tracegap</a></b><a href="/">Upload</a><a href="/traces">Traces</a><a href="/api/v1/openapi.json">API</a></header>`

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"size": humanSize,
	"when": func(t time.Time) string { return t.Format("2006-01-02 15:04:05Z") },
	"pct":  human.Share,
	// The formats the readers linked into the program registered, less
	// those that tests register hidden.
	"formats": func() []trace.Format {
		return slices.DeleteFunc(trace.Formats(), func(f trace.Format) bool { return f.Hidden })
	},
	"rows":       compareRows,
	"conclusion": render.SyntheticConclusion,
	"verdicts":   verdictChange,
	"chart":      render.CompareChart,
}).Parse(`
{{define "head"}}<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.}} · tracegap</title><style>` + pageStyle + `</style></head><body>
` + header + `
<h1>{{.}}</h1>{{end}}
{{define "foot"}}</body></html>{{end}}

{{define "rows"}}<table><tr><th>base</th><th>new</th><th>trace</th><th>verdict</th><th>format</th><th class="n">size</th><th>uploaded</th></tr>
{{range .}}<tr><td><input type="radio" name="base" value="{{.ID}}"></td><td><input type="radio" name="new" value="{{.ID}}"></td>
<td><a href="/traces/{{.ID}}">{{.Name}}</a><br><small>{{.ID}}{{with .Files}} · job of {{len .}} ranks{{end}}</small></td>
<td><span class="v v-{{.Verdict}}">{{.Verdict}}</span> <small>{{.Confidence}}</small></td>
<td>{{.Format}}</td><td class="n">{{size .Size}}</td><td>{{when .Created}}</td></tr>
{{else}}<tr><td colspan="7">No traces yet.</td></tr>{{end}}</table>{{end}}

{{define "index"}}{{template "head" "Upload"}}
<p>Upload a profiler trace, {{range $i, $f := formats}}{{if $i}}, {{end}}{{$f.Title}}
{{- with $f.Suffixes}} ({{range $j, $s := .}}{{if $j}}, {{end}}<code>{{$s}}</code>{{end}}){{end}}{{end}}, gzipped or not,
to learn whether the accelerator waited on the host, and why. The traces of every rank
of one distributed job, uploaded together, are analysed as one job; so are those in a
tarred TensorBoard log directory (<code>.tar</code>, <code>.tar.gz</code>).</p>
<form class="up" method="post" action="/upload" enctype="multipart/form-data">
{{if .TokenRequired}}<p><label>Token <input type="password" name="token" autocomplete="off"></label></p>{{end}}
<p><input type="file" name="file" multiple required></p>
<p><button type="submit">Analyse</button> <small>up to {{size .MaxUpload}} per request</small></p></form>
<h2>Recent</h2><form method="get" action="/compare">{{template "rows" .Traces}}
<button type="submit">Compare selected</button> <a href="/traces">all traces</a></form>
{{template "foot"}}{{end}}

{{define "list"}}{{template "head" "Traces"}}
<p>{{.Total}} traces, newest first.</p>
<form method="get" action="/compare">{{template "rows" .Traces}}<button type="submit">Compare selected</button></form>
<p>{{if .Next}}<a href="{{.Next}}">Older traces →</a>{{end}}</p>
{{template "foot"}}{{end}}

{{define "reportbar"}}<header class="tg-nav" style="display:flex;flex-wrap:wrap;gap:1.2rem;align-items:center;padding:0 0 .5rem;margin-bottom:.8rem;border-bottom:1px solid #d8dee4;font:14px system-ui,sans-serif">
<b><a href="/" style="color:inherit;text-decoration:none">tracegap</a></b><a href="/">Upload</a><a href="/traces">Traces</a>
<a href="/api/v1/traces/{{.Rec.ID}}/raw" download>Raw {{if .Rec.Files}}ranks (tar){{else}}trace{{end}}</a><a href="/api/v1/traces/{{.Rec.ID}}">JSON</a>
{{with .Others}}<form method="get" action="/compare" style="margin:0"><input type="hidden" name="base" value="{{$.Rec.ID}}">
<label>Compare with <select name="new">{{range .}}<option value="{{.ID}}">{{.Name}} ({{.ID}})</option>{{end}}</select></label> <button type="submit">Compare</button></form>{{end}}
<form class="del" method="post" action="/traces/{{.Rec.ID}}/delete" style="margin:0">{{if .TokenRequired}}<input type="password" name="token" placeholder="token" autocomplete="off" size="10"> {{end}}<button type="submit">Delete</button></form>
</header>
{{end}}

{{define "compare"}}{{template "head" "Compare"}}
{{with verdicts .C}}<p class="callout {{.Class}}">{{.Text}}</p>{{end}}
<table><tr><th></th><th>base</th><th>new</th></tr>
<tr><td>trace</td><td><a href="/traces/{{.Base.ID}}">{{.Base.Name}}</a></td><td><a href="/traces/{{.New.ID}}">{{.New.Name}}</a></td></tr>
<tr><td>verdict</td><td><span class="v v-{{.C.Base.Verdict}}">{{.C.Base.Verdict}}</span> <small>{{.C.Base.Confidence}}</small></td>
<td><span class="v v-{{.C.New.Verdict}}">{{.C.New.Verdict}}</span> <small>{{.C.New.Confidence}}</small></td></tr>
<tr><td>steps</td><td class="n">{{.C.Base.Steps}}</td><td class="n">{{.C.New.Steps}}</td></tr></table>
<figure class="chart">{{chart .C}}</figure>
<table><tr><th>figure</th><th class="n">base</th><th class="n">new</th><th class="n">change</th><th class="n">ratio</th></tr>
{{range rows .C}}<tr><td>{{index .Cells 0}}</td><td class="n">{{index .Cells 1}}</td><td class="n">{{index .Cells 2}}</td><td class="n {{.Class}}">{{index .Cells 3}}</td><td class="n {{.Class}}">{{index .Cells 4}}</td></tr>{{end}}</table>
<h2>Synthetic-data test</h2>
{{with .C.Synthetic}}<p>{{conclusion .}}</p>{{else}}<p>Not run: the base shows input-pipeline time, so it is not a run fed with synthetic data
(<code>tracegap compare --synthetic-base</code> takes it as one).</p>{{end}}
<p><small>Largest change first; green is better, orange worse. Times are per step ({{if or .C.Base.PerWindow .C.New.PerWindow}}a run without steps counts its window as one step{{else}}steady steps{{end}}); shares are of the window's wall time.
The same figures as <code>tracegap compare</code>; as JSON: <a href="/api/v1/compare?base={{.Base.ID}}&amp;new={{.New.ID}}">/api/v1/compare</a>.</small></p>
{{template "foot"}}{{end}}

{{define "error"}}{{template "head" "Error"}}<p class="err">{{.}}</p>{{template "foot"}}{{end}}
`))

// cmpRow is a row of the comparison table: its cells as the command line
// writes them, and "better" or "worse" for the change.
type cmpRow struct {
	Cells [5]string
	Class string
}

// compareRows lays out the comparison's rows: render.ComparisonRows, which
// leaves out rows zero in both runs, marked better or worse. Utilization
// is better higher; device busy per step is the work itself, neither;
// every other figure (step time, idle, input, sync) is better lower.
func compareRows(c *compare.Comparison) []cmpRow {
	cells := render.ComparisonRows(c)
	out := make([]cmpRow, 0, len(cells))
	i := 0
	for _, r := range c.Rows {
		if r.Base == 0 && r.New == 0 {
			continue
		}
		row := cmpRow{Cells: cells[i]}
		i++
		sign := -1.0
		switch r.Metric {
		case "utilization":
			sign = 1
		case "device busy per step":
			sign = 0
		}
		switch d := sign * r.Diff; {
		case d > 0:
			row.Class = "better"
		case d < 0:
			row.Class = "worse"
		}
		out = append(out, row)
	}
	return out
}

// verdictNote calls out a verdict that changed between the runs.
type verdictNote struct{ Text, Class string }

// verdictChange returns the call-out of a changed verdict, nil if it did
// not change: better when the new run is parallel, worse when the base was.
func verdictChange(c *compare.Comparison) *verdictNote {
	b, n := c.Base.Verdict, c.New.Verdict
	if b == n {
		return nil
	}
	v := &verdictNote{Text: fmt.Sprintf("The verdict changed: %s in the base, %s in the new run.", b, n)}
	switch {
	case n == analyze.Parallel:
		v.Class = "better"
	case b == analyze.Parallel:
		v.Class = "worse"
	}
	return v
}

func (s *Server) render(w http.ResponseWriter, code int, name string, data any) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		code, b = http.StatusInternalServerError, strings.Builder{}
		pages.ExecuteTemplate(&b, "error", "rendering page: "+err.Error())
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.WriteHeader(code)
	w.Write(untrusted.Markup([]byte(b.String())))
}

func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	s.logf(r, statusOf(err), err)
	s.render(w, statusOf(err), "error", s.public(err))
}

// pageIndex is GET /: the upload form and the latest traces.
func (s *Server) pageIndex(w http.ResponseWriter, r *http.Request) {
	recs, _, err := s.store.List(r.Context(), ListQuery{Limit: 10})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "index", map[string]any{
		"TokenRequired": s.cfg.Token != "", "MaxUpload": s.cfg.MaxUpload, "Traces": recs,
	})
}

// pageUpload is POST /upload from the form: on success it redirects to the
// report (one file) or the list (several).
func (s *Server) pageUpload(w http.ResponseWriter, r *http.Request) {
	if !isMultipart(r) {
		s.pageError(w, r, errorf(http.StatusBadRequest, "expected a multipart form upload"))
		return
	}
	results, code := s.uploadMultipart(w, r)
	if code >= 400 || len(results) == 0 {
		var msgs []string
		for _, res := range results {
			if res.Error != "" {
				msgs = append(msgs, res.Error)
			}
		}
		if len(msgs) == 0 {
			msgs = append(msgs, "no file in the upload")
		}
		s.render(w, max(code, 400), "error", strings.Join(msgs, "; "))
		return
	}
	to := "/traces"
	if len(results) == 1 {
		to = "/traces/" + results[0].ID
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// pageList is GET /traces.
func (s *Server) pageList(w http.ResponseWriter, r *http.Request) {
	a, q, err := s.list(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	next := ""
	if a.NextCursor != "" {
		next = fmt.Sprintf("/traces?limit=%d&cursor=%s", q.Limit, a.NextCursor)
	}
	s.render(w, http.StatusOK, "list", map[string]any{"Traces": a.Traces, "Total": a.Total, "Next": next})
}

// pageReport is GET /traces/{id}: the HTML report, rendered on the first
// request and kept, under the service's header, with the trace's actions
// (raw download, compare with another trace, delete).
func (s *Server) pageReport(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := s.store.Get(r.Context(), id)
	if err != nil {
		s.pageError(w, r, notFound(err, id))
		return
	}
	b, err := s.store.HTML(r.Context(), id)
	if err == nil && len(b) == 0 {
		b, err = s.renderHTML(r.Context(), id)
	}
	if err != nil {
		s.pageError(w, r, notFound(err, id))
		return
	}
	recent, _, err := s.store.List(r.Context(), ListQuery{Limit: 20})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	others := slices.DeleteFunc(recent, func(o Record) bool { return o.ID == id })
	var bar strings.Builder
	if err := pages.ExecuteTemplate(&bar, "reportbar", map[string]any{"Rec": rec, "Others": others, "TokenRequired": s.cfg.Token != ""}); err != nil {
		s.pageError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	// The bar goes first in the body; a report without one gets it first.
	if i := bytes.Index(b, []byte("<body>")); i >= 0 {
		i += len("<body>")
		w.Write(b[:i])
		io.WriteString(w, bar.String())
		w.Write(b[i:])
		return
	}
	io.WriteString(w, bar.String())
	w.Write(b)
}

// renderHTML renders the HTML report of record id from its stored files,
// admitted as an upload is, keeps it, and returns it. Concurrent first
// requests render it once: the others wait on the record's content lock
// (which also keeps a delete from taking the files away meanwhile) and
// then find it kept.
func (s *Server) renderHTML(ctx context.Context, id string) ([]byte, error) {
	if s.cfg.RenderHTML == nil {
		return nil, errorf(http.StatusNotFound, "trace %s has no HTML report", id)
	}
	rec, err := s.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lockContent(ctx, rec.SHA256)
	if err != nil {
		return nil, s.lockError(ctx, "rendering "+id, err)
	}
	defer unlock()
	if b, err := s.store.HTML(ctx, id); err != nil || len(b) > 0 {
		return b, err
	}
	settings, err := s.store.Settings(ctx, id)
	if err != nil {
		return nil, err
	}
	files, done, err := s.localFiles(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer done()
	rep, err := s.analyze(ctx, rec.Name, files, func() (Reports, error) {
		b, err := s.cfg.RenderHTML(ctx, rec, files, settings)
		return Reports{HTML: b}, err
	})
	if err != nil {
		return nil, err
	}
	if err := s.store.SetHTML(ctx, id, rep.HTML); err != nil {
		return nil, err
	}
	return rep.HTML, nil
}

// pageDelete is POST /traces/{id}/delete from a report's Delete button: a
// form's "token" field stands for the Authorization header it cannot send.
func (s *Server) pageDelete(w http.ResponseWriter, r *http.Request) {
	// A cross-site post never gets here: the server's cross-origin
	// protection refuses it first.
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := s.authorize(r, r.PostFormValue("token")); err != nil {
		s.pageError(w, r, err)
		return
	}
	id := r.PathValue("id")
	if err := s.deleteTrace(r, id); err != nil {
		s.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, "/traces", http.StatusSeeOther)
}

// pageCompare is GET /compare?base=&new=.
func (s *Server) pageCompare(w http.ResponseWriter, r *http.Request) {
	c, err := s.compare(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "compare", c)
}

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// localFiles returns the files of rec as an analysis reads them, on disk;
// done removes the copies made of blobs kept in a bucket.
func (s *Server) localFiles(ctx context.Context, rec Record) (files []Upload, done func(), err error) {
	var dones []func()
	done = func() {
		for _, d := range dones {
			d()
		}
	}
	add := func(sha, name string) error {
		p, d, err := s.blobs.local(ctx, sha, name)
		if err != nil {
			return fmt.Errorf("%s: reading stored file: %w", name, err)
		}
		dones = append(dones, d)
		files = append(files, Upload{Path: p, Name: name, Format: rec.Format})
		return nil
	}
	if rec.Kind != KindJob {
		err = add(rec.SHA256, rec.Name)
	}
	for _, f := range rec.Files {
		if err = add(f.SHA256, path.Join(rec.Name, f.Name)); err != nil {
			break
		}
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return files, done, nil
}
