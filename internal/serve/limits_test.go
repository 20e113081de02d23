package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracegap/tracegap/internal/compare"
)

func TestOversizeUpload(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze, MaxUpload: 1024})
	big := append(fakeReport("parallel", 1, 1e6), bytes.Repeat([]byte(" "), 2048)...)
	tests := []struct {
		name string
		body io.Reader
	}{
		// Content-Length over the cap: refused before reading the body.
		{"declared", bytes.NewReader(big)},
		// Chunked, no length: refused when the cap is crossed.
		{"chunked", io.MultiReader(bytes.NewReader(big))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, "POST", ts.URL+"/api/v1/traces?name=big", tt.body, nil)
			if r.code != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d %s, want 413", r.code, r.body)
			}
			if msg := r.errorText(t); !strings.Contains(msg, "larger than 1024 bytes") {
				t.Errorf("error %q, want the cap named", msg)
			}
			assertNothingStored(t, ts)
		})
	}
	if r := ts.upload(t, "small", fakeReport("parallel", 2, 1e6), nil); r.code != 201 {
		t.Errorf("upload under the cap = %d, want 201", r.code)
	}
}

func TestBusyServerAnswers503(t *testing.T) {
	fa := &fakeAnalyzer{gate: make(chan struct{}), started: make(chan string, 1)}
	ts := startAlone(t, Config{Analyze: fa.analyze, MaxAnalyses: 1})
	first := make(chan response, 1)
	go func() { first <- ts.upload(t, "first", fakeReport("parallel", 1, 1e6), nil) }()
	<-fa.started // the only slot is taken

	r := ts.upload(t, "second", fakeReport("parallel", 2, 1e6), nil)
	if r.code != http.StatusServiceUnavailable {
		t.Fatalf("upload while full = %d %s, want 503", r.code, r.body)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("Retry-After = %q, want a positive number of seconds", r.header.Get("Retry-After"))
	}
	// The configured budget is not quoted as memory in use.
	if got, want := r.errorText(t), "server busy: 1 of 1 analyses running (--max-analyses), no memory budget, 0 of 0 waiting (--max-queue), retry later"; got != want {
		t.Errorf("503 says %q, want %q", got, want)
	}
	if m := string(get(t, ts.URL+"/metrics").body); !strings.Contains(m, "tracegap_analyses_in_flight 1\n") {
		t.Errorf("metrics while busy lack tracegap_analyses_in_flight 1:\n%s", m)
	}
	close(fa.gate)
	if r := <-first; r.code != http.StatusCreated {
		t.Errorf("first upload = %d, want 201", r.code)
	}
	fa.started = nil
	if r := ts.upload(t, "second", fakeReport("parallel", 2, 1e6), nil); r.code != http.StatusCreated {
		t.Errorf("retry after the slot freed = %d %s, want 201", r.code, r.body)
	}
}

func TestQueuedUploadWaitsForSlot(t *testing.T) {
	fa := &fakeAnalyzer{gate: make(chan struct{}), started: make(chan string)}
	ts := startAlone(t, Config{Analyze: fa.analyze, MaxAnalyses: 1, MaxQueue: 1})
	answers := make(chan response, 2)
	go func() { answers <- ts.upload(t, "first", fakeReport("parallel", 1, 1e6), nil) }()
	if name := <-fa.started; name != "first" {
		t.Fatalf("started %q, want first", name)
	}
	go func() { answers <- ts.upload(t, "queued", fakeReport("parallel", 2, 1e6), nil) }()
	for _, _, waiting := ts.admit.state(); waiting != 1; _, _, waiting = ts.admit.state() { // until the second upload waits
		runtime.Gosched()
	}
	if r := ts.upload(t, "third", fakeReport("parallel", 3, 1e6), nil); r.code != http.StatusServiceUnavailable {
		t.Errorf("upload with the slot and the queue full = %d, want 503", r.code)
	}
	close(fa.gate)
	if name := <-fa.started; name != "queued" {
		t.Errorf("started %q, want the queued upload", name)
	}
	for range 2 {
		if r := <-answers; r.code != http.StatusCreated {
			t.Errorf("upload = %d %s, want 201", r.code, r.body)
		}
	}
}

func TestSlowClientTimedOut(t *testing.T) {
	ts := startAlone(t, Config{Analyze: (&fakeAnalyzer{}).analyze, UploadTimeout: 500 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Promise 1000 bytes, send 10, then stall.
	fmt.Fprintf(conn, "POST /api/v1/traces?name=slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
	// A safety net only: the server must end the exchange long before.
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	got, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("server did not close the stalled connection: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil)
	if err != nil || resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Errorf("answer to a stalled upload: %q, want 408 and the connection closed", got)
	}
	assertNothingStored(t, ts)
}

func TestCutConnectionLeavesNothing(t *testing.T) {
	fa := &fakeAnalyzer{}
	ts := startAlone(t, Config{Analyze: fa.analyze})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/v1/traces?name=cut HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"verdict\":")
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(time.Minute)) // safety net
	got, _ := io.ReadAll(conn)
	conn.Close()
	if !bytes.HasPrefix(got, []byte("HTTP/1.1 400")) || !bytes.Contains(got, []byte(`"cut: upload cut off after 11 bytes"`)) {
		t.Errorf("answer to a cut upload: %q, want 400 saying where it was cut", got)
	}
	if n := fa.calls.Load(); n != 0 {
		t.Errorf("analyzer ran %d times on a cut upload, want 0", n)
	}
	assertNothingStored(t, ts)
}

func TestGracefulShutdownFinishesAnalyses(t *testing.T) {
	fa := &fakeAnalyzer{gate: make(chan struct{}), started: make(chan string, 1)}
	ts := startAlone(t, Config{Analyze: fa.analyze})
	data := fakeReport("parallel", 1, 1e6)
	answer := make(chan response, 1)
	go func() { answer <- ts.upload(t, "inflight", data, nil) }()
	<-fa.started

	shuttingDown := make(chan struct{})
	ts.http.RegisterOnShutdown(func() { close(shuttingDown) })
	stopped := make(chan error, 1)
	go func() { stopped <- ts.http.Shutdown(context.Background()) }()
	<-shuttingDown
	close(fa.gate) // the analysis finishes after shutdown began

	if r := <-answer; r.code != http.StatusCreated {
		t.Errorf("upload running at shutdown = %d %s, want 201", r.code, r.body)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	<-ts.done
	ts.http = nil
	if _, err := ts.store.Get(context.Background(), sha(data)[:IDLen]); err != nil {
		t.Errorf("upload finished during shutdown is not stored: %v", err)
	}
	ts.Close()
}

func TestRestartKeepsReports(t *testing.T) {
	dir := t.TempDir()
	fa := &fakeAnalyzer{}
	ts := start(t, Config{Analyze: fa.analyze, DataDir: dir})
	data := fakeReport("data-bound", 1, 3e6)
	a := ts.mustUpload(t, "before-restart", data)
	ts.stop(t)

	ts = start(t, Config{Analyze: fa.analyze, DataDir: dir})
	if r := get(t, ts.URL+"/api/v1/traces/"+a.ID); r.code != 200 || !bytes.Equal(bytes.TrimSpace(r.body), bytes.TrimSpace(a.Report)) {
		t.Errorf("report after restart: %d %s, want 200 and the same report", r.code, r.body)
	}
	if r := get(t, ts.URL+"/api/v1/traces/"+a.ID+"/raw"); sha(r.body) != sha(data) {
		t.Errorf("raw after restart: %d bytes, want the %d uploaded", len(r.body), len(data))
	}
	var l listAnswer
	get(t, ts.URL+"/api/v1/traces").json(t, &l)
	if l.Total != 1 || l.Traces[0].Name != "before-restart" || l.Traces[0].Verdict != "data-bound" {
		t.Errorf("list after restart = %+v, want the one earlier trace", l)
	}
	if r := ts.upload(t, "again", data, nil); r.code != http.StatusOK || fa.calls.Load() != 1 {
		t.Errorf("re-upload after restart = %d with %d analyses, want 200 and no new analysis", r.code, fa.calls.Load())
	}
}

func TestMigrations(t *testing.T) {
	path := t.TempDir() + "/t.db"
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
		t.Errorf("version = %d, %v; want %d", v, err, SchemaVersion)
	}
	var mode string
	s.db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	s.db.Exec("UPDATE schema_version SET version = 99")
	s.Close()
	if _, err := OpenSQLite(path); err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Errorf("opening a newer schema: %v, want a refusal naming version 99", err)
	}
}

// TestMigrateMovesFigures opens a database that kept check figures apart
// from the summary: they move into the summary, where checks read them,
// and a trace stored with a summary but no figures keeps its summary as it
// was (checks refuse it).
// figuresMoved is the SQLite schema version whose migration moved the
// check figures into the summary.
const figuresMoved = 5

func TestMigrateMovesFigures(t *testing.T) {
	path := t.TempDir() + "/t.db"
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	const summary = `{"version":2,"verdict":"sequential","confidence":"high","steps":3}`
	const figures = `{"version":1,"verdict":"sequential","confidence":"high","window_ns":900,"steps":3,"truncated":true,` +
		`"idle_ns":500,"sync_idle_ns":400,"input_idle_ns":50,"devices":[{"id":"GPU 0","busy_ns":400}],"findings":[{"id":"forced-sync","severity":"high","idle_ns":400}]}`
	for _, q := range []string{
		`UPDATE schema_version SET version = ` + strconv.Itoa(figuresMoved-1),
		`INSERT INTO traces (id, sha256, name, size, format, verdict, confidence, created_ns) VALUES ('0123456789abcdef', 'x', 'a', 1, 'chrome', 'sequential', 'high', 0)`,
		`INSERT INTO reports (id, json, html, summary, figures) VALUES ('0123456789abcdef', '{}', '', '` + summary + `', '` + figures + `')`,
		`INSERT INTO traces (id, sha256, name, size, format, verdict, confidence, created_ns) VALUES ('fedcba9876543210', 'y', 'b', 1, 'chrome', 'sequential', 'high', 0)`,
		`INSERT INTO reports (id, json, html, summary) VALUES ('fedcba9876543210', '{}', '', '` + summary + `')`,
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	if s, err = OpenSQLite(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var got compare.Summary
	if b, err := s.Summary(ctx, "0123456789abcdef"); err != nil || json.Unmarshal(b, &got) != nil {
		t.Fatalf("summary = %s, %v", b, err)
	}
	want := compare.Summary{
		Version: 2, Verdict: "sequential", Confidence: "high", Steps: 3,
		Window: &compare.WindowFigures{
			Ns: 900, Steps: 3, Truncated: true, IdleNs: 500, SyncIdleNs: 400, InputIdleNs: 50,
			Devices: []compare.DeviceBusy{{ID: "GPU 0", BusyNs: 400}},
		},
		Findings: []compare.FindingFigure{{ID: "forced-sync", Severity: "high", IdleNs: 400}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("migrated summary = %+v, want %+v", got, want)
	}
	if b, err := s.Summary(ctx, "fedcba9876543210"); err != nil || string(b) != summary {
		t.Errorf("summary of a trace without figures = %s, %v; want it as it was", b, err)
	}
}

// TestMigrateKeepsOldTraces opens a database of schema version 1 (before
// comparison summaries, jobs and check figures): its traces stay, traces
// without a summary.
func TestMigrateKeepsOldTraces(t *testing.T) {
	path := t.TempDir() + "/t.db"
	s, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE job_files`, `DROP TABLE reports`, `DROP TABLE traces`, sqliteMigrations[0], `UPDATE schema_version SET version = 1`,
		`INSERT INTO traces (id, sha256, name, size, format, verdict, confidence, created_ns) VALUES ('0123456789abcdef', 'x', 'old', 1, 'chrome', 'parallel', 'high', 0)`,
		`INSERT INTO reports (id, json, html) VALUES ('0123456789abcdef', '{}', '<p>')`,
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	if s, err = OpenSQLite(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if v, err := s.Version(ctx); err != nil || v != SchemaVersion {
		t.Errorf("version = %d, %v; want %d", v, err, SchemaVersion)
	}
	if b, err := s.JSON(ctx, "0123456789abcdef"); err != nil || string(b) != "{}" {
		t.Errorf("old report = %q, %v; want it kept", b, err)
	}
	if _, err := s.Summary(ctx, "0123456789abcdef"); !errors.Is(err, ErrNoSummary) {
		t.Errorf("old trace's summary: %v, want ErrNoSummary", err)
	}
	if rec, err := s.Get(ctx, "0123456789abcdef"); err != nil || rec.Kind != KindTrace {
		t.Errorf("old trace = %+v, %v; want kind %q", rec, err, KindTrace)
	}
	if _, err := s.Summary(ctx, "ffffffffffffffff"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing trace's summary: %v, want ErrNotFound", err)
	}
}
