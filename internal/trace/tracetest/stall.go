package tracetest

import "fmt"

// SideStream is the stream another stream's work runs on in StreamWait
// (ComputeStream, job.go's, is the step's kernels').
const SideStream = 20

// StreamWait is a loop whose step's kernel is queued behind another
// stream's event while the host blocks in .item(), as TorchRec's pipelined
// steps are: each step an op "aten::linear" of Dispatch ns ends in four
// calls of LaunchDur each: the launch of a side kernel of Wait ns on
// SideStream, cudaEventRecord, cudaStreamWaitEvent (the compute stream
// waits on that event), and the launch of the step's kernel of Compute ns
// on ComputeStream, which starts when the side kernel has ended. Then the
// host blocks in aten::item > cudaStreamSynchronize until the kernel ends,
// and the next step starts. With SideTraced the side kernel is in the
// trace; without, it is not (another process's or rank's work the event
// stands for): the device then idles with the step's kernel queued.
type StreamWait struct {
	Steps                   int
	Dispatch, Wait, Compute int64
	SideTraced              bool
}

// Spec simulates the loop and returns its trace.
func (l StreamWait) Spec() *Spec {
	s := &Spec{Threads: []Thread{{MainTID, "python"}}}
	var h int64
	var corr uint64
	for k := 1; k <= l.Steps; k++ {
		start := h
		end := h + l.Dispatch
		s.Events = append(s.Events, Event{Role: CPUOp, Name: "aten::linear", Thread: MainTID, Start: h, Dur: l.Dispatch})
		corr++
		side := end - 3*LaunchDur
		s.Events = append(s.Events, Event{Role: Runtime, Name: "cudaLaunchKernel", Thread: MainTID, Start: side - LaunchDur, Dur: LaunchDur, Corr: corr})
		if l.SideTraced {
			s.Events = append(s.Events, Event{Role: Kernel, Name: "all_to_all_kernel", Device: 0, Stream: SideStream, Start: side, Dur: l.Wait, Corr: corr})
		}
		s.Events = append(s.Events,
			Event{Role: Runtime, Name: "cudaEventRecord", Thread: MainTID, Start: side, Dur: LaunchDur},
			Event{Role: Runtime, Name: "cudaStreamWaitEvent", Thread: MainTID, Start: side + LaunchDur, Dur: LaunchDur})
		corr++
		s.Events = append(s.Events, Event{Role: Runtime, Name: "cudaLaunchKernel", Thread: MainTID, Start: end - LaunchDur, Dur: LaunchDur, Corr: corr})
		ks := max(end, side+l.Wait)
		s.Events = append(s.Events, Event{Role: Kernel, Name: "volta_sgemm_128x64_nn", Device: 0, Stream: ComputeStream, Start: ks, Dur: l.Compute, Corr: corr})
		h = max(ks+l.Compute, end+SyncMin)
		s.Events = append(s.Events,
			Event{Role: CPUOp, Name: "aten::item", Thread: MainTID, Start: end, Dur: h - end},
			Event{Role: Runtime, Name: "cudaStreamSynchronize", Thread: MainTID, Start: end, Dur: h - end},
			Event{Role: Annotation, Name: fmt.Sprintf("ProfilerStep#%d", k), Thread: MainTID, Start: start, Dur: h - start})
	}
	return s
}

// CacheClear is a micro-benchmark's loop: each iteration clears a cache on
// the CPU (an op "aten::fill_" of Clear ns), then an op "aten::mul" of
// Dispatch ns launches one kernel of Kernel ns at its end, and the host
// blocks in aten::item > cudaStreamSynchronize until the kernel is done
// (at least SyncMin). Each iteration is a ProfilerStep. The device has
// nothing queued while the host clears the cache: a sync removed would
// not shorten a gap.
type CacheClear struct {
	Iters                   int
	Clear, Dispatch, Kernel int64
}

// Spec simulates the loop and returns its trace.
func (l CacheClear) Spec() *Spec {
	s := &Spec{Threads: []Thread{{MainTID, "python"}}}
	var h int64
	for k := 1; k <= l.Iters; k++ {
		start := h
		op := h + l.Clear
		end := op + l.Dispatch
		ks := end
		h = max(ks+l.Kernel, end+SyncMin)
		s.Events = append(s.Events,
			Event{Role: CPUOp, Name: "aten::fill_", Thread: MainTID, Start: start, Dur: l.Clear},
			Event{Role: CPUOp, Name: "aten::mul", Thread: MainTID, Start: op, Dur: l.Dispatch},
			Event{Role: Runtime, Name: "cudaLaunchKernel", Thread: MainTID, Start: end - LaunchDur, Dur: LaunchDur, Corr: uint64(k)},
			Event{Role: Kernel, Name: "vectorized_elementwise_kernel", Device: 0, Stream: ComputeStream, Start: ks, Dur: l.Kernel, Corr: uint64(k)},
			Event{Role: CPUOp, Name: "aten::item", Thread: MainTID, Start: end, Dur: h - end},
			Event{Role: Runtime, Name: "cudaStreamSynchronize", Thread: MainTID, Start: end, Dur: h - end},
			Event{Role: Annotation, Name: fmt.Sprintf("ProfilerStep#%d", k), Thread: MainTID, Start: start, Dur: h - start})
	}
	return s
}

// Warmup is a loop whose steps hold warm-up: each step an op
// "aten::linear" of Dispatch ns launches a kernel of Compute ns at its end,
// a CPU optimizer step of Optimizer ns (at least Compute) follows, and
// aten::item > cudaStreamSynchronize finds the device done (SyncMin). In
// step 2, the first the window keeps, the launch takes FirstLaunch ns
// (loading the kernel's module); step 4 starts with an "aten::empty" whose
// cudaFree takes Free ns (the caching allocator giving memory back).
type Warmup struct {
	Steps                                           int
	Dispatch, Compute, Optimizer, FirstLaunch, Free int64
}

// Spec simulates the loop and returns its trace.
func (l Warmup) Spec() *Spec {
	s := &Spec{Threads: []Thread{{MainTID, "python"}}}
	var h int64
	for k := 1; k <= l.Steps; k++ {
		start := h
		if k == 4 && l.Free > 0 {
			s.Events = append(s.Events,
				Event{Role: CPUOp, Name: "aten::empty", Thread: MainTID, Start: h, Dur: l.Free},
				Event{Role: Runtime, Name: "cudaFree", Thread: MainTID, Start: h, Dur: l.Free})
			h += l.Free
		}
		launch := int64(LaunchDur)
		if k == 2 && l.FirstLaunch > 0 {
			launch = l.FirstLaunch
		}
		end := h + l.Dispatch - LaunchDur + launch
		s.Events = append(s.Events,
			Event{Role: CPUOp, Name: "aten::linear", Thread: MainTID, Start: h, Dur: end - h},
			Event{Role: Runtime, Name: "cudaLaunchKernel", Thread: MainTID, Start: end - launch, Dur: launch, Corr: uint64(k)},
			Event{Role: Kernel, Name: "volta_sgemm_128x64_nn", Device: 0, Stream: ComputeStream, Start: end, Dur: l.Compute, Corr: uint64(k)},
			Event{Role: CPUOp, Name: "Optimizer.step#SGD.step", Thread: MainTID, Start: end, Dur: l.Optimizer})
		sync := end + max(l.Optimizer, l.Compute)
		h = sync + SyncMin
		s.Events = append(s.Events,
			Event{Role: CPUOp, Name: "aten::item", Thread: MainTID, Start: sync, Dur: SyncMin},
			Event{Role: Runtime, Name: "cudaStreamSynchronize", Thread: MainTID, Start: sync, Dur: SyncMin},
			Event{Role: Annotation, Name: fmt.Sprintf("ProfilerStep#%d", k), Thread: MainTID, Start: start, Dur: h - start})
	}
	return s
}
