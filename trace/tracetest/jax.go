package tracetest

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
