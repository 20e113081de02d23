package chrome

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// TestLongNames reads a trace whose thread, process and tid are 1 MB
// each and two events named with the same 1 MB, serially and in pieces: every track name
// is cut to trace.MaxTrackName and the event's to trace.MaxEventName,
// with one warning, and both reads agree.
func TestLongNames(t *testing.T) {
	long := strings.Repeat("T", 1<<20)
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	fmt.Fprintf(&b, `{"ph":"M","name":"process_name","pid":1,"args":{"name":"P%s"}},`, long)
	fmt.Fprintf(&b, `{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"%s"}},`, long)
	for i := range 2000 { // enough for several pieces
		fmt.Fprintf(&b, `{"ph":"X","name":"op","pid":1,"tid":2,"ts":%d,"dur":1},`, i*2)
	}
	fmt.Fprintf(&b, `{"ph":"X","name":"N%s","pid":1,"tid":"%s","ts":1,"dur":1},`, long, long)
	fmt.Fprintf(&b, `{"ph":"X","name":"N%s","pid":1,"tid":2,"ts":9000,"dur":1}`, long)
	b.WriteString(`]}`)
	data := []byte(b.String())

	smallPieces(t, 64<<10)
	serial, par, serr, perr, used := readBoth(t, data)
	if serr != nil || perr != nil || !used {
		t.Fatalf("serial: %v, parallel: %v (used %v)", serr, perr, used)
	}
	if !reflect.DeepEqual(serial, par) {
		t.Errorf("parallel read differs from serial: %s", traceDiff(serial, par))
	}
	tr := serial
	for _, k := range tr.Tracks {
		for _, s := range []string{k.Name, k.Process, k.Thread, k.Device} {
			if len(s) > 2*trace.MaxTrackName+32 { // "thread TID (NAME)"
				t.Errorf("track %.40q: a name of %d bytes", k.Name, len(s))
			}
		}
	}
	// The two long event names are one, cut.
	if m := maxString(tr.Strings); len(m) != trace.MaxEventName || !strings.HasSuffix(m, "…") || len(find(tr, m)) != 2 {
		t.Errorf("longest name %d bytes ending %q, on %d events; want %d bytes ending in …, on 2", len(m), m[len(m)-8:], len(find(tr, m)), trace.MaxEventName)
	}
	// Process, thread and tid: one warning.
	want := []string{fmt.Sprintf("cut 3 track names over %d bytes and 1 event names over %d bytes, ending them with %q", trace.MaxTrackName, trace.MaxEventName, "…")}
	if !reflect.DeepEqual(tr.Warnings, want) {
		t.Errorf("warnings %q, want %q", tr.Warnings, want)
	}
}

// maxString returns the longest of ss.
func maxString(ss []string) string {
	var m string
	for _, s := range ss {
		if len(s) > len(m) {
			m = s
		}
	}
	return m
}
