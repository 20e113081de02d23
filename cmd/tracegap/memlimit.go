package main

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/tracegap/tracegap/trace"
)

// The garbage collector lets the heap grow to twice what was live after
// the last collection. On a big trace that is the events (read in one
// allocation) plus everything the analysis allocates on top, so the peak
// runs a third above what is ever live at once. A soft memory limit makes
// the collector run earlier instead, which is how peak memory stays within
// the budget of a quarter of the input: the events, not the bytes, are
// kept.

// heapBudget is the soft memory limit for analysing t: nine tenths of a
// quarter of its bytes (the rest of the process lives outside the heap),
// but never under one and a half times its events plus 64 MiB (the
// events and what the analysis keeps of them), below which the collector
// would run without end on a trace of small events (XPlane) for no gain.
func heapBudget(bytes int64, events int) int64 {
	const eventSize = int64(unsafe.Sizeof(trace.Event{}))
	return max(bytes/4*9/10, 3*eventSize*int64(events)/2+64<<20)
}

// memLimits sums the heap budgets of the traces being analysed at once
// and keeps the runtime's soft memory limit at that sum. It does nothing
// when GOMEMLIMIT is set: the user's limit wins.
type memLimits struct {
	mu    sync.Mutex
	total int64
	set   func(int64) int64 // debug.SetMemoryLimit, replaced in tests
}

var memLimit = &memLimits{set: debug.SetMemoryLimit}

// hold raises the limit by the budget of t until the returned func is
// called.
func (m *memLimits) hold(t *trace.Trace) (release func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	b := heapBudget(t.Bytes, len(t.Events))
	m.add(b)
	return func() { m.add(-b) }
}

func (m *memLimits) add(b int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total += b
	if m.total <= 0 {
		m.set(math.MaxInt64) // nothing held: no limit, the runtime default
		return
	}
	m.set(m.total)
}
