package xplane

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// FuzzRead feeds arbitrary bytes to the reader. Whatever the input, Read
// must return a trace that keeps the model's invariants or a *FormatError
// inside the input; it must never panic or hang, and a read through a
// ReaderAt window and one through a file's mapping must give the same as
// a read from memory. The seed corpus in
// testdata/fuzz/FuzzRead holds small XSpaces from tracetest.WriteXPlane,
// the heads of the real traces and malformed cases.
func FuzzRead(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		Sniff(b[:min(len(b), 512)])
		var tr *trace.Trace
		var err error
		alloc := allocated(func() { tr, err = Read(bytes.NewReader(b), trace.Options{MaxEvents: 1 << 16}) })
		checkResources(t, b, tr, alloc)
		checkMapped(t, b, tr, err)
		checkWindow(t, b, tr, err)
		if err != nil {
			var fe *FormatError
			switch {
			case errors.As(err, &fe):
				if fe.Offset < 0 || fe.Offset > len(b) {
					t.Fatalf("error offset %d outside the %d-byte input: %v", fe.Offset, len(b), err)
				}
			case !errors.Is(err, trace.ErrLimit):
				t.Fatalf("error of an unexpected kind: %v", err)
			}
			return
		}
		checkInvariants(t, tr)
	})
}

// checkResources checks the bound that admission relies on (Need): an
// input of n bytes holds at most n/minEvent events, no more than Count
// counts when it can, and reading it
// allocates no more than its bound beyond the reader's fixed buffers.
func checkResources(t *testing.T, b []byte, tr *trace.Trace, alloc uint64) {
	t.Helper()
	if tr != nil && len(tr.Events) > len(b)/minEvent {
		t.Fatalf("%d events from %d bytes, more than one per %d bytes", len(tr.Events), len(b), minEvent)
	}
	if n, ok := Count(bytes.NewReader(b)); ok && tr != nil && int64(len(tr.Events)) > n {
		t.Fatalf("%d events read, %d counted", len(tr.Events), n)
	}
	if bound := uint64(8<<20 + 2*Need(int64(len(b)), -1)); alloc > bound {
		t.Fatalf("reading %d bytes allocated %d, over %d", len(b), alloc, bound)
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// checkWindow reads b through a ReaderAt window and wants what the read
// from memory gave: tr or err.
func checkWindow(t *testing.T, b []byte, tr *trace.Trace, err error) {
	t.Helper()
	got, gerr := decode(wire{src: bytes.NewReader(b), size: len(b)}, trace.Options{MaxEvents: 1 << 16})
	switch {
	case (err == nil) != (gerr == nil) || err != nil && err.Error() != gerr.Error():
		t.Fatalf("window read: error %v, from memory %v", gerr, err)
	case !reflect.DeepEqual(tr, got):
		t.Fatal("window read: the trace differs from a read from memory")
	}
}

// checkMapped reads b from a file through its mapping, giving pages back
// every page, and wants what the read from memory gave: tr or err.
func checkMapped(t *testing.T, b []byte, tr *trace.Trace, err error) {
	t.Helper()
	if !mappable() || len(b) == 0 {
		return
	}
	setDrops(t)
	mtr, merr := decode(wire{src: fileOf(t, b), size: len(b)}, trace.Options{MaxEvents: 1 << 16})
	switch {
	case (err == nil) != (merr == nil) || err != nil && err.Error() != merr.Error():
		t.Fatalf("mapped read: error %v, from memory %v", merr, err)
	case !reflect.DeepEqual(tr, mtr):
		t.Fatal("mapped read: the trace differs from a read from memory")
	}
}

// checkInvariants checks what every consumer of a trace relies on.
func checkInvariants(t *testing.T, tr *trace.Trace) {
	t.Helper()
	covered := 0
	for i, tk := range tr.Tracks {
		if tk.Lo < 0 || tk.Hi < tk.Lo || tk.Hi > len(tr.Events) {
			t.Fatalf("track %d spans events [%d, %d) of %d", i, tk.Lo, tk.Hi, len(tr.Events))
		}
		covered += tk.Hi - tk.Lo
		evs := tr.TrackEvents(i)
		for j, e := range evs {
			if tr.TrackOf(tk.Lo+j) != i || e.Start < 0 || e.Dur() < 0 || e.End() < e.Start || int(e.Name) >= len(tr.Strings) {
				t.Fatalf("track %d event %d: %+v", i, j, e)
			}
			if j > 0 && evs[j-1].Start > e.Start {
				t.Fatalf("track %d: events %d and %d out of order", i, j-1, j)
			}
			if tk.Kind == trace.TrackHost && e.Kind != trace.KindHost || tk.Kind != trace.TrackDevice && e.Kind == trace.KindWork {
				t.Fatalf("track %d (%v): event of kind %v", i, tk.Kind, e.Kind)
			}
		}
	}
	if covered != len(tr.Events) {
		t.Fatalf("tracks cover %d of %d events", covered, len(tr.Events))
	}
}
