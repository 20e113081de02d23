package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// probed records the Options the probe format's reader was given.
var probed Options

// registerProbe registers, for the rest of t, a format that claims input
// starting "PROBE" and records what its reader is given. It is gone
// before the other tests and fuzz targets run: they see only the real
// formats (FuzzSniff checks that only those claim input, error messages
// list them).
func registerProbe(t *testing.T) {
	t.Helper()
	registered.register(Format{
		Name:  "probe",
		Sniff: func(head []byte) bool { return bytes.HasPrefix(head, []byte("PROBE")) },
		Read: func(r io.Reader, opt Options) (*Trace, error) {
			probed = opt
			if _, err := io.Copy(io.Discard, r); err != nil {
				return nil, err
			}
			return &Trace{}, nil
		},
	})
	t.Cleanup(func() { registered.r.Remove("probe") })
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestExpectBytes checks the size hint a reader gets: the file's size for
// plain input, the gzip trailer's for gzip, nothing when it cannot be
// known (not a file) or trusted.
func TestExpectBytes(t *testing.T) {
	registerProbe(t)
	plain := append([]byte("PROBE"), bytes.Repeat([]byte("x"), 100_000)...)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	twoMembers := append(gzipped(t, plain[:50_000]), gzipped(t, plain[50_000:])...)
	for _, tc := range []struct {
		name             string
		path             string
		wantHint, wantEx int64
	}{
		{"plain", write("plain", plain), 100_005, 100_005},
		{"gzip", write("one.gz", gzipped(t, plain)), 0, 100_005},
		// The trailer holds the last member's size only: an underestimate,
		// which is all a hint risks.
		{"gzip two members", write("two.gz", twoMembers), 0, 50_005},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probed = Options{}
			if _, err := Open(tc.path, Options{}); err != nil {
				t.Fatal(err)
			}
			if probed.SizeHint != tc.wantHint || probed.ExpectBytes != tc.wantEx {
				t.Errorf("SizeHint, ExpectBytes = %d, %d; want %d, %d", probed.SizeHint, probed.ExpectBytes, tc.wantHint, tc.wantEx)
			}
		})
	}
	t.Run("not a file", func(t *testing.T) {
		probed = Options{}
		z := gzipped(t, plain)
		if _, err := Read(struct{ io.Reader }{bytes.NewReader(z)}, int64(len(z)), Options{}); err != nil {
			t.Fatal(err)
		}
		if probed.ExpectBytes != 0 {
			t.Errorf("ExpectBytes = %d from a stream, want 0", probed.ExpectBytes)
		}
	})
}

func TestGzipSize(t *testing.T) {
	trailer := func(n uint32, pad int) []byte {
		b := make([]byte, pad, pad+4)
		return append(b, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	for _, tc := range []struct {
		name string
		data []byte
		size int64 // the file's size, when longer than data
		want int64
	}{
		{"recorded", trailer(1_000_000, 60), 0, 1_000_000},
		{"smaller than the file", trailer(10, 60), 0, 0},
		{"too short for gzip", trailer(1_000, 4), 0, 0},
		// 200 MB compressed could expand past 4 GiB: the trailer may
		// have wrapped.
		{"could have wrapped", trailer(1_000_000, 60), 200 << 20, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := max(tc.size, int64(len(tc.data)))
			// A file size bytes long whose last bytes are tc.data.
			src := offsetReader{bytes.NewReader(tc.data), size - int64(len(tc.data))}
			if got := gzipSize(src, size); got != tc.want {
				t.Errorf("gzipSize = %d, want %d", got, tc.want)
			}
		})
	}
}

// offsetReader reads r as if it started at byte off of a longer file.
type offsetReader struct {
	r   io.ReaderAt
	off int64
}

func (o offsetReader) ReadAt(p []byte, off int64) (int, error) { return o.r.ReadAt(p, off-o.off) }

func TestLimitf(t *testing.T) {
	err := Limitf("more than %d events (raise --max-events if the trace is genuine)", 5)
	if !errors.Is(err, ErrLimit) {
		t.Errorf("Limitf error does not wrap ErrLimit")
	}
	if want := "more than 5 events (raise --max-events if the trace is genuine)"; err.Error() != want {
		t.Errorf("Limitf = %q, want %q", err, want)
	}
}
