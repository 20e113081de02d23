package trace

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestAheadReader(t *testing.T) {
	data := make([]byte, 3500)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name string
		size int
		bufs int
	}{
		{"several buffers", 1000, 2},
		{"one buffer", 1000, 1},
		{"buffer larger than the input", 8192, 3},
		{"one-byte buffers", 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAheadReader(iotest.HalfReader(bytes.NewReader(data)), tc.size, tc.bufs)
			defer a.Close()
			if err := iotest.TestReader(a, data); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestAheadReaderError checks that the source's error arrives after all
// the bytes before it, as the source gave it (not as io.ErrUnexpectedEOF).
func TestAheadReaderError(t *testing.T) {
	boom := errors.New("gzip: invalid checksum")
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"failure", boom},
		{"a short end is still the end", io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := io.MultiReader(bytes.NewReader([]byte("0123456789")), iotest.ErrReader(tc.err))
			a := newAheadReader(src, 4, 2)
			defer a.Close()
			got, err := io.ReadAll(a)
			want := tc.err
			if want == io.EOF {
				want = nil // ReadAll's success
			}
			if string(got) != "0123456789" || err != want {
				t.Errorf("ReadAll = %q, %v; want %q, %v", got, err, "0123456789", want)
			}
			if n, err := a.Read(make([]byte, 1)); n != 0 || err != tc.err {
				t.Errorf("Read after the end = %d, %v; want 0, %v", n, err, tc.err)
			}
		})
	}
}

// endless is a source that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) { return len(p), nil }

// TestAheadReaderClose checks that Close stops the goroutine of a reader
// abandoned midway (it returns only once the goroutine has), and that it
// can be called again.
func TestAheadReaderClose(t *testing.T) {
	a := newAheadReader(endless{}, 64, 3)
	if _, err := io.ReadFull(a, make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.Close()
}
