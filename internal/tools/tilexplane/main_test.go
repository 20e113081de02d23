package main

import (
	"path/filepath"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// corrs returns the distinct correlation ids of t's events.
func corrs(t *trace.Trace) map[uint64]bool {
	m := map[uint64]bool{}
	for _, e := range t.Events {
		if e.Corr != 0 {
			m[t.CorrID(e.Corr)] = true
		}
	}
	return m
}

// TestTile tiles real traces and checks that the copies are all there,
// distinct and in sequence, and that the analysis of the benchmark's
// source reaches the same verdict tiled.
func TestTile(t *testing.T) {
	tests := []struct {
		file   string
		copies int
		// sameVerdict: the copies keep the source's verdict. The
		// fused-attention trace's host line starts 9.7 s before 13 ms
		// of device work, so its copies leave the device idle between
		// them: tiled, it is another run. So is the TPU capture's: the
		// idle between copies, where no host thread shows an event,
		// takes its untraced share from 14.1% to 17.5%, over the host
		// threshold.
		sameVerdict bool
	}{
		{"xprof-tpu-inference.xplane.pb", 3, false},
		{"tracelens-jax-te-fused-attn.xplane.pb", 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			src := realtraces.Path(t, tt.file)
			out := filepath.Join(t.TempDir(), "tiled.xplane.pb")
			if err := run(src, out, tt.copies); err != nil {
				t.Fatal(err)
			}
			want := open(t, src)
			got := open(t, out)
			if len(got.Events) != tt.copies*len(want.Events) {
				t.Errorf("%d events, want %d copies of %d", len(got.Events), tt.copies, len(want.Events))
			}
			if len(got.Tracks) != len(want.Tracks) {
				t.Errorf("%d tracks, want %d", len(got.Tracks), len(want.Tracks))
			}
			if g, w := len(corrs(got)), tt.copies*len(corrs(want)); g != w {
				t.Errorf("%d distinct correlation ids, want %d", g, w)
			}
			if g, w := span(got), span(want); g < int64(tt.copies)*w {
				t.Errorf("span %d ns, want at least %d copies of %d", g, tt.copies, w)
			}
			if g, w := verdict(t, got), verdict(t, want); tt.sameVerdict && g != w {
				t.Errorf("verdict %s, want the source's %s", g, w)
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	dir := t.TempDir()
	if err := run(filepath.Join(dir, "missing.pb"), filepath.Join(dir, "out.pb"), 2); err == nil {
		t.Error("a missing source: no error")
	}
	src := realtraces.Path(t, "xprof-tpu-inference.xplane.pb")
	if err := run(src, filepath.Join(dir, "out.pb"), 1<<40); err == nil {
		t.Error("copies overflowing the times: no error")
	}
}

// span returns the time from the trace's start to its last event's end.
func span(t *trace.Trace) int64 {
	var end int64
	for _, e := range t.Events {
		end = max(end, e.End())
	}
	return end
}

func open(t *testing.T, path string) *trace.Trace {
	t.Helper()
	tr, err := trace.Open(path, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func verdict(t *testing.T, tr *trace.Trace) analyze.Verdict {
	t.Helper()
	r, err := advice.Analyze(tr, analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r.Verdict
}
