package analyze

import (
	"cmp"
	"math"
	"regexp"
	"slices"

	"github.com/tracegap/tracegap/trace"
)

// Framework is the ML framework that recorded a trace, as its event names
// show it; the findings give its fixes in its own terms.
type Framework string

// The frameworks told apart. VLLM runs on PyTorch: its traces are
// PyTorch's, with vLLM's engine on top.
const (
	UnknownFramework Framework = ""
	PyTorch          Framework = "PyTorch"
	VLLM             Framework = "vLLM"
	JAX              Framework = "JAX"
	TensorFlow       Framework = "TensorFlow"
)

// detectFramework returns the framework whose names the trace holds, the
// most specific one when several match (see frameworkPatterns). Once a
// name shows a framework, only the more specific ones are looked for.
func detectFramework(t *trace.Trace) Framework {
	res := frameworkRegexps()
	best := len(res)
	for _, s := range t.Strings {
		for i, re := range res[:best] {
			if re.match(s) {
				best = i
				break
			}
		}
		if best == 0 {
			break
		}
	}
	if best == len(res) {
		return UnknownFramework
	}
	return frameworkPatterns[best].f
}

// JAX's host model. A JAX program's loop runs on one thread (`python` on
// GPU, `main/N` on TPU) and dispatches compiled functions (PjitFunction,
// PjRt Execute) that return once their work is queued; execute threads
// (`py_xla_execute/N`, PjRt and TFRT pools) prepare the work and launch it
// from threads of their own (`Host Threads/N` on GPU; on TPU a queue
// thread enqueues the program, linked to its run by flows: see
// linkPrograms). The launching thread is idle by construction, and a
// device that starves waits for the loop thread: what that thread does
// during a gap is the gap's cause. When the loop thread is inside a
// dispatch while an execute thread does runtime work (allocating the first
// call's buffers, loading a program, defragmenting memory), the dispatch
// waits for that work, and the cause is runtime.

// findLoop returns the thread a JAX program's loop runs on: the host
// thread with the most dispatches, ties to the one dispatching first; -1
// when the trace is not JAX's or has no dispatch.
func (a *analyzer) findLoop(scan *hostScan) int32 {
	if a.res.Framework != JAX {
		return -1
	}
	return scan.loop.best
}

// runtimeBehind returns the runtime work another thread is in at x while
// the loop thread th waits inside a dispatch (stack), or nil.
func (a *analyzer) runtimeBehind(th *thread, stack *hostStack, x int64) *hostStretch {
	if th.track != a.loop || !stack.top().dispatch {
		return nil
	}
	in, _, _ := a.runtimeAt.around(a.hostRuntime(), x)
	return in
}

// nextRuntimeChange returns when the runtime work of the host next starts
// or ends after x, for a loop thread inside a dispatch (else MaxInt64).
func (a *analyzer) nextRuntimeChange(th *thread, stack *hostStack, x int64) int64 {
	if th.track != a.loop || !stack.top().dispatch {
		return math.MaxInt64
	}
	_, _, next := a.runtimeAt.around(a.hostRuntime(), x)
	return next
}

// dispatchBefore returns the start of the last dispatch on the loop thread
// that returned before t: the call whose queued work starts at t, as the
// runtime runs a queue in order. ok is false when none returned before t.
func (a *analyzer) dispatchBefore(t int64) (start int64, ok bool) {
	if a.dispatches == nil {
		// Not a.thread: the device scan asks this before every launch
		// is linked, and finishing the thread then would miss copies
		// that block.
		a.dispatches = slices.Clone(a.unfinished(a.loop).dispatches)
		if a.dispatches == nil {
			a.dispatches = []Interval{}
		}
		slices.SortStableFunc(a.dispatches, func(x, y Interval) int { return cmp.Compare(x.End, y.End) })
	}
	i := a.dispatchAfter(t)
	if i == 0 {
		return 0, false
	}
	return a.dispatches[i-1].Start, true
}

// dispatchOf returns the start of the loop thread's dispatch that queued
// device work starting at start, launched by host event h (-1 for none).
// A launch comes while its dispatch is in the runtime (JAX on MI300
// launches inside the Execute call) or as it returns, before any later
// dispatch starts: the dispatch is the last to start before the launch.
// Work the trace links to no launch and no program run (see jaxWork)
// belongs to the last dispatch that returned before it started, which is
// right only when the runtime's queue holds one call: with several queued,
// the work of one starts after later ones returned.
func (a *analyzer) dispatchOf(h int32, start int64) (int64, bool) {
	if h < 0 {
		return a.dispatchBefore(start)
	}
	ds := a.unfinished(a.loop).dispatches // in start order
	t := a.t.Events[h].Start
	i, _ := slices.BinarySearchFunc(ds, t, func(iv Interval, t int64) int {
		if iv.Start < t {
			return -1
		}
		return 1
	})
	if i == 0 {
		return 0, false
	}
	return ds[i-1].Start, true
}

// dispatchAfter returns the index of the first dispatch ending at or after
// t. Each device's work asks in start order, and between two pieces of
// work a few dispatches may end: the search steps out from the last answer
// in growing strides (as gallopStart does), from the first dispatch only
// when t is before the last answer.
func (a *analyzer) dispatchAfter(t int64) int {
	ds, lo := a.dispatches, a.dispatchHint
	if lo > len(ds) || lo > 0 && ds[lo-1].End >= t {
		lo = 0
	}
	// Every dispatch before lo ends before t.
	step := 1
	for lo+step <= len(ds) && ds[lo+step-1].End < t {
		lo += step
		step *= 2
	}
	hi := min(lo+step-1, len(ds))
	i, _ := slices.BinarySearchFunc(ds[lo:hi], t, func(iv Interval, t int64) int {
		if iv.End < t {
			return -1
		}
		return 1
	})
	a.dispatchHint = lo + i
	return lo + i
}

// pythonFrame matches a frame of JAX's Python tracer as the readers give
// it (without XProf's "$"): "api.py:3154 block_until_ready",
// "<unknown> __exit__".
var pythonFrame = regexp.MustCompile(`^(\S+\.py:\d+|<[^>]*>) \S`)

// loopUntraced reports whether the JAX loop thread shows no Python frame:
// the profile was taken without the Python tracer, and the loop's Python
// (getting batches, logging) shows as nothing.
func (a *analyzer) loopUntraced() bool {
	if a.loop < 0 {
		return false
	}
	frame := newNameMatcher(pythonFrame, a.t)
	evs := a.t.TrackEvents(int(a.loop))
	for j := range evs {
		if frame.matches(evs[j].Name) {
			return false
		}
	}
	return true
}

// onlyStepMarkers reports whether th is a JAX loop thread without Python
// frames inside nothing but step markers (StepTraceAnnotation): it runs
// Python the profile does not show, which is untraced, not host work.
func (a *analyzer) onlyStepMarkers(th *thread, stack *hostStack) bool {
	return th.track == a.loop && a.res.LoopUntraced && stack.top().markers
}

// beforeDispatch returns, for each step of the window, the stretch of its
// host span before its first dispatch on the loop thread: where a training
// loop gets its batch.
func (a *analyzer) beforeDispatch() []Interval {
	evs := a.t.TrackEvents(int(a.loop))
	out := make([]Interval, 0, len(a.hostSpans))
	for _, hs := range a.hostSpans {
		i, _ := slices.BinarySearchFunc(evs, hs.Start, func(e trace.Event, t int64) int { return cmp.Compare(e.Start, t) })
		end := hs.End
		for ; i < len(evs) && evs[i].Start < hs.End; i++ {
			if a.cls.of(evs[i].Name) == classDispatch {
				end = evs[i].Start
				break
			}
		}
		out = append(out, Interval{hs.Start, end})
	}
	return out
}

// untracedBeforeDispatch returns the untraced idle, averaged over devices,
// that falls before a step's first dispatch on an untraced JAX loop
// thread: the likely input-pipeline time of a profile taken without the
// Python tracer. The figures keep it untraced: nothing in the trace shows
// it is input.
func (a *analyzer) untracedBeforeDispatch() int64 {
	if !a.res.LoopUntraced || len(a.hostSpans) == 0 {
		return 0
	}
	pre := a.beforeDispatch()
	var sum int64
	for gi := range a.res.Gaps {
		for sg := range a.res.Segments(&a.res.Gaps[gi]) {
			if sg.Cause != Untraced {
				continue
			}
			iv := Interval{sg.Start, sg.Start + sg.Dur}
			i, _ := slices.BinarySearchFunc(pre, iv.Start, func(p Interval, t int64) int { return cmp.Compare(p.End, t+1) })
			for ; i < len(pre) && pre[i].Start < iv.End; i++ {
				sum += overlap(iv, pre[i])
			}
		}
	}
	return sum / int64(len(a.devs))
}
