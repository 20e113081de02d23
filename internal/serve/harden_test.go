package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// rawRequest opens a connection to ts and writes req to it, leaving it
// open; the connection is closed at the end of the test.
func rawRequest(t *testing.T, ts *testServer, req string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	// A safety net only: every test ends its exchanges long before.
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	return conn
}

// readAnswer reads the HTTP answer on conn.
func readAnswer(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// waitFor spins until cond holds (the server reached a state the test
// cannot be told of), failing after a minute as a safety net.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
		runtime.Gosched()
	}
}

// TestSlowBodiesDoNotStarveUploads holds a dozen uploads trickling their
// bodies while the only analysis slot is free: they are received before
// they ask for it, so a whole upload goes through meanwhile.
func TestSlowBodiesDoNotStarveUploads(t *testing.T) {
	ts := startAlone(t, Config{Analyze: (&fakeAnalyzer{}).analyze, MaxAnalyses: 1})
	for i := range 12 {
		rawRequest(t, ts, fmt.Sprintf("POST /api/v1/traces?name=slow%d HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789", i))
	}
	waitFor(t, "the 12 slow uploads are being received", func() bool { return len(ts.blobs.temps()) == 12 })
	ts.mustUpload(t, "meanwhile", fakeReport("parallel", 1, 1e6))
}

// TestTricklingUploadCutOff sends a few bytes and stalls: the upload falls
// below the minimum rate once its grace has passed and is answered 408
// naming the flag, long before its deadline.
func TestTricklingUploadCutOff(t *testing.T) {
	ts := startAlone(t, Config{Analyze: (&fakeAnalyzer{}).analyze, MinUploadRate: 1 << 20, UploadGrace: 50 * time.Millisecond, UploadTimeout: time.Hour})
	conn := rawRequest(t, ts, "POST /api/v1/traces?name=trickle HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
	resp, body := readAnswer(t, conn)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "trickle: upload timed out after 10 bytes") || !strings.Contains(body, "--min-upload-rate") {
		t.Errorf("answer to a trickling upload: %d %s, want 408 naming the minimum rate", resp.StatusCode, body)
	}
	assertNothingStored(t, ts)
}

// TestUnauthenticatedTakesNoSlot starts ten multipart uploads without the
// token that stall inside their file: each is refused with 401 at the
// file's header, before its content is read or a slot asked for, and an
// authorised upload is analysed meanwhile.
func TestUnauthenticatedTakesNoSlot(t *testing.T) {
	fa := &fakeAnalyzer{}
	ts := startAlone(t, Config{Analyze: fa.analyze, Token: "s3cret", MaxAnalyses: 1})
	const form = "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"bomb.json\"\r\n\r\n{\"verdict\":"
	for range 10 {
		conn := rawRequest(t, ts, "POST /api/v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 100000\r\n\r\n"+form)
		if resp, body := readAnswer(t, conn); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("unauthenticated multipart upload = %d %s, want 401", resp.StatusCode, body)
		}
	}
	if r := ts.upload(t, "anon", fakeReport("parallel", 1, 1e6), nil); r.code != http.StatusUnauthorized {
		t.Errorf("unauthenticated raw upload = %d, want 401", r.code)
	}
	if n := fa.calls.Load(); n != 0 {
		t.Errorf("%d analyses for unauthenticated uploads, want 0", n)
	}
	if r := ts.upload(t, "authorised", fakeReport("parallel", 2, 1e6), map[string]string{"Authorization": "Bearer s3cret"}); r.code != http.StatusCreated {
		t.Errorf("authorised upload = %d %s, want 201", r.code, r.body)
	}
}

// TestCrossSiteWritesRefused posts the upload form and a delete as another
// site's page would, and sends a foreign Host as a rebound DNS name
// would: all are refused, and the server's own pages still work.
func TestCrossSiteWritesRefused(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze, AllowedHosts: []string{"localhost", "127.0.0.1", "::1"}})
	a := ts.mustUpload(t, "kept", fakeReport("parallel", 1, 1e6))
	form := func(n int) (io.Reader, string) {
		return multipartBody(t, nil, map[string][]byte{"t.json": fakeReport("parallel", n, 1e6)}, []string{"t.json"})
	}
	body, ctype := form(2)
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
		{"Origin": "http://evil.example"}, // an older browser: Origin alone
	} {
		h["Content-Type"] = ctype
		if r := do(t, "POST", ts.URL+"/upload", body, h); r.code != http.StatusForbidden {
			t.Errorf("cross-site form post %v = %d %s, want 403", h, r.code, r.body)
		}
	}
	if r := do(t, "DELETE", ts.URL+"/api/v1/traces/"+a.ID, nil, map[string]string{"Sec-Fetch-Site": "cross-site"}); r.code != http.StatusForbidden {
		t.Errorf("cross-site delete = %d, want 403", r.code)
	}
	body, ctype = form(3)
	if r := do(t, "POST", ts.URL+"/upload", body, map[string]string{"Content-Type": ctype, "Sec-Fetch-Site": "same-origin", "Origin": ts.URL}); r.code != http.StatusSeeOther {
		t.Errorf("same-origin form post = %d %s, want 303", r.code, r.body)
	}

	conn := rawRequest(t, ts, "GET /api/v1/traces HTTP/1.1\r\nHost: evil.example\r\n\r\n")
	if resp, body := readAnswer(t, conn); resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(body, "--allow-host") {
		t.Errorf("foreign Host = %d %s, want 421 naming --allow-host", resp.StatusCode, body)
	}
	r := get(t, strings.Replace(ts.URL, "127.0.0.1", "localhost", 1)+"/traces/"+a.ID)
	if r.code != http.StatusOK || r.header.Get("X-Frame-Options") != "DENY" || !strings.Contains(r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("page by localhost = %d, headers %v; want 200, never framed", r.code, r.header)
	}
}

// TestDataDirLocked starts a second server on a data directory in use:
// it refuses, saying so, and starts once the first has closed.
func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	first, err := New(Config{Analyze: (&fakeAnalyzer{}).analyze, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Analyze: (&fakeAnalyzer{}).analyze, DataDir: dir}); err == nil || !strings.Contains(err.Error(), "is in use by another tracegap serve") {
		t.Fatalf("second server on the same directory: %v, want a refusal", err)
	}
	first.Close()
	second, err := New(Config{Analyze: (&fakeAnalyzer{}).analyze, DataDir: dir})
	if err != nil {
		t.Fatalf("server after the first closed: %v", err)
	}
	second.Close()
}

// TestLogLinesEscaped requests a path holding a newline: the log gets one
// line, the newline escaped.
func TestLogLinesEscaped(t *testing.T) {
	var buf bytes.Buffer
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze, Log: log.New(&buf, "", 0)})
	if r := get(t, ts.URL+"/api/x%0AGET%20/api/forged:%20500%1B[2J"); r.code != http.StatusNotFound {
		t.Fatalf("status %d, want 404", r.code)
	}
	want := `GET /api/x\nGET /api/forged: 500\x1b[2J: 404 no API route GET /api/x\nGET /api/forged: 500\x1b[2J` + "\n"
	if buf.String() != want {
		t.Errorf("log = %q, want %q", buf.String(), want)
	}
}

// TestPageOverflow asks for the last page an int can number: it is empty,
// not the first page again.
func TestPageOverflow(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	ts.mustUpload(t, "one", fakeReport("parallel", 1, 1e6))
	for _, q := range []string{"?page=9223372036854775807", "?page=4611686018427387905&limit=2"} {
		var a listAnswer
		if r := get(t, ts.URL+"/api/v1/traces"+q); r.code != http.StatusOK {
			t.Fatalf("%s: %d %s", q, r.code, r.body)
		} else {
			r.json(t, &a)
		}
		if len(a.Traces) != 0 || a.Total != 1 {
			t.Errorf("%s: %d traces of %d, want none of 1", q, len(a.Traces), a.Total)
		}
	}
}

// TestNULInPartHeader sends a multipart part whose header holds a NUL: a
// malformed request, 400, not a server error.
func TestNULInPartHeader(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	body := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\x00b\"\r\nX-\x00: 1\r\n\r\n{}\r\n--B--\r\n"
	r := do(t, "POST", ts.URL+"/api/v1/traces", strings.NewReader(body), map[string]string{"Content-Type": "multipart/form-data; boundary=B"})
	if r.code != http.StatusBadRequest {
		t.Errorf("NUL in a part header = %d %s, want 400", r.code, r.body)
	}
	assertNothingStored(t, ts)
}

// TestDataPathHidden fails as a full disk would: the answer names the
// data directory as <data-dir>, not by its path.
func TestDataPathHidden(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	err := fmt.Errorf("storing blob: %w", &fs.PathError{Op: "write", Path: ts.blobs.tmp + "/upload-1", Err: errors.New("no space left on device")})
	if got, want := ts.public(err), "storing blob: write <data-dir>/tmp/upload-1: no space left on device"; got != want {
		t.Errorf("public error = %q, want %q", got, want)
	}
}

// TestHTMLRenderedOnceOnFirstView uploads a generated trace: no HTML is
// rendered then; the first view renders and keeps it, the second reads it.
func TestHTMLRenderedOnceOnFirstView(t *testing.T) {
	var cfg Config
	cfg.UseEngine(&run.Engine{Analysis: analyze.DefaultOptions()}, render.Options{})
	var renders int
	renderHTML := cfg.RenderHTML
	cfg.RenderHTML = func(ctx context.Context, rec Record, files []Upload, settings []byte) ([]byte, error) {
		renders++ // the content lock serialises renders of one record
		return renderHTML(ctx, rec, files, settings)
	}
	ts := start(t, cfg)
	a := ts.mustUpload(t, "gen.json", kinetoTrace(6, 3000, 1000))
	if b, err := ts.store.HTML(context.Background(), a.ID); err != nil || len(b) != 0 {
		t.Fatalf("HTML after upload: %d bytes, %v; want none yet", len(b), err)
	}
	var pages [2][]byte
	for i := range pages {
		r := get(t, ts.URL+"/traces/"+a.ID)
		if r.code != http.StatusOK || !bytes.Contains(r.body, []byte("gen.json")) {
			t.Fatalf("view %d: %d, want the report of gen.json", i+1, r.code)
		}
		pages[i] = r.body
	}
	if renders != 1 || !bytes.Equal(pages[0], pages[1]) {
		t.Errorf("%d renders for two views (same page: %v), want 1", renders, bytes.Equal(pages[0], pages[1]))
	}
}

// TestAbandonedUploadNotKept queues an upload behind a running analysis
// and cancels it: it is neither analysed nor stored.
func TestAbandonedUploadNotKept(t *testing.T) {
	fa := &fakeAnalyzer{gate: make(chan struct{}), started: make(chan string, 2)}
	ts := startAlone(t, Config{Analyze: fa.analyze, MaxAnalyses: 1, MaxQueue: 1})
	first := make(chan response, 1)
	go func() { first <- ts.upload(t, "first", fakeReport("parallel", 1, 1e6), nil) }()
	<-fa.started
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/api/v1/traces?name=gone", bytes.NewReader(fakeReport("parallel", 2, 1e6)))
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, "the second upload waits", func() bool { _, _, w := ts.admit.state(); return w == 1 })
	cancel()
	<-done
	waitFor(t, "the abandoned upload leaves the queue", func() bool { _, _, w := ts.admit.state(); return w == 0 })
	close(fa.gate)
	if r := <-first; r.code != http.StatusCreated {
		t.Errorf("first upload = %d, want 201", r.code)
	}
	if n := fa.calls.Load(); n != 1 {
		t.Errorf("%d analyses, want 1: the abandoned upload is not analysed", n)
	}
	if _, err := ts.store.BySHA(context.Background(), sha(fakeReport("parallel", 2, 1e6))); !errors.Is(err, ErrNotFound) {
		t.Errorf("abandoned upload stored: %v", err)
	}
}

// memInUse returns the memory the runtime holds from the system and has
// not released: what the process's RSS follows.
func memInUse() int64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// TestBombsAdmittedWithinBudget sends six small gzip uploads that inflate
// to a large trace at once, under a memory budget that two of them fit:
// two are admitted, the four others are refused with 503 and Retry-After
// (no queue). The memory the process holds while the two are analysed,
// read from runtime/metrics, stays within the budget.
func TestBombsAdmittedWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("analyses two large traces")
	}
	e := &run.Engine{Analysis: analyze.DefaultOptions()}
	var cfg Config
	cfg.UseEngine(e, render.Options{})
	const n = 6
	bombs := make([][]byte, n)
	for i := range bombs {
		bombs[i] = tracetest.Gzip(kinetoTrace(20000+i, 3000, 1000)) // ~10 MB inflated, each its own
	}
	need := e.Need(run.Input{Path: writeTemp(t, bombs[0])})
	cfg.MaxMemory = need*5/2 + need/8 // room for two of the six
	cfg.MaxAnalyses = n
	gate, started := make(chan struct{}), make(chan string, n)
	analyzeOne := cfg.Analyze
	cfg.Analyze = func(ctx context.Context, u Upload) (Reports, error) {
		started <- u.Name
		<-gate
		return analyzeOne(ctx, u)
	}
	ts := startAlone(t, cfg)
	// As `tracegap serve` does: the collector aims at half the budget
	// above what the process held before the analyses, leaving the rest
	// for what a soft limit overshoots.
	runtime.GC()
	run.FixMemoryLimit(memInUse() + run.ServiceMemoryLimit(cfg.MaxMemory))
	defer debug.SetMemoryLimit(math.MaxInt64)

	answers := make(chan response, n)
	for i, b := range bombs {
		go func() { answers <- ts.upload(t, fmt.Sprintf("bomb%d", i), b, nil) }()
	}
	var got []response
	for range n - 2 { // the refused answer at once; the admitted wait at the gate
		got = append(got, <-answers)
	}
	for _, r := range got {
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); r.code != http.StatusServiceUnavailable || err != nil || s < 1 {
			t.Errorf("bomb beyond the budget = %d (Retry-After %q) %s, want 503 with Retry-After", r.code, r.header.Get("Retry-After"), r.body)
		}
	}
	if len(started) != 2 {
		t.Fatalf("%d bombs admitted, want 2", len(started))
	}

	runtime.GC()
	base := memInUse()
	var peak int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, memInUse()-base)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	close(gate)
	for range 2 {
		if r := <-answers; r.code != http.StatusCreated {
			t.Errorf("admitted bomb = %d %s, want 201", r.code, r.body)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("estimate %d MiB each, budget %d MiB, peak %d MiB above the baseline", need>>20, cfg.MaxMemory>>20, peak>>20)
	if peak > cfg.MaxMemory {
		t.Errorf("the process held %d MiB above its baseline while the admitted bombs ran, over the %d MiB budget", peak>>20, cfg.MaxMemory>>20)
	}
}

// writeTemp writes b to a file of the test's and returns its path.
func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "upload")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
