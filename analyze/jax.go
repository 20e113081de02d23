package analyze

import (
	"cmp"
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
// most specific one when several match (see frameworkPatterns).
func detectFramework(t *trace.Trace) Framework {
	res := frameworkRegexps()
	found := make([]bool, len(res))
	for _, s := range t.Strings {
		for i, re := range res {
			if !found[i] && re.MatchString(s) {
				found[i] = true
			}
		}
	}
	for i, ok := range found {
		if ok {
			return frameworkPatterns[i].f
		}
	}
	return UnknownFramework
}

// JAX's host model. A JAX program's loop runs on one thread (`python` on
// GPU, `main/N` on TPU) and dispatches compiled functions (PjitFunction,
// PjRt Execute) that return once their work is queued; execute threads
// (`py_xla_execute/N`, PjRt and TFRT pools) prepare the work and launch it
// from threads of their own (`Host Threads/N` on GPU; on TPU no launch is
// recorded at all). The launching thread is idle by construction, and a
// device that starves waits for the loop thread: what that thread does
// during a gap is the gap's cause. When the loop thread is inside a
// dispatch while an execute thread does runtime work (allocating the first
// call's buffers, loading a program, defragmenting memory), the dispatch
// waits for that work, and the cause is runtime.

// findLoop returns the thread a JAX program's loop runs on: the host
// thread with the most dispatches, ties to the one dispatching first; -1
// when the trace is not JAX's or has no dispatch.
func (a *analyzer) findLoop() int32 {
	if a.res.Framework != JAX {
		return -1
	}
	best, n := int32(-1), 0
	var first int64
	for i := range a.t.Tracks {
		tr := &a.t.Tracks[i]
		if tr.Kind != trace.TrackHost {
			continue
		}
		c, start := 0, int64(0)
		for j := tr.Lo; j < tr.Hi; j++ {
			if a.cls.of(a.t.Events[j].Name) == classDispatch {
				if c == 0 {
					start = a.t.Events[j].Start
				}
				c++
			}
		}
		if c > n || c == n && c > 0 && start < first {
			best, n, first = int32(i), c, start
		}
	}
	return best
}

// inDispatch reports whether the stack holds a dispatch of a compiled
// function.
func (a *analyzer) inDispatch(th *thread, stack []int32) bool {
	for _, s := range stack {
		if a.cls.of(th.evs[s].Name) == classDispatch {
			return true
		}
	}
	return false
}

// runtimeBehind returns the runtime work another thread is in at x while
// the loop thread th waits inside a dispatch (stack), or nil.
func (a *analyzer) runtimeBehind(th *thread, stack []int32, x int64) *hostStretch {
	if th.track != a.loop || !a.inDispatch(th, stack) {
		return nil
	}
	in, _, _ := syncAround(a.hostRuntime(), x)
	return in
}

// nextRuntimeChange returns when the runtime work of the host next starts
// or ends after x, for a loop thread inside a dispatch (else MaxInt64
// from an empty list).
func (a *analyzer) nextRuntimeChange(th *thread, stack []int32, x int64) int64 {
	var ss []hostStretch
	if th.track == a.loop && a.inDispatch(th, stack) {
		ss = a.hostRuntime()
	}
	_, _, next := syncAround(ss, x)
	return next
}

// dispatchBefore returns the start of the last dispatch on the loop thread
// that returned before t: the call whose queued work starts at t, as the
// runtime runs a queue in order. ok is false when none returned before t.
func (a *analyzer) dispatchBefore(t int64) (start int64, ok bool) {
	if a.dispatches == nil {
		a.dispatches = []Interval{}
		th := a.thread(a.loop)
		for i := range th.evs {
			if e := &th.evs[i]; a.cls.of(e.Name) == classDispatch {
				a.dispatches = append(a.dispatches, Interval{e.Start, e.End()})
			}
		}
		slices.SortStableFunc(a.dispatches, func(x, y Interval) int { return cmp.Compare(x.End, y.End) })
	}
	i, _ := slices.BinarySearchFunc(a.dispatches, t, func(iv Interval, t int64) int {
		if iv.End < t {
			return -1
		}
		return 1
	})
	if i == 0 {
		return 0, false
	}
	return a.dispatches[i-1].Start, true
}
