package serve

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestExpandingTarStopsAtTempQuota: a .tar.gz that expands about 1000x is
// refused with 507 once its traces would pass the temporary space's
// quota, before a byte past it is written, and leaves nothing behind.
func TestExpandingTarStopsAtTempQuota(t *testing.T) {
	bomb := tracetest.ExpandingTar(8, 1<<20) // 8 MiB from about 8 KiB
	ts := startAlone(t, Config{Analyze: (&fakeAnalyzer{}).analyze, MaxTemp: 2 << 20})
	body, ctype := multipartBody(t, nil, map[string][]byte{"logs.tar.gz": bomb}, []string{"logs.tar.gz"})
	r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
	var got []uploadAnswer
	r.json(t, &got)
	if r.code != http.StatusInsufficientStorage || len(got) != 1 || !strings.HasPrefix(got[0].Error, "logs.tar.gz: logs/rankba.trace.json: the server's temporary space is full") || !strings.Contains(got[0].Error, "temporary space is full") || !strings.Contains(got[0].Error, "--max-temp") {
		t.Errorf("expanding tar = %d %s, want 507 naming --max-temp", r.code, r.body)
	}
	if n := ts.blobs.inUse(); n != 0 {
		t.Errorf("%d bytes of temporary space still counted, want 0", n)
	}
	assertNothingStored(t, ts)
}

// TestTempQuotaAcrossRequests: the quota holds for the temporary files of
// all requests together: while one upload waits for its analysis holding
// its file, another that would pass the quota is refused with 507; once
// the first is stored, it goes through.
func TestTempQuotaAcrossRequests(t *testing.T) {
	fa := &fakeAnalyzer{gate: make(chan struct{}), started: make(chan string)}
	first := fakeReport("parallel", 1, 1e6)
	second := append(fakeReport("parallel", 2, 1e6), bytes.Repeat([]byte(" "), 1000)...)
	ts := startAlone(t, Config{Analyze: fa.analyze, MaxTemp: int64(len(first) + len(second) - 1)})
	answer := make(chan response, 1)
	go func() { answer <- ts.upload(t, "first", first, nil) }()
	<-fa.started
	if n := ts.blobs.inUse(); n != int64(len(first)) {
		t.Errorf("the waiting upload holds %d bytes of the quota, want %d", n, len(first))
	}
	r := ts.upload(t, "second", second, nil)
	if r.code != http.StatusInsufficientStorage || !strings.Contains(r.errorText(t), "--max-temp") {
		t.Errorf("upload past the quota = %d %s, want 507", r.code, r.body)
	}
	close(fa.gate)
	if r := <-answer; r.code != http.StatusCreated {
		t.Fatalf("first upload = %d %s", r.code, r.body)
	}
	go func() { <-fa.started }()
	if r := ts.upload(t, "second", second, nil); r.code != http.StatusCreated {
		t.Errorf("upload once the quota has room = %d %s, want 201", r.code, r.body)
	}
	if n := ts.blobs.inUse(); n != 0 {
		t.Errorf("%d bytes of temporary space still counted, want 0", n)
	}
}

// TestTooManyParts: a multipart upload of more parts than MaxParts is
// refused whole with 413 and one line, and stores nothing.
func TestTooManyParts(t *testing.T) {
	fa := &fakeAnalyzer{}
	ts := start(t, Config{Analyze: fa.analyze, MaxParts: 10})
	for _, n := range []int{10, 11, 3000} {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for i := range n {
			fw, _ := mw.CreateFormFile("file", fmt.Sprintf("p%d.json", i))
			fw.Write(fakeReport("parallel", 1000*n+i))
		}
		mw.Close()
		r := do(t, "POST", ts.URL+"/api/v1/traces", &buf, map[string]string{"Content-Type": mw.FormDataContentType()})
		if n <= 10 {
			if r.code != http.StatusCreated {
				t.Errorf("%d parts = %d %s, want 201", n, r.code, r.body)
			}
			continue
		}
		var got []uploadAnswer
		r.json(t, &got)
		want := "multipart form: more than 10 parts, expected at most 10 (the server's --max-parts)"
		if r.code != http.StatusRequestEntityTooLarge || len(got) != 1 || got[0].Error != want {
			t.Errorf("%d parts = %d %s, want 413 %q", n, r.code, r.body, want)
		}
	}
	if c := fa.calls.Load(); c != 10 {
		t.Errorf("%d analyses, want the 10 of the request within the limit", c)
	}
	if tmp := ts.blobs.temps(); len(tmp) != 0 || ts.blobs.inUse() != 0 {
		t.Errorf("temporary files left: %v (%d bytes counted)", tmp, ts.blobs.inUse())
	}
}

// TestFullDiskIs507: an error of a full disk is answered 507, not 500.
func TestFullDiskIs507(t *testing.T) {
	err := fmt.Errorf("storing blob x: %w", syscall.ENOSPC)
	if got := statusOf(err); got != http.StatusInsufficientStorage {
		t.Errorf("statusOf(%v) = %d, want 507", err, got)
	}
}

// TestArchiveBombRatio: a .tar.gz that expands more than a gzipped trace
// may (200x past a 1 MiB allowance) is refused with 413 once past it,
// whatever room --max-upload and --max-temp leave.
func TestArchiveBombRatio(t *testing.T) {
	bomb := tracetest.ExpandingTar(2, 2<<20) // 4 MiB from a few KiB
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	body, ctype := multipartBody(t, nil, map[string][]byte{"logs.tar.gz": bomb}, []string{"logs.tar.gz"})
	r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
	var got []uploadAnswer
	r.json(t, &got)
	want := fmt.Sprintf("logs.tar.gz: expands more than 200x its %d bytes: not a real archive of traces (real ones expand 5-30x), likely a decompression bomb", len(bomb))
	if r.code != http.StatusRequestEntityTooLarge || len(got) != 1 || got[0].Error != want {
		t.Errorf("archive bomb = %d %s, want 413 %q", r.code, r.body, want)
	}
	assertNothingStored(t, ts)
}
