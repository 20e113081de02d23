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
// CollectiveDispatch ns ending in the launch of the all-reduce kernel. The
// host never blocks: a rank whose input is fast runs ahead and queues its
// work. The compute kernel starts when its launch has returned and the
// device is free (the previous all-reduce is done) and runs Compute ns
// (plus the rank's ExtraCompute); the
// all-reduce starts on rank r at s_r, the later of its launch's return and
// the compute's end, and ends on every rank at max_r(s_r) + Transfer: from
// s_r to the latest start it waits for the slowest rank. Every step is a
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
	}
	end := latest + j.Transfer
	name := fmt.Sprintf("ProfilerStep#%d", k)
	for r, jr := range rs {
		jr.add(Event{Role: Kernel, Name: AllReduceKernel, Stream: CommStream, Start: collStarts[r], Dur: end - collStarts[r], Corr: jr.corr})
		jr.free = end
		jr.add(Event{Role: Annotation, Name: name, Thread: MainTID, Start: starts[r], Dur: jr.h - starts[r]})
		jr.add(Event{Role: DeviceAnnotation, Name: name, Stream: ComputeStream, Start: computes[r], Dur: end - computes[r]})
	}
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
