package xplane

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// uvarint agrees with protowire on every length of varint, at the end of
// the input and away from it, and on truncated and overlong ones.
func TestUvarint(t *testing.T) {
	values := []uint64{0, 1, 127, 128, 300, 16383, 16384, 1 << 35, 1<<56 - 1, 1 << 63, math.MaxUint64}
	for _, v := range values {
		enc := protowire.AppendVarint(nil, v)
		for _, pad := range []int{0, 12} {
			b := append(append([]byte{0xaa}, enc...), make([]byte, pad)...)
			got, n := uvarint(b, 1, len(b))
			if got != v || n != 1+len(enc) {
				t.Errorf("uvarint(%x) = %d, %d; want %d, %d", b, got, n, v, 1+len(enc))
			}
			if len(enc) > 1 {
				if _, n := uvarint(b, 1, len(enc)); n != -1 {
					t.Errorf("uvarint of %x cut after %d bytes: %d, want -1", enc, len(enc)-1, n)
				}
			}
		}
	}
	for _, bad := range [][]byte{
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},       // 65 bits
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // 11 bytes
	} {
		if _, n := uvarint(bad, 0, len(bad)); n != -2 {
			t.Errorf("uvarint(%x) = _, %d, want -2", bad, n)
		}
		if _, n := protowire.ConsumeVarint(bad); n >= 0 {
			t.Errorf("protowire accepts %x", bad)
		}
	}
}

// readAll returns the input whatever the size hint says.
func TestReadAll(t *testing.T) {
	in := make([]byte, 300_000)
	for i := range in {
		in[i] = byte(i * 7)
	}
	for _, hint := range []int64{0, 1, 1000, 299_999, 300_000, 300_001, 1 << 20} {
		got, err := readAll(bytes.NewReader(in), hint)
		if err != nil || !bytes.Equal(got, in) {
			t.Errorf("hint %d: %d bytes, %v; want the %d bytes back", hint, len(got), err, len(in))
		}
	}
	if got, err := readAll(bytes.NewReader(nil), 0); err != nil || len(got) != 0 {
		t.Errorf("empty input: %d bytes, %v", len(got), err)
	}
}
