package xplane

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// endless is a stream of head, then fill bytes without end, as a device
// or a pipe gives; n counts the bytes read from it.
type endless struct {
	head []byte
	fill byte
	n    int64
}

func (e *endless) Read(p []byte) (int, error) {
	k := copy(p, e.head)
	e.head = e.head[k:]
	for i := k; i < len(p); i++ {
		p[i] = e.fill
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestStreamBrokenFraming: a stream whose framing is broken is refused
// where it breaks, after reading a bounded number of bytes: a device of
// zeros or of 0xff was read to the end of the --max-bytes bound (64 GiB)
// before Decode looked at its first byte. A stream that is framed well
// reads on to its end as before.
func TestStreamBrokenFraming(t *testing.T) {
	good := smallSpace(t)
	tests := []struct {
		name string
		in   *endless
		want string
	}{
		{"zeros", &endless{fill: 0}, "at byte 0: field number 0 (byte 0x00), expected a field tag"},
		{"0xff", &endless{fill: 0xff}, "at byte 0: field tag: varint longer than 10 bytes"},
		{"space, then zeros", &endless{head: good, fill: 0}, "field number 0 (byte 0x00)"},
		{"planes of a group", &endless{head: []byte{0x0b}}, "field planes (1) has wire type start-group"},
		{"unknown field of type 7", &endless{head: []byte{0x4f}}, "field 9 has wire type 7"},
		{"warnings varint", &endless{head: []byte{0x18, 0x01}}, "wire type varint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trace.Read(tt.in, 0, trace.Options{Format: "xplane"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if tt.in.n > 1<<20 {
				t.Errorf("read %d bytes of a stream broken near its start, want at most 1 MiB", tt.in.n)
			}
		})
	}
	// Framed well: only what follows the stream's end decides.
	tr, err := trace.Read(io.MultiReader(bytes.NewReader(good), bytes.NewReader(bytes.Repeat([]byte{0x1a, 0}, 1<<20))), 0, trace.Options{Format: "xplane"})
	if err != nil || len(tr.Events) == 0 {
		t.Errorf("a space and 1M empty warnings: %v", err)
	}
}
