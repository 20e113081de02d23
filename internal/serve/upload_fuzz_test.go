package serve

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// formBody returns a multipart form of the given file parts (name, then
// content), after a token field, with the boundary "b".
func formBody(parts ...string) []byte {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.SetBoundary("b")
	mw.WriteField("token", "")
	for i := 0; i+1 < len(parts); i += 2 {
		fw, _ := mw.CreateFormFile("file", parts[i])
		fw.Write([]byte(parts[i+1]))
	}
	mw.Close()
	return buf.Bytes()
}

// FuzzUploadForm feeds arbitrary bytes to the upload endpoint as the body
// of a multipart form: it must never panic or hang, answer a JSON
// document with a status that is the client's (4xx) or success, never an
// internal error, and leave no temporary file behind. The seeds are forms
// of traces, an archive, names with escapes and climbing paths, and cut
// forms.
func FuzzUploadForm(f *testing.F) {
	trace := `{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"k"}]}`
	tarball := string(tracetest.Tar(true, []string{"logs/a.trace.json", "../b.trace.json"}, func(string) []byte { return []byte(trace) }))
	whole := formBody("a.pt.trace.json", trace, "b.pt.trace.json", "{}")
	for _, seed := range [][]byte{
		formBody("a.pt.trace.json", string(fakeReport("parallel", 1, 1e6))),
		whole,
		whole[:len(whole)/2],
		formBody("logs.tar.gz", tarball),
		formBody("\x1b]0;x\x07\r\n../../a.json", trace, `C:\x\..\y.json`, ""),
		[]byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\x00\"\r\n\r\nx\r\n--b--\r\n"),
		[]byte("--b\r\n\r\n--b--"),
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	s, err := New(Config{Analyze: (&fakeAnalyzer{}).analyze, DataDir: dir, MaxUpload: 1 << 20, MaxParts: 8})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/api/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusInsufficientStorage {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("answer is not JSON: %q", rec.Body)
		}
		if left, _ := os.ReadDir(s.blobs.tmp); len(left) > 0 {
			t.Fatalf("%d temporary files left behind", len(left))
		}
	})
}
