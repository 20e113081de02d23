package run

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestProbeRank reads ranks from the head of Chrome traces of a job,
// gzipped or not, and finds none where a trace names none or is no
// Chrome trace.
func TestProbeRank(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	job := tracetest.Job{Steps: 2, Input: []int64{1000, 1000, 1000, 1000}, Dispatch: 100, Compute: 1000}
	rank2 := job.Specs()[2]
	var chrome, xplane bytes.Buffer
	if err := tracetest.WriteChrome(&chrome, rank2); err != nil {
		t.Fatal(err)
	}
	if err := tracetest.WriteXPlane(&xplane, rank2); err != nil {
		t.Fatal(err)
	}
	// PyTorch writes distributedInfo before the events; one past the
	// first MiB is not looked for.
	late := `{"traceEvents":[` + strings.Repeat(`{"ph":"i","name":"x","ts":1,"pid":1,"tid":1},`, 30_000) +
		`{"ph":"i","name":"x","ts":1,"pid":1,"tid":1}],"distributedInfo":{"rank":1,"world_size":2}}`
	tests := []struct {
		name        string
		path        string
		rank, world int
		ok          bool
	}{
		{"chrome", write("rank-2.pt.trace.json", chrome.Bytes()), 2, 4, true},
		{"chrome gzipped", write("rank-2.pt.trace.json.gz", tracetest.Gzip(chrome.Bytes())), 2, 4, true},
		{"chrome without distributedInfo", write("x.json", []byte(`{"traceEvents":[]}`)), 0, 0, false},
		{"distributedInfo without world_size", write("norank.json", []byte(`{"distributedInfo":{"rank":3},"traceEvents":[]}`)), 0, 0, false},
		{"distributedInfo past the first MiB", write("late.json", []byte(late)), 0, 0, false},
		{"xplane: no probe", write("rank-2.xplane.pb", xplane.Bytes()), 0, 0, false},
		{"not a trace", write("notes.txt", []byte("rank 2 of 4\n")), 0, 0, false},
		{"empty", write("empty.json", nil), 0, 0, false},
		{"missing", filepath.Join(dir, "missing.json"), 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, ok := ProbeRank(tt.path)
			if r != tt.rank || w != tt.world || ok != tt.ok {
				t.Errorf("ProbeRank(%s) = %d, %d, %v; want %d, %d, %v", filepath.Base(tt.path), r, w, ok, tt.rank, tt.world, tt.ok)
			}
		})
	}
}

// TestProbeRankDLRM reads the ranks of a real 8-rank job: worker N is
// rank N.
func TestProbeRankDLRM(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks", "worker*.pt.trace.json.gz"))
	if err != nil || len(files) != 8 {
		t.Fatalf("%d DLRM rank files (%v), want 8", len(files), err)
	}
	for _, f := range files {
		var want int
		if _, err := fmt.Sscanf(filepath.Base(f), "worker%d_", &want); err != nil {
			t.Fatal(err)
		}
		if r, w, ok := ProbeRank(f); r != want || w != 8 || !ok {
			t.Errorf("ProbeRank(%s) = %d, %d, %v; want %d, 8, true", filepath.Base(f), r, w, ok, want)
		}
	}
}
