package nsight_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// BenchmarkRead reads a generated export of a loop of 200 steps of 400
// kernels (241,000 events, 10 MB), from a file as trace.Open reads one. The
// events a second are its figure ("Nsight Systems reader" in
// docs/performance.md, where scripts/bench-nsight.sh compares the reader
// with the Kineto one on the same loop, internal/tools/genloop).
func BenchmarkRead(b *testing.B) {
	s := tracetest.Loop{Steps: 200, Input: 500_000, Dispatch: 20_000, Kernels: 400, Compute: 30_000, Sync: true}.Spec()
	path := filepath.Join(b.TempDir(), "loop.sqlite")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := tracetest.WriteNsight(f, s); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	var n int
	for range b.N {
		tr, err := trace.Open(path, trace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		n = len(tr.Events)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
