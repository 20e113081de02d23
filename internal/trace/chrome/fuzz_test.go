package chrome

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

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
		var tr *trace.Trace
		var err error
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tr, err = trace.Read(bytes.NewReader(data), int64(len(data)), trace.Options{Format: "chrome", MaxEvents: 1 << 16})
		runtime.ReadMemStats(&after)
		// The bound admission relies on (Need): an event takes minEvent
		// bytes at least, the last without its comma; reading allocates
		// no more than the bound beyond its fixed buffers.
		if tr != nil && len(tr.Events) > (len(data)+1)/minEvent {
			t.Fatalf("%d events from %d bytes, more than one per %d bytes", len(tr.Events), len(data), minEvent)
		}
		if alloc, bound := after.TotalAlloc-before.TotalAlloc, uint64(8<<20+2*Need(int64(len(data)), -1)); alloc > bound {
			t.Fatalf("reading %d bytes allocated %d, over %d", len(data), alloc, bound)
		}
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
			if tr.TrackOf(k.Lo+j) != i || e.Dur() < 0 || e.Start < 0 || int(e.Name) >= len(tr.Strings) || int(tr.Cat(k.Lo+j)) >= len(tr.Strings) {
				t.Fatalf("track %d event %d: %+v", i, j, e)
			}
			if j > 0 && (evs[j-1].Start > e.Start || evs[j-1].Start == e.Start && evs[j-1].Dur() < e.Dur()) {
				t.Fatalf("track %d events %d and %d out of order", i, j-1, j)
			}
		}
	}
	if next != len(tr.Events) {
		t.Fatalf("tracks cover %d of %d events", next, len(tr.Events))
	}
}

// FuzzScan checks the validating scanner against jsontext: arbitrary
// bytes read as one element of the events array must be accepted exactly
// when jsontext accepts them as one JSON value, and where both find an
// invalid byte, at the same byte.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"correlation":1,"x":[{"}":"]"}]}}`))
	f.Add([]byte(`{"ph":"B","name":"a\"","pid":"p","tid":1,"ts":"1.5e1","args":{"name":"n","device":"1"}}`))
	f.Add([]byte(`{ "ph" : "i" , "ts" : 3 ,"args":{"kind":"DtoH"`))
	f.Add([]byte(`{"a":[1,-0.5e+3,true,false,null,"\u00e9\n"],"b":{}} `))
	f.Add([]byte(`[{"a":01}]`))
	// Times read in one pass, and names found a word at a time.
	f.Add([]byte(`{"ts":1610366728298088.0,"dur":01,"External id":2,"Extra arguments":[]}`))
	f.Add([]byte(`{"ts":1.2345,"dur":12.,"args":{"Trace iteration":0}}`))
	f.Add([]byte(`{"p\u0068":"X","ts":2305843009213693.953,"a\"bcdefghijklmn":1,"abcdefg\u0068":2}`))
	f.Add([]byte(`{"ts":9999999999999999`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := newParser(bytes.NewReader(data), trace.Options{})
		d := p.dec
		d.frames = []frame{{open: '[', next: nextFirst}}
		var err error
		if d.peekKind() == '{' {
			err = p.readEvent()
		} else {
			_, err = d.readValue()
		}
		trailing := false
		if _, more := d.space(); err == nil && more {
			err, trailing = errors.New("trailing data"), true
		}
		jd := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		_, jerr := jd.ReadValue()
		if jerr == nil {
			if _, jerr = jd.ReadToken(); jerr == io.EOF {
				jerr = nil
			} else if jerr == nil {
				jerr = errors.New("trailing value")
			}
		}
		if (err == nil) != (jerr == nil) {
			t.Fatalf("%q: scanner error %v, jsontext error %v", data, err, jerr)
		}
		var serr *syntaxError
		var jserr *jsontext.SyntacticError
		// At a cut the reader reports where the input ends, jsontext
		// where the cut token began.
		if !trailing && errors.As(err, &serr) && serr.err != io.ErrUnexpectedEOF &&
			errors.As(jerr, &jserr) && serr.off != jserr.ByteOffset {
			t.Errorf("%q: scanner error %v, jsontext error %v", data, err, jerr)
		}
	})
}
