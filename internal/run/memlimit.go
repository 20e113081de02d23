package run

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

// heapBudget is the soft memory limit for analysing a trace of the given
// size and events: nine tenths of a quarter of its bytes (the rest of the
// process lives outside the heap). It is 0, no limit, for a trace whose
// events alone come near that (a trace of small events, as XPlane's are):
// a limit under what is live makes the collector run without end, which
// made such a trace twice as slow for no gain.
func heapBudget(bytes int64, events int) int64 {
	const eventSize = int64(unsafe.Sizeof(trace.Event{}))
	budget := bytes / 4 * 9 / 10
	if budget < 3*eventSize*int64(events)/2+64<<20 { // the events and what the analysis keeps
		return 0
	}
	return budget
}

// memLimits keeps the runtime's soft memory limit at the sum of the heap
// budgets of the traces being analysed at once, or lifts it while one of
// them has none. It does nothing when GOMEMLIMIT is set: the user's limit
// wins.
//
// While a trace without a budget is held, the collector runs when the heap
// has grown by leanGCPercent instead of doubled: its events are most of
// the heap, and they hold no pointers, so a collection costs little,
// while the analysis's garbage on top of them would otherwise take the
// peak a third over what is ever live (XPlane's budget is per event:
// "Budgets at a glance" in docs/performance.md). Not when GOGC is set.
type memLimits struct {
	mu        sync.Mutex
	fixed     bool // FixMemoryLimit was called: hold does nothing
	total     int64
	unlimited int               // traces held that have no budget
	set       func(int64) int64 // debug.SetMemoryLimit, replaced in tests
	percent   func(int) int     // debug.SetGCPercent, replaced in tests
	// before is the GC percent to go back to once no trace without a
	// budget is held; 0 while none is.
	before int
}

// leanGCPercent is the GC percent while a trace without a heap budget is
// analysed.
const leanGCPercent = 10

var memLimit = &memLimits{set: debug.SetMemoryLimit, percent: debug.SetGCPercent}

// hold adds the budget of t until the returned func is called.
func (m *memLimits) hold(t *trace.Trace) (release func()) {
	m.mu.Lock()
	fixed := m.fixed
	m.mu.Unlock()
	if fixed || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	b := heapBudget(t.Bytes, len(t.Events))
	m.add(b, 1)
	return func() { m.add(-b, -1) }
}

func (m *memLimits) add(b int64, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b == 0 {
		m.unlimited += n
	}
	m.total += b
	m.lean(m.unlimited > 0 && os.Getenv("GOGC") == "")
	if m.total <= 0 || m.unlimited > 0 {
		m.set(math.MaxInt64) // the runtime's default: no limit
		return
	}
	m.set(m.total)
}

// lean sets the collector's percent to leanGCPercent, or back to what it
// was; m.mu is held.
func (m *memLimits) lean(on bool) {
	switch {
	case on && m.before == 0:
		m.before = m.percent(leanGCPercent)
	case !on && m.before != 0:
		m.percent(m.before)
		m.before = 0
	}
}

// FixMemoryLimit sets the runtime's soft memory limit to n bytes for the
// rest of the process, unless GOMEMLIMIT is set, instead of following the
// traces being analysed. A service that admits its analyses within a
// memory budget fixes the limit at that budget (plus its own overhead):
// the collector then works harder rather than let garbage from analyses
// running at once take the process past it, and the limit no longer
// drops while one analysis ends and others run.
func FixMemoryLimit(n int64) {
	m := memLimit
	m.mu.Lock()
	defer m.mu.Unlock()
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	m.fixed = true
	m.set(n)
}

// ServiceMemoryLimit is the soft memory limit a service with a memory
// budget of budget bytes sets above its baseline: half the budget. The
// estimates the budget admits by are conservative (about 1.5 times what an
// analysis holds live), and a soft limit is overshot while the collector
// catches up with a burst of allocation; the other half is room for both,
// so that the process stays within its budget. Under full admission the
// collector works harder rather than the process growing.
func ServiceMemoryLimit(budget int64) int64 { return budget / 2 }
