package tracetest

import "fmt"

// Names of the collective a generated job runs at the end of every step:
// the host op PyTorch's process group records and the NCCL kernel it
// launches.
const (
	AllReduceOp     = "nccl:all_reduce"
	AllReduceKernel = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"
	// ComputeStream and CommStream are the streams of compute kernels and
	// of collectives, as DDP keeps them apart.
	ComputeStream = 7
	CommStream    = 20
)

// Job is a data-parallel training job, one GPU per rank, simulated exactly
// and jointly so that every collective wait follows from the fields.
//
// Each step, on each rank's main thread: the input (a DataLoader __next__
// annotation of Input[r] ns), an aten::linear op of Dispatch ns ending in
// the launch of one compute kernel, and an nccl:all_reduce op of
// CollectiveDispatch ns ending in the launch of the all-reduce kernel, and,
// with Overlap set, an aten::mul op of Dispatch ns launching a kernel of
// Overlap ns on the compute stream, which runs while the all-reduce waits
// (as a backward pass overlaps its gradient all-reduce). The host never
// blocks: a rank whose input is fast runs ahead and queues its
// work. The compute kernel starts when its launch has returned and the
// device is free (the previous all-reduce is done) and runs Compute ns
// (plus the rank's ExtraCompute); the
// all-reduce starts on rank r at s_r, the later of its launch's return and
// the compute's end, and ends on every rank at max_r(s_r) + Transfer: from
// s_r to the latest start it waits for the slowest rank. The overlapping
// kernel starts at the later of its launch's return and s_r; the next
// compute waits for it and for the all-reduce. Every step is a
// ProfilerStep#N annotation, mirrored on the device.
//
// A launch sits inside its op, so Dispatch and CollectiveDispatch are at
// least LaunchDur: Specs raises shorter ones to that.
type Job struct {
	Steps int
	// Input holds each rank's input time per step; its length is the
	// number of ranks.
	Input              []int64
	Dispatch           int64
	CollectiveDispatch int64
	Compute            int64
	// ExtraCompute, when set, holds compute each rank runs on top of
	// Compute: a rank with more work than the others.
	ExtraCompute []int64
	Transfer     int64
	// Overlap, when set, is the length of the kernel each rank runs
	// during its all-reduce.
	Overlap int64
	// ClockOffset, when set, holds a shift added to every time of a
	// rank's trace, as the clocks of different hosts disagree.
	ClockOffset []int64
}

// jobRank is one rank's simulation state.
type jobRank struct {
	s    *Spec
	h    int64 // host time
	free int64 // when the device is next free
	corr uint64
}

// Specs simulates the job and returns one trace per rank, rank r's with
// Rank r and WorldSize len(Input).
func (j Job) Specs() []*Spec {
	j.Dispatch = max(j.Dispatch, LaunchDur)
	j.CollectiveDispatch = max(j.CollectiveDispatch, LaunchDur)
	n := len(j.Input)
	rs := make([]*jobRank, n)
	for r := range rs {
		rs[r] = &jobRank{s: &Spec{
			PID: int64(1000 + r), Threads: []Thread{{MainTID, "python"}},
			Rank: r, WorldSize: n,
		}}
	}
	for k := 1; k <= j.Steps; k++ {
		j.step(rs, k)
	}
	specs := make([]*Spec, n)
	for r, jr := range rs {
		if r < len(j.ClockOffset) {
			for i := range jr.s.Events {
				jr.s.Events[i].Start += j.ClockOffset[r]
			}
		}
		specs[r] = jr.s
	}
	return specs
}

// step simulates step k on every rank: each host's part first, then the
// all-reduce, whose end every rank shares.
func (j Job) step(rs []*jobRank, k int) {
	starts := make([]int64, len(rs))   // host step starts
	computes := make([]int64, len(rs)) // compute kernel starts
	collStarts := make([]int64, len(rs))
	overlapEnds := make([]int64, len(rs))
	latest := int64(0)
	for r, jr := range rs {
		starts[r] = jr.h
		jr.add(Event{Role: Annotation, Name: SingleProcessLoader, Thread: MainTID, Start: jr.h, Dur: j.Input[r]})
		jr.h += j.Input[r]
		launched := jr.op("aten::linear", j.Dispatch)
		compute := j.Compute
		if r < len(j.ExtraCompute) {
			compute += j.ExtraCompute[r]
		}
		computes[r] = max(launched, jr.free)
		jr.add(Event{Role: Kernel, Name: "volta_sgemm_128x64_nn", Stream: ComputeStream, Start: computes[r], Dur: compute, Corr: jr.corr})
		launched = jr.op(AllReduceOp, j.CollectiveDispatch)
		collStarts[r] = max(launched, computes[r]+compute)
		latest = max(latest, collStarts[r])
		if j.Overlap > 0 {
			launched = jr.op("aten::mul", j.Dispatch)
			start := max(launched, collStarts[r])
			jr.add(Event{Role: Kernel, Name: "vectorized_elementwise_kernel", Stream: ComputeStream, Start: start, Dur: j.Overlap, Corr: jr.corr})
			overlapEnds[r] = start + j.Overlap
		}
	}
	end := latest + j.Transfer
	name := fmt.Sprintf("ProfilerStep#%d", k)
	for r, jr := range rs {
		jr.add(Event{Role: Kernel, Name: AllReduceKernel, Stream: CommStream, Start: collStarts[r], Dur: end - collStarts[r], Corr: jr.corr})
		jr.free = max(end, overlapEnds[r])
		jr.add(Event{Role: Annotation, Name: name, Thread: MainTID, Start: starts[r], Dur: jr.h - starts[r]})
		jr.add(Event{Role: DeviceAnnotation, Name: name, Stream: ComputeStream, Start: computes[r], Dur: jr.free - computes[r]})
	}
}

// ManyRanks is a job of n ranks and the given steps whose ranks all
// differ: input from 0.2 to 1.4 ms, extra compute from 0 to 0.2 ms, a
// kernel overlapping every all-reduce, and a clock of its own each. Its
// figures are not worked out by hand: it exercises a job analysis at
// scale, for comparisons of two ways of reaching them.
func ManyRanks(n, steps int) Job {
	j := Job{Steps: steps, Dispatch: 100_000, CollectiveDispatch: 50_000, Compute: 1_000_000, Transfer: 200_000, Overlap: 300_000}
	for r := range n {
		j.Input = append(j.Input, 200_000+int64(r*7919%13)*100_000)
		j.ExtraCompute = append(j.ExtraCompute, int64(r%5)*50_000)
		j.ClockOffset = append(j.ClockOffset, int64(r)*1_000_003)
	}
	return j
}

func (jr *jobRank) add(e Event) { jr.s.Events = append(jr.s.Events, e) }

// op records a host op of dur ns on the main thread ending in a launch
// call, and returns when the launch returns.
func (jr *jobRank) op(name string, dur int64) int64 {
	jr.add(Event{Role: CPUOp, Name: name, Thread: MainTID, Start: jr.h, Dur: dur})
	jr.h += dur
	jr.corr++
	jr.add(Event{Role: Runtime, Name: "cudaLaunchKernel", Thread: MainTID, Start: jr.h - LaunchDur, Dur: LaunchDur, Corr: jr.corr})
	return jr.h
}
