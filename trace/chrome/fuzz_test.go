package chrome

import (
	"bytes"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// FuzzRead feeds arbitrary bytes to the reader: it must never panic or
// hang, and whatever it returns must satisfy the model's invariants. The
// seeds are in testdata/fuzz/FuzzRead: small hand-written traces and the
// first events of two real ones.
func FuzzRead(f *testing.F) {
	f.Add([]byte(small))
	f.Add([]byte(`[{"ph":"B","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":"2.5"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Read(bytes.NewReader(data), int64(len(data)), trace.Options{Format: "chrome", MaxEvents: 1 << 16})
		if err != nil {
			if tr != nil {
				t.Errorf("error %v with a trace", err)
			}
			return
		}
		checkInvariants(t, tr)
	})
}

// checkInvariants checks what every reader promises about a Trace.
func checkInvariants(t *testing.T, tr *trace.Trace) {
	t.Helper()
	next := 0
	for i, k := range tr.Tracks {
		if k.Lo != next && k.Lo != k.Hi || k.Hi < k.Lo || k.Hi > len(tr.Events) {
			t.Fatalf("track %d spans [%d,%d) after %d of %d events", i, k.Lo, k.Hi, next, len(tr.Events))
		}
		if k.Hi > k.Lo {
			next = k.Hi
		}
		if k.Kind == trace.TrackDevice && k.Device == "" {
			t.Errorf("device track %d without a device", i)
		}
		evs := tr.TrackEvents(i)
		for j, e := range evs {
			if int(e.Track) != i || e.Dur < 0 || e.Start < 0 || int(e.Name) >= len(tr.Strings) || int(e.Cat) >= len(tr.Strings) {
				t.Fatalf("track %d event %d: %+v", i, j, e)
			}
			if j > 0 && (evs[j-1].Start > e.Start || evs[j-1].Start == e.Start && evs[j-1].Dur < e.Dur) {
				t.Fatalf("track %d events %d and %d out of order", i, j-1, j)
			}
		}
	}
	if next != len(tr.Events) {
		t.Fatalf("tracks cover %d of %d events", next, len(tr.Events))
	}
}

// FuzzScan feeds arbitrary bytes straight to the event scanner, which
// normally sees only objects the decoder has validated: even so it must
// not panic or hang.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1,"x":[{"}":"]"}]}}`))
	f.Add([]byte(`{"ph":"B","name":"a\"","pid":"p","tid":1,"ts":"1.5e1","args":{"name":"n","device":"1"}}`))
	f.Add([]byte(`{ "ph" : "i" , "ts" : 3 ,"args":{"kind":"DtoH"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := newParser(bytes.NewReader(nil), trace.Options{})
		if err := p.event(data); err != nil {
			t.Fatal(err)
		}
		if tr, err := p.finish(); err == nil {
			checkInvariants(t, tr)
		}
	})
}
