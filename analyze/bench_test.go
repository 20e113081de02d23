package analyze

import (
	"testing"

	"github.com/tracegap/tracegap/trace/tracetest"
)

// BenchmarkAnalyze analyses a generated loop of a million device kernels
// (four million events): a host-bound loop, so that every kernel leaves a
// gap to attribute, the worst case for the attribution.
func BenchmarkAnalyze(b *testing.B) {
	tr := tracetest.Build(tracetest.Loop{
		Steps: 1000, Input: 2 * msec, Dispatch: 30 * usec, Kernels: 1000, Compute: 20 * usec, Sync: true,
	}.Spec())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Analyze(tr, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(tr.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAnalyzeSmall analyses a six-step loop: the fixed cost of an
// analysis, which dominates for the small traces a service sees.
func BenchmarkAnalyzeSmall(b *testing.B) {
	tr := tracetest.Build(scenarios[0].loop.Spec())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(tr, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
