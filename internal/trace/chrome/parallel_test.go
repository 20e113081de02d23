package chrome

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// smallPieces makes every input big enough to read in parallel, in pieces
// of n bytes, with two workers, until the test ends.
func smallPieces(t *testing.T, n int64) {
	t.Helper()
	min, piece, workers := parallelMin, pieceBytes, parallelWorkers
	parallelMin, pieceBytes, parallelWorkers = 0, n, func() int { return 2 }
	t.Cleanup(func() { parallelMin, pieceBytes, parallelWorkers = min, piece, workers })
}

// readBoth reads data serially (no Source) and in parallel, and says
// whether the parallel read was used.
func readBoth(t *testing.T, data []byte) (serial, par *trace.Trace, serr, perr error, used bool) {
	t.Helper()
	serial, serr = Read(bytes.NewReader(data), trace.Options{})
	opt := trace.Options{Source: bytes.NewReader(data), SizeHint: int64(len(data)), ExpectBytes: int64(len(data))}
	par, used, perr = readParallel(opt)
	if !used { // what Read does then
		par, perr = Read(bytes.NewReader(data), opt)
	}
	if par != nil && used {
		// Only a parallel read sets Bytes; trace.Read sets it otherwise.
		if par.Bytes != int64(len(data)) {
			t.Errorf("parallel read: Bytes %d, want %d", par.Bytes, len(data))
		}
		par.Bytes = 0
	}
	return serial, par, serr, perr, used
}

// TestParallelRealTraces reads every real Chrome trace serially and cut
// into many pieces read in parallel: the traces must be identical.
func TestParallelRealTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every real Chrome trace serially and in parallel; TestParallelFallback covers the split")
	}
	smallPieces(t, 1<<20)
	dir := realtraces.Dir(t)
	for _, tc := range realTraces {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			data := gunzipFile(t, filepath.Join(dir, tc.file))
			serial, par, serr, perr, used := readBoth(t, data)
			if serr != nil || perr != nil {
				t.Fatalf("serial: %v, parallel: %v", serr, perr)
			}
			if !used && len(data) > 4*int(pieceBytes) {
				t.Errorf("%d bytes not read in parallel", len(data))
			}
			if !reflect.DeepEqual(serial, par) {
				t.Errorf("parallel read differs from serial: %s", traceDiff(serial, par))
			}
		})
	}
}

// TestReserveRealTraces reads every real Chrome trace as a file of known
// size whose events are estimated ahead, and so kept in one slice grouped
// in place, serially and in parallel: the traces must be those read
// without the estimate.
func TestReserveRealTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every real Chrome trace with and without the estimate")
	}
	dir := realtraces.Dir(t)
	for _, tc := range realTraces {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			data := gunzipFile(t, filepath.Join(dir, tc.file))
			plain, err := Read(bytes.NewReader(data), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func(min int64) { reserveMin = min }(reserveMin)
			reserveMin = int64(len(data)) / 2
			smallPieces(t, 1<<20)
			serial, serr := Read(bytes.NewReader(data), trace.Options{SizeHint: int64(len(data)), ExpectBytes: int64(len(data))})
			par, used, perr := readParallel(trace.Options{Source: bytes.NewReader(data), SizeHint: int64(len(data)), ExpectBytes: int64(len(data))})
			if serr != nil || perr != nil || !used && len(data) > 4<<20 {
				t.Fatalf("serial: %v, parallel: %v (used %v)", serr, perr, used)
			}
			if used {
				par.Bytes = 0
			} else {
				par = serial
			}
			if !reflect.DeepEqual(plain, serial) || !reflect.DeepEqual(plain, par) {
				t.Errorf("read with the events estimated differs: serial %s, parallel %s", traceDiff(plain, serial), traceDiff(plain, par))
			}
		})
	}
}

// TestParallelFallback checks inputs where seams lie: a "},{" inside
// strings, invalid JSON in a middle piece, events split by B/E across
// pieces, truncation in the tail. Either way the result must be the
// serial one, errors and warnings included.
func TestParallelFallback(t *testing.T) {
	smallPieces(t, 256)
	ev := `{"ph":"X","name":"k%d","cat":"kernel","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"device":0}}`
	many := func(n int, f func(i int) string) string {
		var b strings.Builder
		b.WriteString(`{"traceEvents":[`)
		for i := range n {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString(f(i))
		}
		return b.String()
	}
	x := func(i int) string { return fmt.Sprintf(ev, i%7, i*10) }
	tests := []struct {
		name     string
		doc      string
		parallel bool // whether the parallel read stands
	}{
		{"plain", many(200, x) + "]}", true},
		{"seams in strings", many(200, func(i int) string {
			return fmt.Sprintf(`{"ph":"X","name":"a},{b %d","pid":1,"tid":1,"ts":%d,"dur":1,"args":{"s":"},\n{\"ph\":\"X\"}"}}`, i, i)
		}) + "]}", false},
		{"invalid in the middle", strings.Replace(many(200, x)+"]}", `"ts":1000,`, `"ts":1000,,`, 1), false},
		{"begin end across pieces", many(200, func(i int) string {
			return fmt.Sprintf(`{"ph":"%c","name":"s","pid":1,"tid":1,"ts":%d}`, "BE"[i%2], i)
		}) + "]}", true},
		{"truncated tail", many(200, x), true},
		{"trailing garbage", many(200, x) + "]} x", true},
		{"metadata at end", many(200, x) + `,{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"Stream #7"}}]}`, true},
		{"bare array", "[" + strings.TrimPrefix(many(200, x), `{"traceEvents":[`) + "]", true},
		{"events then other", many(200, x) + `],"deviceProperties":[{"id":0,"name":"A100"},{"id":1,"name":"A100"}]}`, false}, // the last seam is in deviceProperties
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			serial, par, serr, perr, used := readBoth(t, []byte(tc.doc))
			if used != tc.parallel {
				t.Errorf("parallel read used: %v, want %v", used, tc.parallel)
			}
			if (serr == nil) != (perr == nil) || serr != nil && serr.Error() != perr.Error() {
				t.Fatalf("serial error %v, parallel error %v", serr, perr)
			}
			if !reflect.DeepEqual(serial, par) {
				t.Errorf("parallel read differs from serial: %s", traceDiff(serial, par))
			}
		})
	}
}

// traceDiff names the first part of two traces that differs.
func traceDiff(a, b *trace.Trace) string {
	switch {
	case a == nil || b == nil:
		return "one trace is nil"
	case !reflect.DeepEqual(a.Strings, b.Strings):
		return "string tables"
	case !reflect.DeepEqual(a.Tracks, b.Tracks):
		return "tracks"
	case !reflect.DeepEqual(a.Events, b.Events):
		return "events"
	case !reflect.DeepEqual(a.Warnings, b.Warnings):
		return "warnings: " + strings.Join(a.Warnings, "; ") + " | " + strings.Join(b.Warnings, "; ")
	}
	return "other fields"
}

func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
