package inputs

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/trackname"
)

// field encodes a length-delimited protobuf field.
func field(num int, data []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(num<<3|2))
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// plane encodes an XPlane with an id and a name, then a line.
func plane(id uint64, name string) []byte {
	b := binary.AppendUvarint([]byte{1 << 3}, id)
	b = append(b, field(2, []byte(name))...)
	return append(b, field(3, []byte("a line"))...)
}

// TestLastPlaneIs: an XSpace is annotated when its last plane is
// tracegap's, found by skipping the planes before it; another last plane,
// a cut or malformed XSpace, is not.
func TestLastPlaneIs(t *testing.T) {
	host := field(1, plane(1, "/host:CPU"))
	ours := field(1, plane(0x7a6e, trackname.AnnotationPlane))
	tests := []struct {
		name  string
		space []byte
		want  bool
	}{
		{"annotated", append(append(bytes.Clone(host), field(4, []byte("hostname"))...), ours...), true},
		{"ours not last", append(bytes.Clone(ours), host...), false},
		{"plain", host, false},
		{"cut", append(bytes.Clone(host), ours[:len(ours)-3]...), false},
		{"varint field at the top", append([]byte{1 << 3, 5}, ours...), false},
		{"empty", nil, false},
		{"longer name", field(1, plane(2, trackname.AnnotationPlane+"x")), false},
	}
	for _, tt := range tests {
		r := bytes.NewReader(tt.space)
		if got := lastPlaneIs(r, int64(len(tt.space)), []byte(trackname.AnnotationPlane)); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestContainsStream: a marker is found across chunk boundaries, at every
// offset.
func TestContainsStream(t *testing.T) {
	marker := []byte(`"cat":"tracegap.`)
	for _, at := range []int{0, 1<<16 - 5, 1 << 16, 3<<16 + 7} {
		data := append(bytes.Repeat([]byte{' '}, at), marker...)
		if !containsStream(&oneByteMore{r: bytes.NewReader(data)}, marker) {
			t.Errorf("marker at %d not found", at)
		}
		if containsStream(bytes.NewReader(data[:len(data)-1]), marker) {
			t.Errorf("cut marker at %d found", at)
		}
	}
}

// oneByteMore reads in odd-sized pieces, as a gzip stream may.
type oneByteMore struct{ r *bytes.Reader }

func (o *oneByteMore) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 4099)]) }

// TestAnnotatedName: annotate's documented output names.
func TestAnnotatedName(t *testing.T) {
	for name, want := range map[string]bool{
		"logs/run.annotated.json.gz":                     true,
		"logs/plugins/profile/annotated/host.xplane.pb":  true,
		"logs/plugins/profile/2024_01_01/host.xplane.pb": false,
		"gs://b/job/rank-0.Annotated.pt.trace.json.gz":   true,
		"rank-0.pt.trace.json.gz":                        false,
	} {
		if got := annotatedName(name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

// FuzzLastPlaneIs: any bytes are looked into without a panic, in a number
// of reads bounded by their length.
func FuzzLastPlaneIs(f *testing.F) {
	f.Add(field(1, plane(0x7a6e, trackname.AnnotationPlane)))
	f.Add(append(field(1, plane(1, "/host:CPU")), 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f))
	f.Add([]byte(strings.Repeat("\x0a\x00", 64)))
	f.Fuzz(func(t *testing.T, b []byte) {
		lastPlaneIs(bytes.NewReader(b), int64(len(b)), []byte(trackname.AnnotationPlane))
	})
}
