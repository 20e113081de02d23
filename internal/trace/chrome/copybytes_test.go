package chrome

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestCopyBytes: a copy's args.bytes reaches Trace.CopyBytes under its
// correlation id, read serially and in parallel. The loop's 20 pageable
// copies have the odd correlation ids 1 to 39 (each step's copy comes
// before its kernel's launch).
func TestCopyBytes(t *testing.T) {
	smallPieces(t, 1024)
	var buf bytes.Buffer
	l := tracetest.Loop{Steps: 20, Input: 1_000_000, PageableCopy: 1_000_000, Compute: 2_000_000}
	if err := tracetest.WriteChrome(&buf, l.Spec()); err != nil {
		t.Fatal(err)
	}
	serial, par, serr, perr, used := readBoth(t, buf.Bytes())
	if serr != nil || perr != nil || !used {
		t.Fatalf("serial %v, parallel %v (used %v)", serr, perr, used)
	}
	want := map[uint32]int64{}
	for c := uint32(1); c < 40; c += 2 {
		want[c] = tracetest.PageableCopyBytes
	}
	for name, got := range map[string]map[uint32]int64{"serial": serial.CopyBytes, "parallel": par.CopyBytes} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: copy bytes %v, want %v", name, got, want)
		}
	}
}
