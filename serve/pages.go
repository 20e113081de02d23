package serve

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace"
)

// pageCSP keeps pages self-contained: inline styles (and the report's inline
// script), data: images, nothing fetched from elsewhere.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

const pageStyle = `
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#1d2330}
a{color:#1958b7}h1{font-size:1.5rem}h1 a{color:inherit;text-decoration:none}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #dde2ea}
th{background:#f3f5f9}td.n{text-align:right;font-variant-numeric:tabular-nums}
.v{font-weight:600;padding:.1rem .45rem;border-radius:.3rem;background:#eef1f6}
.v-parallel{background:#dff3e4}.v-sequential{background:#fde3e1}.v-data-bound{background:#fdf0d5}.v-host-bound{background:#e8e3fb}
form.up{border:1px dashed #aab4c4;padding:1rem;border-radius:.5rem;background:#fafbfd}
.err{background:#fde3e1;padding:.6rem 1rem;border-radius:.4rem}
nav a{margin-right:1rem}
`

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"size": humanSize,
	"when": func(t time.Time) string { return t.Format("2006-01-02 15:04:05Z") },
	"pct":  func(f float64) string { return fmt.Sprintf("%.1f%%", f*100) },
	// The formats the readers linked into the program registered.
	"formats":    trace.Formats,
	"rows":       report.ComparisonRows,
	"conclusion": report.SyntheticConclusion,
}).Parse(`
{{define "head"}}<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.}} · tracegap</title><style>` + pageStyle + `</style></head><body>
<h1><a href="/">tracegap</a></h1><nav><a href="/">Upload</a><a href="/traces">Traces</a></nav>{{end}}
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
of one distributed job, uploaded together, are analysed as one job.</p>
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

{{define "compare"}}{{template "head" "Compare"}}
<table><tr><th></th><th>base</th><th>new</th></tr>
<tr><td>trace</td><td><a href="/traces/{{.Base.ID}}">{{.Base.Name}}</a></td><td><a href="/traces/{{.New.ID}}">{{.New.Name}}</a></td></tr>
<tr><td>verdict</td><td><span class="v v-{{.C.Base.Verdict}}">{{.C.Base.Verdict}}</span> <small>{{.C.Base.Confidence}}</small></td>
<td><span class="v v-{{.C.New.Verdict}}">{{.C.New.Verdict}}</span> <small>{{.C.New.Confidence}}</small></td></tr>
<tr><td>steps</td><td class="n">{{.C.Base.Steps}}</td><td class="n">{{.C.New.Steps}}</td></tr></table>
<table><tr><th>figure</th><th class="n">base</th><th class="n">new</th><th class="n">change</th><th class="n">ratio</th></tr>
{{range rows .C}}<tr><td>{{index . 0}}</td><td class="n">{{index . 1}}</td><td class="n">{{index . 2}}</td><td class="n">{{index . 3}}</td><td class="n">{{index . 4}}</td></tr>{{end}}</table>
{{with .C.Synthetic}}<h2>Synthetic-data test</h2><p>{{conclusion .}}</p>{{end}}
<p><small>Largest change first. Times are per step ({{if or .C.Base.PerWindow .C.New.PerWindow}}a run without steps counts its window as one step{{else}}steady steps{{end}}); shares are of the window's wall time.
The same figures as <code>tracegap compare</code>; as JSON: <a href="/api/v1/compare?base={{.Base.ID}}&amp;new={{.New.ID}}">/api/v1/compare</a>.</small></p>
{{template "foot"}}{{end}}

{{define "error"}}{{template "head" "Error"}}<p class="err">{{.}}</p>{{template "foot"}}{{end}}
`))

func (s *Server) render(w http.ResponseWriter, code int, name string, data any) {
	var b strings.Builder
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		code, b = http.StatusInternalServerError, strings.Builder{}
		pages.ExecuteTemplate(&b, "error", "rendering page: "+err.Error())
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.WriteHeader(code)
	w.Write([]byte(b.String()))
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
// request and kept.
func (s *Server) pageReport(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b, err := s.store.HTML(r.Context(), id)
	if err == nil && len(b) == 0 {
		b, err = s.renderHTML(r.Context(), id)
	}
	if err != nil {
		s.pageError(w, r, notFound(err, id))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pageCSP)
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
		return nil, errorf(http.StatusServiceUnavailable, "rendering %s: %v", id, err)
	}
	defer unlock()
	if b, err := s.store.HTML(ctx, id); err != nil || len(b) > 0 {
		return b, err
	}
	files := []Upload{{Path: s.blobs.path(rec.SHA256), Name: rec.Name, Format: rec.Format}}
	if rec.Kind == KindJob {
		files = files[:0]
		for _, f := range rec.Files {
			files = append(files, Upload{Path: s.blobs.path(f.SHA256), Name: path.Join(rec.Name, f.Name), Format: rec.Format})
		}
	}
	rep, err := s.analyze(ctx, rec.Name, files, func() (Reports, error) {
		b, err := s.cfg.RenderHTML(ctx, rec, files)
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
