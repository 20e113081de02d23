// Package tracetest writes synthetic traces whose ground truth is known, in
// Chrome trace-event JSON (Kineto style) and XPlane, for tests and benchmarks.
//
// A Spec is format-neutral: host threads, device streams and the events on
// them, in absolute nanoseconds. Writers map it to each format; scenario
// builders produce Specs for the situations the analysis must recognise.
package tracetest

import "strconv"

// Role says what a synthetic event stands for; each writer maps it to its
// format's categories, planes and lines.
type Role uint8

const (
	// CPUOp is a host operator (Kineto cpu_op, an XPlane host event).
	CPUOp Role = iota
	// Runtime is a host runtime call: a launch (cudaLaunchKernel), a copy
	// (cudaMemcpyAsync) or a sync (cudaStreamSynchronize); Corr links a
	// launch to its device work.
	Runtime
	// Annotation is a host user annotation; a step when named
	// "ProfilerStep#N".
	Annotation
	// Python is a Python function frame on the host.
	Python
	// Kernel is device compute.
	Kernel
	// Memcpy is a device copy; name it like Kineto does
	// ("Memcpy HtoD (Pageable -> Device)").
	Memcpy
	// Memset is a device memset.
	Memset
	// DeviceAnnotation is the device mirror of a host annotation: an
	// overlay, not work.
	DeviceAnnotation
)

// Device reports whether events of this role sit on a device.
func (r Role) Device() bool { return r >= Kernel }

// Thread is a host thread.
type Thread struct {
	TID  int64
	Name string
}

// Event is one synthetic event.
type Event struct {
	Role Role
	Name string
	// Thread is the host thread's TID for host roles.
	Thread int64
	// Device and Stream place device roles: GPU index and stream number.
	Device int
	Stream int
	// Start and Dur are absolute nanoseconds.
	Start, Dur int64
	// Corr links a Runtime launch to the device work it produced (0: none).
	Corr uint64
	// Bytes, when set on a Memcpy, is the size the copy moved (Kineto's
	// args.bytes).
	Bytes int64
	// StepNum, when set on a host event, is its step_num stat in XPlane
	// (jax.profiler.StepTraceAnnotation's step number).
	StepNum int64
	// Flow, when its ID is set, is one end of an XProf flow, written in
	// XPlane as producer (_p, _pt) or consumer (_c, _ct) stats; Chrome
	// JSON has no such links.
	Flow Flow
}

// Flow is one end of a flow: XProf links the event that hands work over
// (a producer) to the one that takes it up (a consumer) by a kind and an
// id; on TPU a program's run consumes kind FlowTPULaunch.
type Flow struct {
	ID       uint64
	Kind     int64
	Consumer bool
}

// Kinds of flows as XProf numbers them (its ContextType).
const (
	FlowTFRTExecute = 5  // the loop's Execute to the execute thread
	FlowTPUExecute  = 7  // the execute thread to the program queue
	FlowTPULaunch   = 12 // the program queue to the device
)

// Spec is a whole synthetic trace.
type Spec struct {
	// PID is the host process id (default 1000 when 0).
	PID     int64
	Threads []Thread
	Events  []Event
	// Rank and WorldSize place the trace in a distributed job, as Kineto's
	// distributedInfo does; WorldSize 0 means the run is not distributed
	// and Rank is ignored.
	Rank, WorldSize int
	// Meta holds top-level members written beside traceEvents in Chrome
	// JSON (as the profiler's add_metadata_json writes them), each value
	// a JSON string; XPlane ignores it.
	Meta map[string]string
	// TPU lays the devices out as TPUs in XPlane: "/device:TPU:<n>"
	// planes whose work is on an "XLA Ops" line (streams are ignored).
	TPU bool
}

// DistributedMeta returns the trace.Trace Meta entries a reader makes from
// the spec's rank and world size ("rank", "world_size"), nil when the spec
// is not distributed.
func (s *Spec) DistributedMeta() map[string]string {
	if s.WorldSize <= 0 {
		return nil
	}
	return map[string]string{"rank": strconv.Itoa(s.Rank), "world_size": strconv.Itoa(s.WorldSize)}
}
