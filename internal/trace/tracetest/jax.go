package tracetest

import "slices"

// Thread ids and event names of generated JAX loops.
const (
	// RuntimeTID is the XLA runtime thread that launches a JAX step's
	// kernels; the Python thread (MainTID) only dispatches the step.
	RuntimeTID = 3
	// JAXDispatch is the host event of a jitted call on the Python thread.
	JAXDispatch = "PjitFunction(train_step)"
	// JAXExecute is the runtime thread's event around a step's launches.
	JAXExecute = "ThunkExecutor::Execute"
	// JAXBlock is the Python call that waits for the device.
	JAXBlock = "block_until_ready"
)

// JAXLoop is a JAX training loop on one GPU, simulated exactly, as XProf
// records it: without step markers, the Python thread dispatching and the
// runtime thread launching.
//
// Each step, on the Python thread: a jitted call (JAXDispatch of Dispatch
// ns); then the runtime thread runs JAXExecute, Kernels launch calls
// (cuLaunchKernel, LaunchDur each, back to back) from when both the call
// has returned and the previous step's launches are done. Each kernel
// starts when its launch has returned and the device is free, and runs
// Compute ns. With Block, the Python thread then waits in JAXBlock until
// the device is done (at least SyncMin). Last, it spends Host ns in a
// Python function (log_metrics) before the next step.
type JAXLoop struct {
	Steps    int
	Dispatch int64
	Kernels  int // per step; default 1
	Compute  int64
	Block    bool
	Host     int64
}

// Spec simulates the loop and returns its trace.
func (l JAXLoop) Spec() *Spec {
	if l.Kernels == 0 {
		l.Kernels = 1
	}
	s := &Spec{Threads: []Thread{{MainTID, "python3"}, {RuntimeTID, "xla_gpu_runtime"}}}
	add := func(e Event) { s.Events = append(s.Events, e) }
	var h, runtime, device int64 // the clocks of the two threads and of the device
	var corr uint64
	for range l.Steps {
		add(Event{Role: CPUOp, Name: JAXDispatch, Thread: MainTID, Start: h, Dur: l.Dispatch})
		h += l.Dispatch
		r := max(h, runtime)
		add(Event{Role: CPUOp, Name: JAXExecute, Thread: RuntimeTID, Start: r, Dur: int64(l.Kernels) * LaunchDur})
		for range l.Kernels {
			corr++
			add(Event{Role: Runtime, Name: "cuLaunchKernel", Thread: RuntimeTID, Start: r, Dur: LaunchDur, Corr: corr})
			r += LaunchDur
			start := max(r, device)
			add(Event{Role: Kernel, Name: "fusion_convolution", Stream: 7, Start: start, Dur: l.Compute, Corr: corr})
			device = start + l.Compute
		}
		runtime = r
		if l.Block {
			end := max(device, h+SyncMin)
			add(Event{Role: Python, Name: JAXBlock, Thread: MainTID, Start: h, Dur: end - h})
			h = end
		}
		if l.Host > 0 {
			add(Event{Role: Python, Name: "log_metrics", Thread: MainTID, Start: h, Dur: l.Host})
			h += l.Host
		}
	}
	return s
}

// Thread ids and event names of generated JAX programs (JAXProgram).
const (
	// ExecuteTID is the py_xla_execute thread; LaunchTID the GPU launch
	// line ("Host Threads/N"), EnqueueTID the TPU's program queue.
	ExecuteTID = 11
	LaunchTID  = 12
	EnqueueTID = 13
	// GrainNext is grain's DataLoader iterator as the Python tracer
	// records it (the reader drops the "$").
	GrainNext = "$data_loader.py:480 __next__"
	// JAXPrint is the frame print(loss) spends its time in, around the
	// runtime's blocking read.
	JAXPrint = "$array.py:652 _value"
	// JAXLog is the Python a loop runs between steps (JAXProgram.Host).
	JAXLog = "$train.py:88 log_metrics"
	// JAXRead is the runtime's blocking read of a device array.
	JAXRead = "np.asarray(jax.Array)"
	// JAXCompile is the compilation inside a call that misses the cache.
	JAXCompile = "backend_compile"
	// JAXDefrag is the runtime's defragmentation of device memory, on an
	// execute thread, that a call's execute waits for.
	JAXDefrag = "TfrtTpuClient::DefragmentMemory"
	// GrainWorkerNext is grain's iterator over its worker processes'
	// queue, inside GrainNext when the loader runs in workers.
	GrainWorkerNext = "$process_prefetch.py:212 __next__"
	// GrainTake is how long the loop takes to get a batch its workers
	// have ready (ns): the queue's get and the batch's unpickling.
	GrainTake = 100_000
)

// JAXProgram is a JAX training loop laid out in XPlane as JAX lays it out,
// on GPU or (TPU) on TPU, simulated exactly.
//
// Each step, on the loop thread ("python" on GPU, "main" on TPU), inside a
// "train" annotation with its step_num (StepTraceAnnotation): grain's
// iterator for Load ns (GrainNext; with the Python tracer off the thread
// shows nothing meanwhile); then Calls jitted calls. With Workers > 0,
// grain loads in that many worker processes instead (not in the profile),
// each making a batch in Load ns, back to back from time 0 and without a
// bound on the buffer: batch i (from 0) is ready at (i/Workers + 1) *
// Load, and the loop waits in GrainNext > GrainWorkerNext until its batch
// is ready, then takes it (GrainTake). A call is a
// PjitFunction(train_step) of Dispatch ns around the runtime's execute
// (PjRt on GPU, TFRT on TPU), preceded inside it, in the first call of a
// step, by JAXCompile for Compile ns (a recompilation every step). With
// Defrag > 0, the first call of a step waits inside its execute while the
// execute thread defragments device memory (JAXDefrag, Defrag ns from the
// execute's start): the execute lasts Defrag + Dispatch ns. With
// Depth > 0 the runtime's queue holds Depth calls: a call's execute does
// not return before the work of the call Depth before it has finished. A
// call's work is queued when it returns: the execute thread runs an
// execute event of LaunchDur; on GPU the launch line issues cuLaunchKernel
// (LaunchDur, linked by correlation id) and the kernel starts when the
// launch has returned and the device is free; on TPU the queue thread
// enqueues the program (LaunchDur), and the program's run sits on the
// device's "XLA Modules" line around its work, linked to the host by
// XProf's flows as the TFRT runtime writes them (see tpuEnqueue). Either
// way the work starts when the launch or enqueue is done and the device
// is free. Each call's work runs Compute ns. With Print, the step ends in
// print(loss): JAXPrint around JAXRead, blocking until the device is done
// (at least SyncMin).
type JAXProgram struct {
	Steps    int
	TPU      bool
	Load     int64
	Calls    int // per step; default 1
	Dispatch int64
	Compute  int64
	Compile  int64
	Defrag   int64
	Depth    int
	Print    bool
	// Host, after the step's print (or its calls), is Python the loop
	// runs for Host ns (JAXLog, log_metrics) before the next step.
	Host int64
	// Fetch, on a GPU, ends each step with a device-to-host copy of the
	// step's result that the loop thread itself makes and waits for
	// (cuMemcpyDtoHAsync, as np.asarray of a jax.Array may): the copy
	// runs Fetch ns once the step's work is done.
	Fetch   int64
	Workers int
	// NoPythonTracer leaves out the Python frames (GrainNext,
	// GrainWorkerNext, JAXPrint).
	NoPythonTracer bool
	// Uncaptured leaves out the host events of the first Uncaptured
	// steps, as a capture that begins while the device still runs work
	// dispatched before it: their device work is in the trace, the
	// dispatches and enqueues it came from are not.
	Uncaptured int
	// Grain is the grain API the program loads with (grain.go).
	Grain GrainAPI
}

// Spec simulates the program and returns its trace.
func (p JAXProgram) Spec() *Spec {
	calls := max(p.Calls, 1)
	loopName, execute := "python", "PjRtStreamExecutorLoadedExecutable::Execute"
	threads := []Thread{{MainTID, loopName}, {ExecuteTID, "py_xla_execute"}, {LaunchTID, "Host Threads"}}
	if p.TPU {
		loopName, execute = "main", "TfrtTpuLoadedExecutable::Execute"
		threads = []Thread{{MainTID, loopName}, {ExecuteTID, "py_xla_execute"}, {EnqueueTID, "tfrt-non-blocking-queue"}}
	}
	s := &Spec{Threads: threads, TPU: p.TPU}
	add := func(e Event) { s.Events = append(s.Events, e) }
	python := func(name string, start, dur int64) {
		if !p.NoPythonTracer {
			add(Event{Role: Python, Name: name, Thread: MainTID, Start: start, Dur: dur})
		}
	}
	var h, device int64
	var done []int64 // when each call's work ends
	var corr, call uint64
	captured := 0 // the index of the first captured step's first event
	for step := range p.Steps {
		stepStart, first := h, len(s.Events)
		if step == p.Uncaptured {
			captured = first
		}
		add(Event{Role: Annotation, Name: "train", Thread: MainTID, Start: h, StepNum: int64(step + 1)})
		switch {
		case p.Workers > 0:
			ready := (int64(step/p.Workers) + 1) * p.Load
			end := max(ready, h) + GrainTake
			if p.Grain == GrainDataset {
				python(GrainThreadNext, h, end-h)
			} else {
				python(GrainNext, h, end-h)
				python(GrainWorkerNext, h, end-h)
			}
			h = end
		case p.Load > 0 && p.Grain == GrainDataset:
			grainLoad(python, h, h+p.Load)
			h += p.Load
		case p.Load > 0:
			python(GrainNext, h, p.Load)
			h += p.Load
		}
		for c := range calls {
			start := h
			if c == 0 && p.Compile > 0 {
				add(Event{Role: CPUOp, Name: JAXCompile, Thread: MainTID, Start: h, Dur: p.Compile})
				h += p.Compile
			}
			ret := h + p.Dispatch
			if c == 0 && p.Defrag > 0 {
				add(Event{Role: CPUOp, Name: JAXDefrag, Thread: ExecuteTID, Start: h, Dur: p.Defrag})
				ret += p.Defrag
			}
			if k := len(done) - p.Depth; p.Depth > 0 && k >= 0 {
				ret = max(ret, done[k])
			}
			call++
			add(Event{Role: CPUOp, Name: execute, Thread: MainTID, Start: h, Dur: ret - h, Flow: tpuFlow(p.TPU, FlowTFRTExecute, call, false)})
			add(Event{Role: CPUOp, Name: JAXDispatch, Thread: MainTID, Start: start, Dur: ret - start})
			h = ret
			run := max(ret+LaunchDur, device)
			if p.TPU {
				for _, e := range tpuEnqueue(execute, call, ret, run, p.Compute) {
					add(e)
				}
			} else {
				corr++
				add(Event{Role: CPUOp, Name: "PjRtStreamExecutorLoadedExecutable::ExecuteHelper", Thread: ExecuteTID, Start: ret, Dur: LaunchDur})
				add(Event{Role: Runtime, Name: "cuLaunchKernel", Thread: LaunchTID, Start: ret, Dur: LaunchDur, Corr: corr})
			}
			add(Event{Role: Kernel, Name: "fusion", Stream: 7, Start: run, Dur: p.Compute, Corr: corr})
			device = run + p.Compute
			done = append(done, device)
		}
		if p.Fetch > 0 && !p.TPU {
			corr++
			run := max(device, h+LaunchDur)
			add(Event{Role: Runtime, Name: "cuMemcpyDtoHAsync", Thread: MainTID, Start: h, Dur: run + p.Fetch - h, Corr: corr})
			add(Event{Role: Memcpy, Name: "Memcpy DtoH (Device -> Pinned)", Stream: 7, Start: run, Dur: p.Fetch, Corr: corr})
			device = run + p.Fetch
			h = device
		}
		if p.Print {
			end := max(device, h+SyncMin)
			python(JAXPrint, h, end-h)
			add(Event{Role: CPUOp, Name: JAXRead, Thread: MainTID, Start: h, Dur: end - h})
			h = end
		}
		if p.Host > 0 {
			add(Event{Role: Python, Name: JAXLog, Thread: MainTID, Start: h, Dur: p.Host})
			h += p.Host
		}
		s.Events[first].Dur = h - stepStart
	}
	if p.Uncaptured > 0 {
		if p.Uncaptured >= p.Steps {
			captured = len(s.Events)
		}
		all := s.Events
		kept := slices.DeleteFunc(slices.Clone(all[:captured]), func(e Event) bool { return !e.Role.Device() })
		s.Events = append(kept, all[captured:]...)
	}
	if p.Grain == GrainDataset && p.Workers > 0 && !p.NoPythonTracer {
		s.Threads = append(s.Threads, Thread{GrainThreadTID, "grain-thread-prefetch"})
		s.Events = append(s.Events, grainProducer(p.Steps, p.Load)...)
	}
	return s
}

// Names of the TPU runtime's events between a call and its program's run.
const (
	tpuSystemExecute = "tpu::System::Execute"
	// TPUProgram is a call's program run on the "XLA Modules" line.
	TPUProgram = "jit_train_step(8231694027455516873)"
)

// tpuFlow returns call's end of the flow of kind on TPU (none on GPU), with
// ids as the TPU runtime makes them: the execute flows count up with the
// kind in the high word, a launch's id looks random.
func tpuFlow(tpu bool, kind int64, call uint64, consumer bool) Flow {
	if !tpu {
		return Flow{}
	}
	id := uint64(kind)<<32 | call
	if kind == FlowTPULaunch {
		id = call * 0x9e3779b97f4a7c15
	}
	return Flow{ID: id, Kind: kind, Consumer: consumer}
}

// tpuEnqueue returns the events that take a TPU call's work from its
// return at ret to its program's run at run, linked by flows as the TFRT
// runtime writes them: the execute thread's scheduled call consumes the
// loop's Execute and, inside it, hands the program to the queue thread,
// whose DoEnqueueProgram hands it to the device, where its run on the
// "XLA Modules" line holds the program's work.
func tpuEnqueue(execute string, call uint64, ret, run, compute int64) []Event {
	half := int64(LaunchDur / 2)
	return []Event{
		{Role: CPUOp, Name: "Scheduled " + execute, Thread: ExecuteTID, Start: ret, Dur: LaunchDur, Flow: tpuFlow(true, FlowTFRTExecute, call, true)},
		{Role: CPUOp, Name: tpuSystemExecute, Thread: ExecuteTID, Start: ret, Dur: half, Flow: tpuFlow(true, FlowTPUExecute, call, false)},
		{Role: CPUOp, Name: tpuSystemExecute + "=>IssueSequencedEvent", Thread: EnqueueTID, Start: ret, Dur: LaunchDur, Flow: tpuFlow(true, FlowTPUExecute, call, true)},
		{Role: CPUOp, Name: "DoEnqueueProgram", Thread: EnqueueTID, Start: ret, Dur: half, Flow: tpuFlow(true, FlowTPULaunch, call, false)},
		{Role: DeviceAnnotation, Name: TPUProgram, Start: run, Dur: compute, Flow: tpuFlow(true, FlowTPULaunch, call, true)},
	}
}
