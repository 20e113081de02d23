package xplane

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f read-only.
func mapFile(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE)
}

// unmapFile ends a mapping made by mapFile.
func unmapFile(data []byte) { _ = syscall.Munmap(data) }

// unmapPages gives back the whole pages of data[lo:hi]: they leave the
// process's memory, and reading them again reads them from the page cache.
func unmapPages(data []byte, lo, hi int) {
	page := os.Getpagesize()
	lo = (lo + page - 1) &^ (page - 1)
	hi &^= page - 1
	if lo < hi {
		_ = syscall.Madvise(data[lo:hi], syscall.MADV_DONTNEED)
	}
}
