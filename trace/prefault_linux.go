package trace

import (
	"bytes"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which the syscall
// package does not name.
const madvPopulateWrite = 23

// prefault has the kernel back the memory of evs, fresh from the system
// and about to be written whole, in one call, instead of one page fault
// per 4 KB page as the reader first writes each: on a VM a fault costs a
// few microseconds, and a large XPlane read takes 130-160 thousand of them
// (docs/performance.md). An older kernel refuses the advice, and the pages
// are faulted in as before.
//
// Where transparent huge pages are given on advice only (see hugeOnAdvice),
// the memory is backed with 2 MB pages: a 512th of the kernel's work per
// page, the zeroing aside, and of the TLB misses of the passes over the
// events; a dense XPlane read on one core takes 7% less time. The advice
// is withdrawn once the pages are in, so that the range, once the garbage
// collector frees it and the heap reuses it for other objects, is not
// gathered back into huge pages by the kernel, which would grow the
// memory of a long-running process (the service) with pages barely used.
//
// A huge page the kernel has not got free it makes by moving memory
// (compaction), which on a loaded machine has made a read seconds slower
// (docs/performance.md): a populate slower than hugeSlowNsPerKB stops the
// advice for the rest of the process, so the cost is at most one slow call.
func prefault(evs []Event) {
	if len(evs) == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(evs))), len(evs)*int(unsafe.Sizeof(evs[0])))
	// The advice takes whole pages: those inside b.
	page := syscall.Getpagesize()
	lo := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & uintptr(page-1))
	hi := lo + (len(b)-lo)&^(page-1)
	if lo >= hi {
		return
	}
	if !hugeOnAdvice() || hugeSlow.Load() {
		_ = syscall.Madvise(b[lo:hi], madvPopulateWrite)
		return
	}
	_ = syscall.Madvise(b[lo:hi], syscall.MADV_HUGEPAGE)
	start := time.Now()
	_ = syscall.Madvise(b[lo:hi], madvPopulateWrite)
	if tooSlow(time.Since(start), hi-lo) {
		hugeSlow.Store(true)
	}
	_ = syscall.Madvise(b[lo:hi], syscall.MADV_NOHUGEPAGE)
}

// hugeSlow is set once a populate in huge pages was too slow (tooSlow).
var hugeSlow atomic.Bool

// hugeSlowNsPerKB is the time a populate of huge pages may take per KB:
// a microsecond, four times what zeroing the memory takes on a slow VM
// (4 MB in about a millisecond), far below a compaction's.
const hugeSlowNsPerKB = 1000

// tooSlow reports whether a populate of n bytes that took d was slow
// enough to stop asking for huge pages.
func tooSlow(d time.Duration, n int) bool {
	return d > time.Duration(n/1024)*hugeSlowNsPerKB
}

// hugeOnAdvice reports whether the kernel gives transparent huge pages to
// memory advised to take them, and only to it: with them always on, the
// memory gets them unasked; with them off, asking does nothing.
var hugeOnAdvice = sync.OnceValue(func() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(mode, []byte("[madvise]"))
})
