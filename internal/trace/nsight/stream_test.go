package nsight_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/nsight"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// TestStreamNotADatabase: a stream that cannot start an SQLite database is
// refused before it is copied to a temporary file: a device of zeros
// filled the disk up to the --max-bytes bound (64 GiB) before SQLite was
// asked. An export read as a stream is read as before.
func TestStreamNotADatabase(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	want := "not a readable Nsight Systems SQLite export: not a database: expected an SQLite header"
	for name, in := range map[string]*tracetest.Endless{
		"zeros":              {Fill: 0},
		"JSON":               {Head: []byte(`{"traceEvents":[`), Fill: ' '},
		"magic, page size 0": {Head: []byte("SQLite format 3\x00"), Fill: 0},
		"magic, page size 3": {Head: []byte("SQLite format 3\x00\x00\x03"), Fill: 0},
	} {
		_, err := nsight.Read(in, trace.Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
		if in.N > 1<<20 {
			t.Errorf("%s: read %d bytes before refusing, want at most 1 MiB", name, in.N)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("%d temporary files left behind", len(left))
	}
	b := export(t, "")
	for _, head := range [][]byte{b, b[:10]} {
		tr, err := nsight.Read(bytes.NewReader(head), trace.Options{})
		if len(head) == len(b) && (err != nil || len(tr.Events) == 0) {
			t.Errorf("the export as a stream: %v", err)
		}
		if len(head) < len(b) && (err == nil || strings.Contains(err.Error(), want)) {
			t.Errorf("10 bytes of the export: error %v, want SQLite's own", err)
		}
	}
}
