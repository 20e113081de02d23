package tracetest

import "fmt"

// Timing constants of generated loops, in nanoseconds.
const (
	// LaunchDur is the length of every launch call; a launch sits at the
	// end of the op that issues it.
	LaunchDur = 10_000
	// SyncMin is the shortest blocking call: a sync whose work is already
	// done still takes this long.
	SyncMin = 5_000
)

// Thread ids of generated loops.
const (
	MainTID     = 1
	BackwardTID = 2
)

// SingleProcessLoader and MultiProcessLoader are the PyTorch profiler's names
// for a DataLoader's __next__ without and with worker processes.
const (
	SingleProcessLoader = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
	MultiProcessLoader  = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"
)

// Loop is a training loop on one host process, simulated exactly, so that
// every device gap and what the host did in it follow from the fields.
//
// Each step, on the main thread: the input (a DataLoader __next__
// annotation of Input ns), then Kernels ops "aten::linear" of Dispatch ns,
// each ending in one launch call (LaunchDur) per device; each kernel starts
// when both its launch has returned and its device is free, and runs
// Compute ns (Compute - d*Skew on device d). With Sync the step ends in
// aten::item > cudaStreamSynchronize (cudaDeviceSynchronize on several
// devices), blocking until every device is done (or, with SyncPrevious,
// until the work queued before this step's launches is done). Every step is
// a ProfilerStep#N annotation, mirrored on each device.
//
// With PageableCopy the input ends in a blocking copy nested in it, and
// with Optimizer a host optimizer step sits between the launches and the
// sync (see the fields).
//
// An op's launches sit inside it, back to back, so Dispatch is at least
// Devices*LaunchDur: Spec raises a shorter one to that, as it fills in
// Kernels and Devices left at zero, rather than start launches before
// their op (and, in the first step, before the trace).
type Loop struct {
	Steps int
	// NoStepMarkers leaves out the ProfilerStep annotations.
	NoStepMarkers bool
	Input         int64
	// InputName names the input annotation (default SingleProcessLoader,
	// MultiProcessLoader with a Loader).
	InputName string
	// UntracedInput spends the input time on the main thread without any
	// event: the loader was not traced.
	UntracedInput bool
	Dispatch      int64
	Kernels       int // per step; default 1
	Compute       int64
	Devices       int // default 1
	Skew          int64
	Sync          bool
	SyncPrevious  bool
	// Backward launches the kernels after the first of each step from a
	// backward thread while the main thread waits in autograd::backward.
	Backward bool
	// PageableCopy, when positive, ends each step's input (after its
	// Input ns of loading) with a cudaMemcpyAsync nested in the input
	// event, as TorchRec's "## sparse_data_dist ##" does: a device-to-host
	// copy to pageable memory on device 0 of PageableCopy ns, which runs
	// once the work queued before it is done (stream order), and a call
	// that returns PageableCopy ns after the copy ends (the driver moving
	// the data from its pinned staging buffer into pageable memory). The
	// host blocks in the call: a sync, not loading.
	PageableCopy int64
	// Stacks wraps the main thread's calls in Python frames, as the
	// PyTorch profiler records them with with_stack=True: each call
	// inside a user frame of the script (Script, at the *Line constants)
	// and, below it, a framework frame (torch/...), both exactly as long
	// as the call. The frames change no time.
	Stacks bool
	// Optimizer, when positive, is a host op "Optimizer.step#SGD.step" of
	// Optimizer ns after each step's launches, before its sync: a CPU-side
	// optimizer. At least Compute long, it lets the sync find the device
	// already idle (an empty queue).
	Optimizer int64
	// Loader, when set, feeds the loop from worker processes (see
	// WorkerLoader) instead of loading Input ns inline.
	Loader *WorkerLoader
}

// Call sites of a Loop with Stacks: the script's lines that call the
// loader, the ops, the optimizer and the sync, and the user function
// inside the loader that issues the pageable copy.
const (
	Script        = "train.py"
	LoaderLine    = 31
	OpLine        = 38
	OptimizerLine = 41
	ItemLine      = 45
	CopyFile      = "input.py"
	CopyLine      = 12
	// PageableCopyBytes is the size of a Loop's pageable copy.
	PageableCopyBytes = 704
)

// loopSim holds the simulation's clocks.
type loopSim struct {
	l Loop
	s *Spec
	h int64 // host time
	// workers simulates Loop.Loader; nil without one.
	workers *workerSim
	free    []int64 // when each device is next free
	corr    uint64
}

// Spec simulates the loop and returns its trace.
func (l Loop) Spec() *Spec {
	if l.Kernels == 0 {
		l.Kernels = 1
	}
	if l.Devices == 0 {
		l.Devices = 1
	}
	switch {
	case l.InputName != "":
	case l.Loader != nil:
		l.InputName = MultiProcessLoader
	default:
		l.InputName = SingleProcessLoader
	}
	l.Dispatch = max(l.Dispatch, int64(l.Devices)*LaunchDur)
	sim := &loopSim{l: l, s: &Spec{Threads: []Thread{{MainTID, "python"}}}, free: make([]int64, l.Devices)}
	if l.Backward {
		sim.s.Threads = append(sim.s.Threads, Thread{BackwardTID, "autograd"})
	}
	if l.Loader != nil {
		sim.startWorkers()
	}
	for k := 1; k <= l.Steps; k++ {
		sim.step(k)
	}
	return sim.s
}

func (sim *loopSim) add(e Event) { sim.s.Events = append(sim.s.Events, e) }

func (sim *loopSim) step(k int) {
	l := sim.l
	start := sim.h
	input := len(sim.s.Events)
	if (l.Input+l.PageableCopy > 0 || l.Loader != nil) && !l.UntracedInput {
		sim.frames(MainTID, Script, LoaderLine, "<module>", "torch/utils/data/dataloader.py(631): __next__")
		sim.add(Event{Role: Annotation, Name: l.InputName, Thread: MainTID, Start: start})
	}
	sim.h += sim.input(k)
	if l.PageableCopy > 0 {
		sim.pageableCopy()
	}
	for i := input; i < len(sim.s.Events) && sim.s.Events[i].Start == start && sim.s.Events[i].Dur == 0; i++ {
		sim.s.Events[i].Dur = sim.h - start
	}
	queued := maxOf(sim.free)
	first := make([]int64, l.Devices)
	var bwStart int64
	for j := 0; j < l.Kernels; j++ {
		tid := int64(MainTID)
		if l.Backward && j > 0 {
			tid = BackwardTID
			if j == 1 {
				bwStart = sim.h
			}
		}
		starts := sim.op(tid)
		if j == 0 {
			first = starts
		}
	}
	if l.Backward && l.Kernels > 1 {
		sim.add(Event{Role: CPUOp, Name: "autograd::backward", Thread: MainTID, Start: bwStart, Dur: sim.h - bwStart})
	}
	if l.Optimizer > 0 {
		sim.framed(MainTID, Script, OptimizerLine, "<module>", "torch/optim/optimizer.py(480): wrapper", l.Optimizer)
		sim.add(Event{Role: CPUOp, Name: "Optimizer.step#SGD.step", Thread: MainTID, Start: sim.h, Dur: l.Optimizer})
		sim.h += l.Optimizer
	}
	if l.Sync {
		target := maxOf(sim.free)
		if l.SyncPrevious {
			target = queued
		}
		end := max(target, sim.h+SyncMin)
		name := "cudaStreamSynchronize"
		if l.Devices > 1 {
			name = "cudaDeviceSynchronize"
		}
		sim.framed(MainTID, Script, ItemLine, "<module>", "<built-in method item of Tensor object at 0x7f3a2c1d9e50>", end-sim.h)
		sim.add(Event{Role: CPUOp, Name: "aten::item", Thread: MainTID, Start: sim.h, Dur: end - sim.h})
		sim.add(Event{Role: Runtime, Name: name, Thread: MainTID, Start: sim.h, Dur: end - sim.h})
		sim.h = end
	}
	if l.NoStepMarkers {
		return
	}
	name := fmt.Sprintf("ProfilerStep#%d", k)
	sim.add(Event{Role: Annotation, Name: name, Thread: MainTID, Start: start, Dur: sim.h - start})
	for d := range sim.free {
		sim.add(Event{Role: DeviceAnnotation, Name: name, Device: d, Stream: 7, Start: first[d], Dur: sim.free[d] - first[d]})
	}
}

// pageableCopy simulates the blocking device-to-host copy that ends a
// step's input (see Loop.PageableCopy).
func (sim *loopSim) pageableCopy() {
	l := sim.l
	sim.corr++
	cs := max(sim.h, sim.free[0])
	sim.add(Event{Role: Memcpy, Name: "Memcpy DtoH (Device -> Pageable)", Device: 0, Stream: 7, Start: cs, Dur: l.PageableCopy, Corr: sim.corr, Bytes: PageableCopyBytes})
	sim.free[0] = cs + l.PageableCopy
	end := sim.free[0] + l.PageableCopy
	sim.framed(MainTID, CopyFile, CopyLine, "fetch_lengths", "torch/_tensor.py(1087): to", end-sim.h)
	sim.add(Event{Role: Runtime, Name: "cudaMemcpyAsync", Thread: MainTID, Start: sim.h, Dur: end - sim.h, Corr: sim.corr})
	sim.h = end
}

// op simulates one aten::linear on thread tid launching a kernel on every
// device, and returns the kernels' starts.
func (sim *loopSim) op(tid int64) []int64 {
	l := sim.l
	if tid == MainTID {
		sim.framed(tid, Script, OpLine, "<module>", "torch/nn/modules/module.py(1779): _call_impl", l.Dispatch)
	}
	sim.add(Event{Role: CPUOp, Name: "aten::linear", Thread: tid, Start: sim.h, Dur: l.Dispatch})
	end := sim.h + l.Dispatch
	starts := make([]int64, l.Devices)
	for d := range sim.free {
		sim.corr++
		ls := end - int64(l.Devices-d)*LaunchDur
		sim.add(Event{Role: Runtime, Name: "cudaLaunchKernel", Thread: tid, Start: ls, Dur: LaunchDur, Corr: sim.corr})
		ks := max(ls+LaunchDur, sim.free[d])
		dur := l.Compute - int64(d)*l.Skew
		sim.add(Event{Role: Kernel, Name: "volta_sgemm_128x64_nn", Device: d, Stream: 7, Start: ks, Dur: dur, Corr: sim.corr})
		sim.free[d] = ks + dur
		starts[d] = ks
	}
	sim.h = end
	return starts
}

// frames opens, with Stacks, the Python frames of a call starting now on
// thread tid: the user frame file(line): fn and the framework frame below
// it, left without a duration for the caller to close.
func (sim *loopSim) frames(tid int64, file string, line int, fn, framework string) {
	if !sim.l.Stacks {
		return
	}
	sim.add(Event{Role: Python, Name: fmt.Sprintf("%s(%d): %s", file, line, fn), Thread: tid, Start: sim.h})
	sim.add(Event{Role: Python, Name: framework, Thread: tid, Start: sim.h})
}

// framed adds, with Stacks, the Python frames of a call of dur starting
// now on thread tid (see frames).
func (sim *loopSim) framed(tid int64, file string, line int, fn, framework string, dur int64) {
	n := len(sim.s.Events)
	sim.frames(tid, file, line, fn, framework)
	for i := n; i < len(sim.s.Events); i++ {
		sim.s.Events[i].Dur = dur
	}
}

func maxOf(v []int64) int64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}
