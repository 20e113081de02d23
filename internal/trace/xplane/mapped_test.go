package xplane

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// mappable reports whether this system reads files through a mapping.
func mappable() bool { return runtime.GOOS == "linux" }

// fileOf writes b to a file of the test's and opens it.
func fileOf(t *testing.T, b []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.xplane.pb")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// setDrops makes mapped walks give back their pages every page, until the
// test ends, so that pages are given back and read again many times.
func setDrops(t *testing.T) {
	t.Helper()
	step, lag := dropStep, dropLag
	t.Cleanup(func() { dropStep, dropLag = step, lag })
	dropStep, dropLag = os.Getpagesize(), os.Getpagesize()
}

// TestMappedFile reads every real XPlane trace from a file, with pages
// given back behind every walk, and wants
// the trace, or the error, a read from memory makes (one of them is cut
// short by its profiler).
func TestMappedFile(t *testing.T) {
	if !mappable() {
		t.Skip("no mapped reads on " + runtime.GOOS)
	}
	files, err := filepath.Glob(filepath.Join(realtraces.Dir(t), "*.xplane.pb"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no XPlane traces: %v", err)
	}
	setDrops(t)
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f := fileOf(t, b)
		if m := openMapping(f, len(b)); m == nil {
			t.Fatalf("%s: not mapped", path)
		} else {
			unmapFile(m)
		}
		want, werr := Decode(b, trace.Options{})
		got, err := decode(wire{src: f, size: len(b)}, trace.Options{})
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Errorf("%s: error %v, from memory %v", filepath.Base(path), err, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the mapped read differs from the read from memory", filepath.Base(path))
		}
	}
}

// TestMappedFileShrinks cuts a file short after its size was taken, as
// another program writing it might: before the first walk, or once the
// second has read a plane's metadata and is about to decode its lines.
// Reading the missing pages of the mapping
// faults, and the read must say so, not crash.
func TestMappedFileShrinks(t *testing.T) {
	if !mappable() {
		t.Skip("no mapped reads on " + runtime.GOOS)
	}
	b, err := os.ReadFile(realtraces.Path(t, "xprof-tpu-inference.xplane.pb"))
	if err != nil {
		t.Fatal(err)
	}
	hook := beforeLines
	t.Cleanup(func() { beforeLines = hook })
	for _, atLines := range []bool{false, true} {
		for cutAt := 1; cutAt < 8; cutAt++ {
			f := fileOf(t, b)
			size := len(b) * cutAt / 8
			cut := func() {
				if err := os.Truncate(f.Name(), int64(size)); err != nil {
					t.Fatal(err)
				}
			}
			beforeLines = hook
			if !atLines {
				cut()
			} else {
				// Cut inside the lines about to be decoded, or in
				// those of a plane to come.
				beforeLines = func(pl *planeScan) {
					if n := len(pl.lines); n > 0 && pl.lines[n-1].events.hi > size {
						cut()
					}
				}
			}
			_, err := decode(wire{src: f, size: len(b)}, trace.Options{})
			if !errors.Is(err, errFileChanged) {
				t.Errorf("cut at %d/8 (before lines: %v): error %v, want %v", cutAt, atLines, err, errFileChanged)
			}
		}
	}
}
