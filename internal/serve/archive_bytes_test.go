package serve

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
)

// uploadBytes reads tracegap_upload_bytes_total from /metrics.
func uploadBytes(t *testing.T, ts *testServer) int64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^tracegap_upload_bytes_total (\d+)$`).FindSubmatch(get(t, ts.URL+"/metrics").body)
	if m == nil {
		t.Fatal("metrics lack tracegap_upload_bytes_total")
	}
	n, err := strconv.ParseInt(string(m[1]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestArchiveBytesCounted: an archive's bytes are counted once, as
// uploaded, whether its second entry is whole, cut off or corrupt, or the
// archive expands past the server's bound; a corrupt entry is the
// client's error (400), named.
func TestArchiveBytesCounted(t *testing.T) {
	first := fakeReport("parallel", 1, 1e6)
	// Lines that compress about fourfold: in the gzipped archive the
	// second entry is most of the stream, so its last quarter is inside it.
	var second []byte
	for i := 0; len(second) < 64<<10; i++ {
		second = fmt.Appendf(second, "step %d took %d us\n", i, i*i%9973)
	}
	order := []string{"a.trace.json", "b.trace.json"}
	files := map[string][]byte{"a.trace.json": first, "b.trace.json": second}
	plain, gz := tarball(t, false, order, files), tarball(t, true, order, files)
	corrupt := bytes.Clone(gz)
	for i := len(corrupt) * 3 / 4; i < len(corrupt)*3/4+512; i++ {
		corrupt[i] = 0xff // no Huffman code runs so long
	}
	badSum := bytes.Clone(gz)
	badSum[len(badSum)-8] ^= 0xff // the trailer's CRC-32, read after the tar's end
	tests := []struct {
		name      string
		tar       []byte
		maxUpload int64
		code      int
		msg       string
	}{
		// The fake analyzer refuses b, not a report: 422 after a's 201.
		{"whole.tar", plain, 0, http.StatusUnprocessableEntity, "b.trace.json: unrecognised format"},
		{"cut.tar", plain[:len(plain)*2/3], 0, http.StatusBadRequest, "b.trace.json: upload cut off after"},
		{"cut.tar.gz", gz[:len(gz)*3/4], 0, http.StatusBadRequest, "b.trace.json: upload cut off after"},
		{"corrupt.tar.gz", corrupt, 0, http.StatusBadRequest, "b.trace.json: corrupt gzip data after"},
		{"big.tar.gz", gz, 32 << 10, http.StatusRequestEntityTooLarge, "expands past 32768 bytes"},
		{"badsum.tar.gz", badSum, 0, http.StatusBadRequest, "badsum.tar.gz: after the tar: gzip: invalid checksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startAlone(t, Config{Analyze: (&fakeAnalyzer{}).analyze, MaxUpload: tt.maxUpload})
			body, ctype := multipartBody(t, nil, map[string][]byte{tt.name: tt.tar}, []string{tt.name})
			r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
			if r.code != tt.code || !bytes.Contains(r.body, []byte(tt.msg)) {
				t.Errorf("upload = %d %s, want %d and %q", r.code, r.body, tt.code, tt.msg)
			}
			if got := uploadBytes(t, ts); got != int64(len(tt.tar)) {
				t.Errorf("tracegap_upload_bytes_total = %d, want the archive's %d bytes as uploaded", got, len(tt.tar))
			}
		})
	}
}
