package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/trace"
)

func TestUploadFetchRaw(t *testing.T) {
	fa := &fakeAnalyzer{}
	ts := start(t, Config{Analyze: fa.analyze})
	data := fakeReport("sequential", 1, 100e6, 120e6)
	a := ts.mustUpload(t, "run1.json", data)

	if want := sha(data)[:IDLen]; a.ID != want {
		t.Errorf("id = %q, want the SHA-256 prefix %q", a.ID, want)
	}
	if a.Duplicate || a.Name != "run1.json" {
		t.Errorf("answer = %+v, want a new upload named run1.json", a)
	}
	var rep map[string]any
	json.Unmarshal(a.Report, &rep)
	if rep["verdict"] != "sequential" {
		t.Errorf("report verdict = %v, want sequential", rep["verdict"])
	}

	got := get(t, ts.URL+"/api/v1/traces/"+a.ID)
	if got.code != 200 || !bytes.Equal(bytes.TrimSpace(got.body), bytes.TrimSpace(a.Report)) {
		t.Errorf("GET report: %d %s, want 200 and the upload's report %s", got.code, got.body, a.Report)
	}
	raw := get(t, ts.URL+"/api/v1/traces/"+a.ID+"/raw")
	if raw.code != 200 || sha(raw.body) != sha(data) {
		t.Errorf("GET raw: %d, %d bytes, want 200 and the %d bytes uploaded", raw.code, len(raw.body), len(data))
	}
	if cd := raw.header.Get("Content-Disposition"); !strings.Contains(cd, "run1.json") {
		t.Errorf("raw Content-Disposition = %q, want the upload's name", cd)
	}
	for _, path := range []string{"/api/v1/traces/0000000000000000", "/api/v1/traces/0000000000000000/raw", "/traces/nope"} {
		if r := get(t, ts.URL+path); r.code != 404 {
			t.Errorf("GET %s = %d, want 404", path, r.code)
		}
	}
}

func TestDuplicateUploadAnalysedOnce(t *testing.T) {
	fa := &fakeAnalyzer{}
	ts := start(t, Config{Analyze: fa.analyze, MaxAnalyses: 4})

	// Simultaneous identical uploads wait for each other: one analysis,
	// one 201, the others 200 duplicates of it.
	data := fakeReport("parallel", 1, 50e6)
	var wg sync.WaitGroup
	answers := make([]response, 4)
	for i := range answers {
		wg.Go(func() { answers[i] = ts.upload(t, fmt.Sprintf("u%d", i), data, nil) })
	}
	wg.Wait()
	codes := map[int]int{}
	for i, r := range answers {
		var a uploadAnswer
		r.json(t, &a)
		codes[r.code]++
		if a.ID != sha(data)[:IDLen] || a.Duplicate != (r.code == http.StatusOK) {
			t.Errorf("upload %d: %d %+v, want id %s, duplicate iff 200", i, r.code, a, sha(data)[:IDLen])
		}
	}
	if codes[http.StatusCreated] != 1 || codes[http.StatusOK] != 3 {
		t.Errorf("status counts %v, want one 201 and three 200", codes)
	}

	// Later: answered from the store, under the first name.
	var a uploadAnswer
	r := ts.upload(t, "later", data, nil)
	r.json(t, &a)
	if r.code != http.StatusOK || !a.Duplicate || a.Name != storedName(t, answers) {
		t.Errorf("later upload: %d %+v, want a 200 duplicate under the first name", r.code, a)
	}
	if n := fa.calls.Load(); n != 1 {
		t.Errorf("analyzer ran %d times for one content, want 1", n)
	}
	if _, total, _ := ts.store.List(context.Background(), ListQuery{Limit: 10}); total != 1 {
		t.Errorf("store holds %d traces, want 1", total)
	}
}

// storedName returns the name of the upload that was stored (the 201).
func storedName(t *testing.T, answers []response) string {
	t.Helper()
	for _, r := range answers {
		if r.code == http.StatusCreated {
			var a uploadAnswer
			r.json(t, &a)
			return a.Name
		}
	}
	return ""
}

func TestListPagination(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	var ids []string
	for i := range 5 {
		ids = append(ids, ts.mustUpload(t, fmt.Sprintf("run%d", i), fakeReport("parallel", i, 1e6)).ID)
	}
	newestFirst := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}

	var seen []string
	url := ts.URL + "/api/v1/traces?limit=2"
	for pages := 0; url != ""; pages++ {
		if pages > 5 {
			t.Fatal("cursor paging does not end")
		}
		var a listAnswer
		get(t, url).json(t, &a)
		if a.Total != 5 {
			t.Errorf("total = %d, want 5", a.Total)
		}
		for _, r := range a.Traces {
			seen = append(seen, r.ID)
		}
		url = ""
		if a.NextCursor != "" {
			url = ts.URL + "/api/v1/traces?limit=2&cursor=" + a.NextCursor
		}
	}
	if fmt.Sprint(seen) != fmt.Sprint(newestFirst) {
		t.Errorf("cursor pages = %v, want %v", seen, newestFirst)
	}

	tests := []struct {
		query string
		want  []string
	}{
		{"page=1&limit=2", newestFirst[:2]},
		{"page=3&limit=2", newestFirst[4:]},
		{"page=4&limit=2", nil},
		{"", newestFirst},
	}
	for _, tt := range tests {
		var a listAnswer
		get(t, ts.URL+"/api/v1/traces?"+tt.query).json(t, &a)
		var got []string
		for _, r := range a.Traces {
			got = append(got, r.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("?%s = %v, want %v", tt.query, got, tt.want)
		}
	}
	for _, bad := range []string{"limit=0", "limit=x", "page=0", "cursor=-1", "cursor=3&page=1"} {
		if r := get(t, ts.URL+"/api/v1/traces?"+bad); r.code != 400 {
			t.Errorf("?%s = %d, want 400", bad, r.code)
		} else {
			r.errorText(t)
		}
	}
}

func TestMultipartUpload(t *testing.T) {
	fa := &fakeAnalyzer{}
	ts := start(t, Config{Analyze: fa.analyze})
	files := map[string][]byte{"a.json": fakeReport("parallel", 1, 1e6), "b.json": fakeReport("data-bound", 2, 1e6)}
	body, ctype := multipartBody(t, nil, files, []string{"a.json", "b.json"})
	r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
	var got []uploadAnswer
	r.json(t, &got)
	if r.code != http.StatusCreated || len(got) != 2 {
		t.Fatalf("multipart upload: %d %s, want 201 and two results", r.code, r.body)
	}
	for i, name := range []string{"a.json", "b.json"} {
		if got[i].Name != name || got[i].ID != sha(files[name])[:IDLen] {
			t.Errorf("result %d = %+v, want %s stored", i, got[i], name)
		}
	}

	// A bad file among good ones fails alone; the status says so.
	files["c.bin"] = []byte("\x00\x01garbage")
	files["d.json"] = fakeReport("host-bound", 4, 1e6)
	body, ctype = multipartBody(t, nil, files, []string{"c.bin", "d.json", "a.json"})
	r = do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
	got = nil
	r.json(t, &got)
	if r.code != http.StatusUnprocessableEntity || len(got) != 3 {
		t.Fatalf("mixed multipart upload: %d %s, want 422 and three results", r.code, r.body)
	}
	if got[0].Status != 422 || !strings.HasPrefix(got[0].Error, "c.bin: unrecognised format") {
		t.Errorf("bad file result = %+v, want 422 naming c.bin", got[0])
	}
	if got[1].ID == "" || got[1].Duplicate || !got[2].Duplicate {
		t.Errorf("results = %+v, want d.json new and a.json a duplicate", got[1:])
	}

	body, ctype = multipartBody(t, [][2]string{{"note", "no files"}}, nil, nil)
	if r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype}); r.code != 400 {
		t.Errorf("multipart without files = %d, want 400", r.code)
	}
}

// TestCompareWithoutSummary compares traces stored without a comparison
// summary (as before the service kept them): refused with a way out.
func TestCompareWithoutSummary(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	base := ts.mustUpload(t, "base", fakeReport("sequential", 1, 100e6, 100e6))
	next := ts.mustUpload(t, "new", fakeReport("parallel", 2, 80e6, 70e6))
	r := get(t, ts.URL+"/api/v1/compare?base="+base.ID+"&new="+next.ID)
	want := "trace " + base.ID + " was stored before comparisons were kept: delete it and upload it again"
	if r.code != http.StatusConflict || r.errorText(t) != want {
		t.Errorf("compare = %d %s, want 409 %q", r.code, r.body, want)
	}
	if page := get(t, ts.URL+"/compare?base="+base.ID+"&new="+next.ID); page.code != http.StatusConflict || !bytes.Contains(page.body, []byte("upload it again")) {
		t.Errorf("compare page = %d %s, want 409 saying to upload again", page.code, page.body)
	}
	for q, want := range map[string]int{"base=" + base.ID: 400, "base=" + base.ID + "&new=ffffffffffffffff": 404} {
		if r := get(t, ts.URL+"/api/v1/compare?"+q); r.code != want {
			t.Errorf("compare ?%s = %d, want %d", q, r.code, want)
		}
	}
}

func TestAuth(t *testing.T) {
	const token = "s3cret"
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze, Token: token})
	data := fakeReport("parallel", 1, 1e6)
	tests := []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"missing", nil, 401},
		{"wrong", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"not bearer", map[string]string{"Authorization": "Basic " + token}, 401},
		{"right", map[string]string{"Authorization": "Bearer " + token}, 201},
	}
	var id string
	for _, tt := range tests {
		r := ts.upload(t, "x", data, tt.header)
		if r.code != tt.want {
			t.Fatalf("%s token: upload = %d %s, want %d", tt.name, r.code, r.body, tt.want)
		}
		if r.code == 401 {
			r.errorText(t)
			if r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s token: 401 without WWW-Authenticate", tt.name)
			}
			continue
		}
		var a uploadAnswer
		r.json(t, &a)
		id = a.ID
	}
	// Reading needs no token.
	if r := get(t, ts.URL+"/api/v1/traces/"+id); r.code != 200 {
		t.Errorf("GET without token = %d, want 200", r.code)
	}
	// A browser form sends the token as a field before the files.
	other := fakeReport("parallel", 2, 1e6)
	for field, want := range map[string]int{"nope": 401, token: 201} {
		body, ctype := multipartBody(t, [][2]string{{"token", field}}, map[string][]byte{"f": other}, []string{"f"})
		if r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype}); r.code != want {
			t.Errorf("multipart with token field %q = %d, want %d", field, r.code, want)
		}
	}

	del := ts.URL + "/api/v1/traces/" + id
	if r := do(t, "DELETE", del, nil, nil); r.code != 401 {
		t.Errorf("DELETE without token = %d, want 401", r.code)
	}
	if r := do(t, "DELETE", del, nil, map[string]string{"Authorization": "Bearer wrong"}); r.code != 401 {
		t.Errorf("DELETE with a wrong token = %d, want 401", r.code)
	}
	if r := do(t, "DELETE", del, nil, map[string]string{"Authorization": "Bearer " + token}); r.code != 204 {
		t.Fatalf("DELETE with the token = %d, want 204", r.code)
	}
	if r := get(t, del); r.code != 404 {
		t.Errorf("GET after DELETE = %d, want 404", r.code)
	}
	ts.settle()
	if ok, err := ts.blobs.keep.exists(context.Background(), sha(data)); ok || err != nil {
		t.Errorf("blob still stored after DELETE (%v)", err)
	}
	if r := do(t, "DELETE", del, nil, map[string]string{"Authorization": "Bearer " + token}); r.code != 404 {
		t.Errorf("second DELETE = %d, want 404", r.code)
	}
}

func TestBadUploadsNotStored(t *testing.T) {
	fa := &fakeAnalyzer{}
	ts := start(t, Config{Analyze: fa.analyze})
	// The formats expected, as trace's TestFormats holds them.
	_, unknown := trace.LookupFormat("pdf")
	tests := []struct {
		name, query string
		data        []byte
		code        int
		errPrefix   string
	}{
		{"empty", "", nil, 400, "empty.bin: empty file, expected a trace (" + formats.Titles() + ")"},
		{"garbage", "", []byte("\x7fELF\x02\x01\x01"), 422, "garbage.bin: unrecognised format"},
		{"bad format param", "&format=pdf", fakeReport("parallel", 1, 1), 400, unknown.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := strings.Fields(tt.name)[0] + ".bin"
			r := do(t, "POST", ts.URL+"/api/v1/traces?name="+name+tt.query, bytes.NewReader(tt.data), nil)
			if r.code != tt.code {
				t.Fatalf("status %d %s, want %d", r.code, r.body, tt.code)
			}
			if msg := r.errorText(t); !strings.HasPrefix(msg, tt.errPrefix) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line starting %q", msg, tt.errPrefix)
			}
			assertNothingStored(t, ts)
		})
	}
}

func TestPages(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze, Token: "tok"})
	index := get(t, ts.URL+"/")
	if index.code != 200 || !bytes.Contains(index.body, []byte(`enctype="multipart/form-data"`)) || !bytes.Contains(index.body, []byte(`name="token"`)) {
		t.Errorf("GET / = %d, want the upload form with a token field:\n%s", index.code, index.body)
	}
	// The formats listed are the registered ones.
	var each []string
	for _, f := range trace.Formats() {
		if f.Hidden {
			continue // registered by tests, not shown
		}
		each = append(each, f.Title+" (<code>"+strings.Join(f.Suffixes, "</code>, <code>")+"</code>)")
	}
	if want := strings.Join(each, ", ") + ", gzipped or not"; !bytes.Contains(index.body, []byte(want)) {
		t.Errorf("GET / does not list the formats as %q:\n%s", want, index.body)
	}
	if csp := index.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP = %q, want no external loads", csp)
	}

	data := fakeReport("data-bound", 1, 1e6)
	body, ctype := multipartBody(t, [][2]string{{"token", "tok"}}, map[string][]byte{"run <1>.json": data}, []string{"run <1>.json"})
	r := do(t, "POST", ts.URL+"/upload", body, map[string]string{"Content-Type": ctype})
	id := sha(data)[:IDLen]
	if r.code != http.StatusSeeOther || r.header.Get("Location") != "/traces/"+id {
		t.Fatalf("form upload = %d to %q, want 303 to /traces/%s", r.code, r.header.Get("Location"), id)
	}
	report := get(t, ts.URL+"/traces/"+id)
	if report.code != 200 || !bytes.Contains(report.body, []byte("report of run <1>.json")) {
		t.Errorf("GET /traces/%s = %d %s, want the stored HTML report", id, report.code, report.body)
	}
	list := get(t, ts.URL+"/traces")
	if list.code != 200 || !bytes.Contains(list.body, []byte("run &lt;1&gt;.json")) || !bytes.Contains(list.body, []byte("data-bound")) {
		t.Errorf("GET /traces = %d, want the escaped name and verdict listed:\n%s", list.code, list.body)
	}

	body, ctype = multipartBody(t, [][2]string{{"token", "tok"}}, map[string][]byte{"bad": []byte("nope")}, []string{"bad"})
	r = do(t, "POST", ts.URL+"/upload", body, map[string]string{"Content-Type": ctype})
	if r.code != 422 || !bytes.Contains(r.body, []byte("bad: unrecognised format")) {
		t.Errorf("form upload of garbage = %d %s, want 422 and the error", r.code, r.body)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	ts := startAlone(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	if r := get(t, ts.URL+"/healthz"); r.code != 200 || string(r.body) != "ok\n" {
		t.Errorf("healthz = %d %q, want 200 ok", r.code, r.body)
	}
	data := fakeReport("parallel", 1, 1e6)
	ts.mustUpload(t, "a", data)
	ts.upload(t, "a", data, nil)
	ts.upload(t, "bad", []byte("nope"), nil)
	m := string(get(t, ts.URL+"/metrics").body)
	for _, want := range []string{
		"tracegap_uploads_total 1\n",
		"tracegap_upload_duplicates_total 1\n",
		"tracegap_upload_rejected_total 1\n",
		fmt.Sprintf("tracegap_upload_bytes_total %d\n", 2*len(data)+4),
		"tracegap_analyses_in_flight 0\n",
		"tracegap_analysis_duration_seconds_count 2\n",
		"tracegap_analysis_failures_total 1\n",
		`tracegap_http_responses_total{code="201"} 1` + "\n",
		`tracegap_http_responses_total{code="422"} 1` + "\n",
		"# TYPE tracegap_analysis_duration_seconds histogram\n",
		// The Go runtime's and the process's series, as every Go service.
		"# TYPE go_goroutines gauge\n", "# TYPE go_memstats_heap_alloc_bytes gauge\n",
		"# TYPE process_cpu_seconds_total counter\n", "# TYPE process_resident_memory_bytes gauge\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
}
