package nsight_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/nsight"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// FuzzRead feeds arbitrary bytes to the reader. Whatever the input, Read
// must return a trace that keeps the model's invariants or one line of
// error; it must never panic or hang, and what it allocates on the Go heap
// stays within a bound of the input's size. The seeds are small generated
// exports (pages of 512 bytes), whole and damaged.
func FuzzRead(f *testing.F) {
	specs := []*tracetest.Spec{
		smallSpec(),
		{Threads: []tracetest.Thread{{TID: 1, Name: "python"}}, Events: []tracetest.Event{
			{Role: tracetest.Annotation, Name: "ProfilerStep#1", Thread: 1, Start: 10, Dur: 100},
			{Role: tracetest.Runtime, Name: "cudaMemcpyAsync", Thread: 1, Start: 20, Dur: 10, Corr: 3},
			{Role: tracetest.Memcpy, Name: "Memcpy DtoH (Device -> Pageable)", Stream: 7, Start: 25, Dur: 30, Corr: 3, Bytes: 64},
			{Role: tracetest.Memset, Name: "Memset (Device)", Stream: 7, Start: 60, Dur: 5},
		}},
	}
	for _, s := range specs {
		b, err := tracetest.NsightBytes(s, tracetest.NsightOptions{PageSize: 512})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(corruptPages(b))
	}
	f.Add([]byte("SQLite format 3\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		nsight.Sniff(b[:min(len(b), 512)])
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tr, err := nsight.Read(bytes.NewReader(b), trace.Options{MaxEvents: 1 << 16})
		runtime.ReadMemStats(&after)
		if alloc, most := after.TotalAlloc-before.TotalAlloc, uint64(16<<20+256*len(b)); alloc > most {
			t.Errorf("allocated %d bytes reading %d, want at most %d", alloc, len(b), most)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans several lines: %q", err)
			}
			if tr != nil {
				t.Fatalf("a trace with the error %v", err)
			}
			_ = errors.Is(err, trace.ErrLimit)
			return
		}
		// The bound admission relies on (Need): an event takes
		// MinRowBytes of the file at least.
		if len(tr.Events) > len(b)/nsight.MinRowBytes {
			t.Fatalf("%d events from %d bytes, more than one per %d bytes", len(tr.Events), len(b), nsight.MinRowBytes)
		}
		checkInvariants(t, tr)
	})
}

// TestMutatedExports is FuzzRead's check on a fixed sample of damage:
// a small export with one to eight bytes changed at random places (a
// seeded generator), read as FuzzRead reads. Fuzzing proper runs few
// inputs a second, the SQLite engine being instrumented with the reader;
// this covers the schema's and the pages' damage in every run.
func TestMutatedExports(t *testing.T) {
	b, err := tracetest.NsightBytes(smallSpec(), tracetest.NsightOptions{PageSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	read, failed := 0, 0
	for range 400 {
		m := bytes.Clone(b)
		for range 1 + rng.IntN(8) {
			m[rng.IntN(len(m))] = byte(rng.IntN(256))
		}
		tr, err := nsight.Read(bytes.NewReader(m), trace.Options{MaxEvents: 1 << 16})
		if err != nil {
			failed++
			if strings.Contains(err.Error(), "\n") || tr != nil {
				t.Fatalf("error %q (trace %v)", err, tr != nil)
			}
			continue
		}
		read++
		if len(tr.Events) > len(m)/nsight.MinRowBytes {
			t.Fatalf("%d events from %d bytes, more than one per %d bytes", len(tr.Events), len(m), nsight.MinRowBytes)
		}
		checkInvariants(t, tr)
	}
	if read == 0 || failed == 0 {
		t.Errorf("%d exports read, %d refused: want some of each", read, failed)
	}
}

// TestConcurrentReads reads one export from four goroutines at once, as
// `tracegap analyze -j 4` and the service do: each read has a connection
// of its own, and all give the same trace.
func TestConcurrentReads(t *testing.T) {
	b := export(t, "")
	path := filepath.Join(t.TempDir(), "run.sqlite")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := trace.Open(path, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			got, err := trace.Open(path, trace.Options{})
			if err == nil && !reflect.DeepEqual(got, want) {
				err = fmt.Errorf("a concurrent read differs from the first")
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
