package tracetest

// DeepStack is a trace that nests depth Python frames on the main thread
// around a run of gaps: gaps kernels of 40 us, each launched 5 us before
// it from inside the innermost frame, 90 us apart, so that the GPU idles
// 50 us between kernels while the thread is depth frames deep. A hostile
// shape (real stacks are a few dozen deep): an analysis that builds the
// stack anew at each gap takes depth x gaps steps.
func DeepStack(depth, gaps int) *Spec {
	s := &Spec{Threads: []Thread{{MainTID, "python"}}}
	span := int64(gaps)*90_000 + 200_000
	for i := range depth {
		s.Events = append(s.Events, Event{Role: Python, Name: "frame" + string(rune('a'+i%26)), Thread: MainTID, Start: int64(i), Dur: span - 2*int64(i)})
	}
	for k := range gaps {
		t := int64(depth) + 100_000 + int64(k)*90_000
		corr := uint64(k + 1)
		s.Events = append(s.Events,
			Event{Role: Runtime, Name: "cudaLaunchKernel", Thread: MainTID, Start: t, Dur: 2_000, Corr: corr},
			Event{Role: Kernel, Name: "k", Stream: 7, Start: t + 5_000, Dur: 40_000, Corr: corr})
	}
	return s
}
