package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tracegap/tracegap/internal/realtraces"
)

// fakeAnalyzer stands in for the real one: an upload that is a JSON object
// with a "verdict" is its own report (so tests choose exact figures); any
// other content fails as an unreadable trace would.
type fakeAnalyzer struct {
	calls atomic.Int64
	// gate, when set, blocks every analysis until it is closed; started
	// receives the upload's name when an analysis begins.
	gate    chan struct{}
	started chan string
}

func (f *fakeAnalyzer) analyze(ctx context.Context, u Upload) (Reports, error) {
	f.calls.Add(1)
	if f.started != nil {
		f.started <- u.Name
	}
	if f.gate != nil {
		<-f.gate
	}
	b, err := os.ReadFile(u.Path)
	if err != nil {
		return Reports{}, err
	}
	var v map[string]any
	if json.Unmarshal(b, &v) != nil || v["verdict"] == nil {
		return Reports{}, fmt.Errorf("%s: unrecognised format: starts with %q, expected Chrome trace-event JSON or XPlane protobuf", u.Name, head(b))
	}
	v["source"] = map[string]any{"path": u.Name, "format": "fake", "bytes": len(b)}
	js, _ := json.Marshal(v)
	verdict, _ := v["verdict"].(string)
	confidence, _ := v["confidence"].(string)
	return Reports{Verdict: verdict, Confidence: confidence, Format: "fake", JSON: js, HTML: []byte("<!doctype html><title>" + u.Name + "</title><p>report of " + u.Name)}, nil
}

func head(b []byte) []byte { return b[:min(len(b), 16)] }

// fakeReport is an upload the fake analyzer accepts; n makes it unique.
func fakeReport(verdict string, n int, stepsNs ...int64) []byte {
	steps := make([]map[string]any, len(stepsNs))
	for i, d := range stepsNs {
		steps[i] = map[string]any{"name": fmt.Sprintf("ProfilerStep#%d", i), "dur_ns": d, "device_busy_ns": d / 2}
	}
	b, _ := json.Marshal(map[string]any{"verdict": verdict, "confidence": "high", "n": n, "steps": steps})
	return b
}

// testServer is a Server listening on a loopback port. Under sharedEnv it
// is the first of two replicas on the same storage, and URL is a
// round-robin load balancer in front of both.
type testServer struct {
	*Server
	URL  string
	http *http.Server
	done chan error
	// peer, under sharedEnv, is the second replica; balancer serves URL.
	peer     *testServer
	balancer *httptest.Server
}

// start runs a Server for cfg on 127.0.0.1; it is shut down at the end of
// the test unless the test stops it first.
func start(t *testing.T, cfg Config) *testServer {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	shared := sharedFor(t, &cfg)
	ts := startOne(t, cfg)
	if shared {
		peer := cfg
		peer.DataDir = peerDir(t, cfg.DataDir)
		ts.peer = startOne(t, peer)
		ts.balance(t)
	}
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// startAlone is start without the second replica: for tests of one
// server's own connections, analysis slots, temporary space and metrics,
// which a load balancer would spread over two. Under sharedEnv it is
// still on the shared storage.
func startAlone(t *testing.T, cfg Config) *testServer {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	sharedFor(t, &cfg)
	ts := startOne(t, cfg)
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

func startOne(t *testing.T, cfg Config) *testServer {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ts := &testServer{Server: s, URL: "http://" + ln.Addr().String(), http: s.HTTPServer(""), done: make(chan error, 1)}
	go func() { ts.done <- ts.http.Serve(ln) }()
	return ts
}

// balance puts a load balancer in front of ts and its peer that sends
// each request to the other replica than the one before, as a
// round-robin balancer without session affinity does, and makes its URL
// the test server's.
func (ts *testServer) balance(t *testing.T) {
	t.Helper()
	var n atomic.Int64
	targets := []string{ts.URL, ts.peer.URL}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			u, _ := url.Parse(targets[n.Add(1)%2])
			r.SetURL(u)
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1,
	}
	ts.balancer = httptest.NewServer(rp)
	ts.URL = ts.balancer.URL
}

// sweptAll waits until the start's sweep has ended on the server and its
// peer: a test that stores blobs by hand, without their contents' locks,
// would race it.
func (ts *testServer) sweptAll() {
	<-ts.swept
	if ts.peer != nil {
		<-ts.peer.swept
	}
}

// settle waits until the downloads that ts and its peer serve have ended
// and the removals of blobs that they held back are done: a client has
// the whole answer a little before its server has closed the blob.
func (ts *testServer) settle() {
	replicas := []*testServer{ts}
	if ts.peer != nil {
		replicas = append(replicas, ts.peer)
	}
	for _, r := range replicas {
		r.blobs.quiet()
	}
	for _, r := range replicas {
		r.later.wg.Wait()
	}
}

// stop shuts the server down and closes its store; it may be called twice.
func (ts *testServer) stop(t *testing.T) {
	t.Helper()
	if ts.balancer != nil {
		ts.balancer.Close()
		ts.balancer = nil
	}
	if ts.peer != nil {
		ts.peer.stop(t)
	}
	if ts.http == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ts.http.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-ts.done; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
	if err := ts.Close(); err != nil {
		t.Errorf("closing store: %v", err)
	}
	ts.http = nil
}

// response is a finished HTTP exchange.
type response struct {
	code   int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// errorText returns the {"error": ...} message of an error response.
func (r response) errorText(t *testing.T) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	r.json(t, &e)
	if e.Error == "" {
		t.Fatalf("no error in %d response %s", r.code, r.body)
	}
	return e.Error
}

func do(t *testing.T, method, url string, body io.Reader, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: b}
}

func get(t *testing.T, url string) response { t.Helper(); return do(t, "GET", url, nil, nil) }

// upload posts data as a raw body with ?name=name.
func (ts *testServer) upload(t *testing.T, name string, data []byte, header map[string]string) response {
	t.Helper()
	return do(t, "POST", ts.URL+"/api/v1/traces?name="+name, bytes.NewReader(data), header)
}

// uploadAnswer is one upload's answer.
type uploadAnswer struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Name      string          `json:"name"`
	Duplicate bool            `json:"duplicate"`
	Report    json.RawMessage `json:"report"`
	Error     string          `json:"error"`
	Status    int             `json:"status"`
}

// mustUpload uploads data and expects it stored as new.
func (ts *testServer) mustUpload(t *testing.T, name string, data []byte) uploadAnswer {
	t.Helper()
	r := ts.upload(t, name, data, nil)
	if r.code != http.StatusCreated {
		t.Fatalf("upload %s: status %d, want 201: %s", name, r.code, r.body)
	}
	var a uploadAnswer
	r.json(t, &a)
	return a
}

// multipartBody builds a multipart form with the given fields (in order)
// and files.
func multipartBody(t *testing.T, fields [][2]string, files map[string][]byte, order []string) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		mw.WriteField(f[0], f[1])
	}
	for _, name := range order {
		fw, err := mw.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(files[name])
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// assertNothingStored checks that the store, the blobs and the temporary
// directory are empty.
func assertNothingStored(t *testing.T, ts *testServer) {
	t.Helper()
	ts.settle()
	_, total, err := ts.store.List(context.Background(), ListQuery{Limit: 1})
	if err != nil || total != 0 {
		t.Errorf("store holds %d traces (err %v), want 0", total, err)
	}
	var files []string
	ts.blobs.keep.walk(context.Background(), func(sha string) error {
		files = append(files, sha)
		return nil
	})
	if len(files) != 0 {
		t.Errorf("blobs left in %s: %v", ts.blobs.keep, files)
	}
	if tmp := ts.blobs.temps(); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	if n := ts.blobs.inUse(); n != 0 {
		t.Errorf("%d bytes of temporary space still counted, want 0", n)
	}
}

// realTrace returns the bytes of a file in ../shared/traces.
func realTrace(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(realtraces.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expectedVerdicts maps each trace in expected.tsv to its accepted verdicts.
func expectedVerdicts(t *testing.T) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	for _, c := range realtraces.Expected(t) {
		m[c.File] = c.Expect
	}
	return m
}

func jsonUnmarshal(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding %.200s: %w", b, err)
	}
	return nil
}
