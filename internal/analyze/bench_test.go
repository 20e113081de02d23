package analyze

import (
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
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

// tileTrace repeats every track's events of t n times, each copy shifted by
// t's span and given its own correlation ids, as internal/tools/tilexplane does
// with a file: a long run with the event mix of a real one.
func tileTrace(t *trace.Trace, n int) *trace.Trace {
	var span int64
	var maxCorr uint32
	for _, e := range t.Events {
		span = max(span, e.End()+1)
		if e.Flags&trace.FlagFlow == 0 {
			maxCorr = max(maxCorr, e.Corr)
		}
	}
	out := *t
	out.Events = make([]trace.Event, 0, n*len(t.Events))
	out.Tracks = slices.Clone(t.Tracks)
	for i := range out.Tracks {
		lo := len(out.Events)
		for k := range n {
			for _, e := range t.TrackEvents(i) {
				e.Start += int64(k) * span
				switch {
				case e.Flags&trace.FlagFlow != 0:
					// A flow's key is a hash: each copy's its own
					// (tilexplane renumbers the ids before hashing).
					e.Corr = (e.Corr ^ uint32(k)*0x85ebca6b) | 1
				case e.Corr != 0:
					e.Corr += uint32(k) * (maxCorr + 1) // the TPU capture has no wide ids
				}
				out.Events = append(out.Events, e)
			}
		}
		out.Tracks[i].Lo, out.Tracks[i].Hi = lo, len(out.Events)
	}
	return &out
}

// BenchmarkAnalyzeTiledTPU analyses the real TPU XPlane trace repeated 100
// times (2.7 million events): long gaps that the waited-for thread's many
// short events split into thousands of segments each.
func BenchmarkAnalyzeTiledTPU(b *testing.B) {
	tr, err := trace.Open(realtraces.Path(b, "xprof-tpu-inference.xplane.pb"), trace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tr = tileTrace(tr, 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(tr, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(tr.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAnalyzeTiledTPUSteps is BenchmarkAnalyzeTiledTPU with the
// steps of the user's regex (each call of f): every program run is
// followed up its flows to the step of its dispatch (linkPrograms).
func BenchmarkAnalyzeTiledTPUSteps(b *testing.B) {
	tr, err := trace.Open(realtraces.Path(b, "xprof-tpu-inference.xplane.pb"), trace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tr = tileTrace(tr, 100)
	opt := DefaultOptions()
	opt.StepRegex = `PjitFunction\(f\)`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(tr, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(tr.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkLinksHost looks up every launch of a million by correlation id,
// in order, with ids dense (the table) and spread out (the sorted slice).
func BenchmarkLinksHost(b *testing.B) {
	for _, tc := range []struct {
		name string
		step uint32
	}{{"dense", 1}, {"spread", 1 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			const n = 1 << 20
			tr := &trace.Trace{Events: make([]trace.Event, n), Tracks: []trace.Track{{Kind: trace.TrackHost, Lo: 0, Hi: n}}}
			for i := range tr.Events {
				tr.Events[i].Corr = 1 + uint32(i)*tc.step
			}
			l := buildLinks(tr)
			// Work finishes roughly in launch order: look ids up with
			// some disorder, as in scanDevice.
			b.ResetTimer()
			for b.Loop() {
				for i := range n {
					if l.host(tr.Events[i^7].Corr) < 0 {
						b.Fatal("launch not found")
					}
				}
			}
		})
	}
}
