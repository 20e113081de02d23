package serve

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// tarBlock returns a ustar header block for an entry of typ named name
// whose stored data is size bytes.
func tarBlock(name string, typ byte, size int) []byte {
	b := make([]byte, 512)
	copy(b, name)
	copy(b[100:], "0000644\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], "00000000000\x00")
	copy(b[148:], "        ")
	b[156] = typ
	copy(b[257:], "ustar\x0000")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// paxRecord is one "length key=value\n" record of a PAX header.
func paxRecord(k, v string) string {
	r := " " + k + "=" + v + "\n"
	n := len(r)
	for len(fmt.Sprint(n+len(fmt.Sprint(n)))) != len(fmt.Sprint(n)) {
		n++
	}
	n += len(fmt.Sprint(n))
	return fmt.Sprint(n) + r
}

// sparseTar returns a tar whose one entry, named name, is a GNU sparse
// file (PAX format 0.1) of size bytes, all of them a hole: 2 KiB that a
// tar reader expands to size bytes of zeros.
func sparseTar(name string, size int64) []byte {
	recs := paxRecord("GNU.sparse.major", "0") + paxRecord("GNU.sparse.minor", "1") +
		paxRecord("GNU.sparse.name", name) + paxRecord("GNU.sparse.size", fmt.Sprint(size)) +
		paxRecord("GNU.sparse.numblocks", "0") + paxRecord("GNU.sparse.map", "")
	var b bytes.Buffer
	b.Write(tarBlock("PaxHeaders/x", 'x', len(recs)))
	b.WriteString(recs)
	b.Write(make([]byte, (512-len(recs)%512)%512))
	b.Write(tarBlock("x", '0', 0))
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

// TestSparseEntryRefused: a sparse entry, which the tar reader expands
// from nothing, is refused before any of it is stored: its holes would
// fill the disk without counting against the archive's bound.
func TestSparseEntryRefused(t *testing.T) {
	tests := []struct {
		name string
		tar  []byte
	}{
		{"hole.tar", sparseTar("a.trace.json", 64<<20)},
		{"hole.tar.gz", tracetest.Gzip(sparseTar("logs/a.trace.json", 64<<20))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startAlone(t, Config{Analyze: (&fakeAnalyzer{}).analyze, MaxUpload: 1 << 20})
			body, ctype := multipartBody(t, nil, map[string][]byte{tt.name: tt.tar}, []string{tt.name})
			r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
			if want := "a sparse file"; r.code != http.StatusBadRequest || !bytes.Contains(r.body, []byte(want)) {
				t.Errorf("upload = %d %s, want %d and %q", r.code, r.body, http.StatusBadRequest, want)
			}
			if got := uploadBytes(t, ts); got != int64(len(tt.tar)) {
				t.Errorf("tracegap_upload_bytes_total = %d, want the archive's %d bytes as uploaded", got, len(tt.tar))
			}
		})
	}
}
