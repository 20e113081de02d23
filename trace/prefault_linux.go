package trace

import (
	"syscall"
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
func prefault(evs []Event) {
	if len(evs) == 0 {
		return
	}
	page := uintptr(syscall.Getpagesize())
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(evs)))
	hi := lo + uintptr(len(evs))*unsafe.Sizeof(evs[0])
	lo = (lo + page - 1) &^ (page - 1)
	hi &^= page - 1
	if lo < hi {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvPopulateWrite)
	}
}
