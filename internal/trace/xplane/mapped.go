package xplane

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
)

// On Linux a file is read through a read-only mapping (elsewhere with
// ReadAt): the walks slice their windows out of the page cache instead of
// copying every byte of the input twice, once a walk. On the dense bench
// input (190 MB) `tracegap analyze` on one core took 11-13% less time
// with the mapping in three of four rounds of alternated runs (1% in the
// fourth; 2026-11-27); on the TPU capture the difference was noise. The mapped pages count in the peak
// RSS the memory budget measures, so each walk gives back the pages it has
// left dropLag behind, a dropStep at a time: a walk holds a few MB of the
// file, never all of it.

// dropStep and dropLag are how far a walk moves before the pages behind it
// are given back, and how far behind it pages are kept. Variables for
// tests.
var (
	dropStep = 8 << 20
	dropLag  = 8 << 20
)

// openMapping maps src when it is a file that can be mapped, else returns
// nil: the reader then reads windows with ReadAt.
func openMapping(src any, size int) []byte {
	f, ok := src.(*os.File)
	if !ok || size <= 0 {
		return nil
	}
	data, err := mapFile(f, size)
	if err != nil {
		return nil
	}
	return data
}

// dropBehind gives back the mapped pages that a walk now at lo has left
// more than dropLag behind. w.kept is where the walk's resident pages may
// begin; a walk that starts again from an earlier offset (the second walk)
// begins there. A wire without a mapping gives back nothing.
func (w *wire) dropBehind(lo int) {
	switch {
	case w.mapped == nil:
	case lo < w.kept:
		w.kept = lo
	case lo-w.kept >= dropStep+dropLag:
		unmapPages(w.mapped, w.kept, lo-dropLag)
		w.kept = lo - dropLag
	}
}

// errFileChanged says that a mapped file got shorter while it was read:
// reading past its new end faults, and the fault is turned into this, as
// is any error the zeros of its last page make.
var errFileChanged = errors.New("the file changed (got shorter) while it was read")

// fileChanged, deferred by a goroutine that reads src, a mapped file of
// size bytes when the read began, says that the file changed when it is
// now shorter: it turns the fault of reading past the new end into *err,
// and wraps any error the zeros of the cut page made. The goroutine must
// have debug.SetPanicOnFault set. Any other panic goes on, a fault with the
// file whole included: that is a bug, not the input.
func fileChanged(src any, size int, err *error) {
	r := recover()
	if r != nil {
		if _, ok := r.(interface{ Addr() uintptr }); !ok || !shrunk(src, size) {
			panic(r)
		}
		*err = fmt.Errorf("reading XSpace: %w", errFileChanged)
		return
	}
	if *err != nil && shrunk(src, size) {
		*err = fmt.Errorf("reading XSpace: %w (%v)", errFileChanged, *err)
	}
}

// shrunk reports whether src is a file now shorter than size bytes.
func shrunk(src any, size int) bool {
	f, ok := src.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Size() < int64(size)
}

// guardFaults makes the calling goroutine's faults panics (see fileChanged)
// and returns the function that restores the setting.
func guardFaults() func() {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}
