package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/run/runtest"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// realAnalyzer is NewAnalyzer with the default options.
func realAnalyzer() Analyzer {
	return NewAnalyzer(&run.Engine{Analysis: analyze.DefaultOptions()}, render.Options{})
}

// TestPanicFailsOneUpload checks that a panic while analysing, in the real
// Analyzer's reader or in any Analyzer, fails that upload with 500 and an
// error naming it, stores nothing, and leaves the server serving: the only
// analysis slot is free again for the next upload.
func TestPanicFailsOneUpload(t *testing.T) {
	fa := &fakeAnalyzer{}
	panicky := func(ctx context.Context, u Upload) (Reports, error) {
		if u.Name == "bug" {
			panic("analyzer bug")
		}
		return fa.analyze(ctx, u)
	}
	tests := []struct {
		name    string
		analyze Analyzer
		good    []byte
		want    string
	}{
		{"reader", realAnalyzer(), kinetoTrace(3, 3000, 1000), "bug: internal error while analysing: " + runtest.PanicValue},
		{"analyzer", panicky, fakeReport("parallel", 1, 1e6), "bug: internal error while analysing: analyzer bug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startAlone(t, Config{Analyze: tt.analyze, MaxAnalyses: 1})
			r := ts.upload(t, "bug", []byte(runtest.PanicMagic), nil)
			if r.code != http.StatusInternalServerError || r.errorText(t) != tt.want {
				t.Fatalf("panicking upload = %d %s, want 500 %q", r.code, r.body, tt.want)
			}
			assertNothingStored(t, ts)
			ts.mustUpload(t, "good", tt.good)
		})
	}
}

// TestMemoryAdmission checks that an upload whose estimated memory is
// more than the server's whole --max-memory is refused with 413, naming
// both, and one within it is analysed.
func TestMemoryAdmission(t *testing.T) {
	data := kinetoTrace(3, 3000, 1000)
	engine := func(maxMemory int64) Config {
		cfg := Config{MaxMemory: maxMemory}
		cfg.UseEngine(&run.Engine{Analysis: analyze.DefaultOptions()}, render.Options{})
		return cfg
	}
	refused := startAlone(t, engine(1<<20))
	r := refused.upload(t, "gen.json", data, nil)
	if r.code != http.StatusRequestEntityTooLarge {
		t.Fatalf("upload over the budget = %d %s, want 413", r.code, r.body)
	}
	if msg := r.errorText(t); !strings.HasPrefix(msg, "gen.json: needs up to ") || !strings.Contains(msg, "--max-memory of 1.0 MiB") {
		t.Errorf("error %q, want the upload and the budget named", msg)
	}
	assertNothingStored(t, refused)

	admitted := startAlone(t, engine(64<<20))
	admitted.mustUpload(t, "gen.json", data)
}

// TestRawNameHasSuffix checks that a trace's download is named so that a
// directory of traces reads it: an upload named without its format's
// suffix gets it, .gz for gzipped bytes; a name with one keeps it.
func TestRawNameHasSuffix(t *testing.T) {
	plain := kinetoTrace(3, 3000, 1000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(kinetoTrace(4, 3000, 1000)) // other bytes: not a duplicate
	zw.Close()
	ts := start(t, Config{Analyze: realAnalyzer()})
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"w0", plain, "w0.pt.trace.json"},
		{"w1", gz.Bytes(), "w1.pt.trace.json.gz"},
		{"run.json", kinetoTrace(5, 3000, 1000), "run.json"},
	} {
		a := ts.mustUpload(t, tt.name, tt.data)
		cd := get(t, ts.URL+"/api/v1/traces/"+a.ID+"/raw").header.Get("Content-Disposition")
		if _, params, err := mime.ParseMediaType(cd); err != nil || params["filename"] != tt.want {
			t.Errorf("upload %q: raw Content-Disposition = %q, want filename %q", tt.name, cd, tt.want)
		}
	}
}

// TestEmptyEventsRefused: two XPlane uploads of empty events, sent at
// once, a few kilobytes gzipped and hundreds of megabytes of events when
// read, are refused by the bound on their events before either is read,
// however small the gzip trailer says they are.
func TestEmptyEventsRefused(t *testing.T) {
	cfg := Config{MaxMemory: 128 << 20}
	cfg.UseEngine(&run.Engine{Analysis: analyze.DefaultOptions()}, render.Options{})
	ts := start(t, cfg)
	bomb := tracetest.Gzip(tracetest.EmptyEvents(4<<20, 64<<10))
	copy(bomb[len(bomb)-4:], []byte{0, 4, 0, 0}) // a forged trailer: 256 KiB
	answers := make(chan response, 2)
	for i := range 2 {
		go func() { answers <- ts.upload(t, fmt.Sprintf("bomb%d.xplane.pb.gz", i), bomb, nil) }()
	}
	for range 2 {
		r := <-answers
		if r.code != http.StatusRequestEntityTooLarge || !strings.Contains(r.errorText(t), "more than the server's whole --max-memory of 128.0 MiB") {
			t.Errorf("bomb = %d %s, want 413 naming --max-memory", r.code, r.body)
		}
	}
	assertNothingStored(t, ts)
}
