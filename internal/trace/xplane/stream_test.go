package xplane

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// TestStreamBrokenFraming: a stream whose framing is broken is refused
// where it breaks, after reading a bounded number of bytes: a device of
// zeros or of 0xff was read to the end of the --max-bytes bound (64 GiB)
// before Decode looked at its first byte. A stream that is framed well
// reads on to its end as before.
func TestStreamBrokenFraming(t *testing.T) {
	good := smallSpace(t)
	tests := []struct {
		name string
		in   *tracetest.Endless
		want string
	}{
		{"zeros", &tracetest.Endless{Fill: 0}, "at byte 0: field number 0 (byte 0x00), expected a field tag"},
		{"0xff", &tracetest.Endless{Fill: 0xff}, "at byte 0: field tag: varint longer than 10 bytes"},
		{"space, then zeros", &tracetest.Endless{Head: good, Fill: 0}, "field number 0 (byte 0x00)"},
		{"planes of a group", &tracetest.Endless{Head: []byte{0x0b}}, "field planes (1) has wire type start-group"},
		{"unknown field of type 7", &tracetest.Endless{Head: []byte{0x4f}}, "field 9 has wire type 7"},
		{"warnings varint", &tracetest.Endless{Head: []byte{0x18, 0x01}}, "wire type varint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trace.Read(tt.in, 0, trace.Options{Format: "xplane"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if tt.in.N > 1<<20 {
				t.Errorf("read %d bytes of a stream broken near its start, want at most 1 MiB", tt.in.N)
			}
		})
	}
	// Framed well: only what follows the stream's end decides.
	tr, err := trace.Read(io.MultiReader(bytes.NewReader(good), bytes.NewReader(bytes.Repeat([]byte{0x1a, 0}, 1<<20))), 0, trace.Options{Format: "xplane"})
	if err != nil || len(tr.Events) == 0 {
		t.Errorf("a space and 1M empty warnings: %v", err)
	}
}
