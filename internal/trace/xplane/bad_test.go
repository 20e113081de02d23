package xplane

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// smallSpace is a valid two-plane XSpace written by the test-trace writer.
func smallSpace(t testing.TB) []byte {
	t.Helper()
	s := tracetest.Loop{Steps: 2, Input: 100_000, Dispatch: 20_000, Kernels: 2, Compute: 50_000, Sync: true}.Spec()
	var buf bytes.Buffer
	if err := tracetest.WriteXPlane(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeBadInput(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		offset int
		msg    string // a part of the message
	}{
		{"empty", nil, 0, "no planes (field 1): expected an XSpace holding at least one plane"},
		{"planes as varint", []byte{0x08, 0x01}, 0, "field planes (1) has wire type varint, expected length-delimited"},
		{"plane past the end", []byte{0x0a, 0x05, 0x08, 0x01}, 1, "planes (1) is 5 bytes long, but only 2 bytes remain in the 4-byte input"},
		{"plane length cut", []byte{0x0a, 0x80}, 1, "planes (1) length: input ends inside a varint"},
		{"overlong varint", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 1, "varint longer than 10 bytes"},
		{"group wire type", []byte{0x0b}, 0, "field planes (1) has wire type start-group, expected length-delimited"},
		{"unknown group", []byte{0x2b}, 1, "field 5 has wire type 3 (start-group), which XSpace never uses"},
		{"field zero", []byte{0x00}, 0, "field number 0"},
		{"not an XSpace", []byte{0x28, 0x07, 0x32, 0x03, 'a', 'b', 'c'}, 7, "no planes"},
		{"plane name as varint", []byte{0x0a, 0x02, 0x10, 0x01}, 2, "(planes[0]): field XPlane.name (2) has wire type varint"},
		{"line id as bytes", []byte{0x0a, 0x04, 0x1a, 0x02, 0x0a, 0x00}, 4, "(planes[0].lines[0]): field XLine.id (1) has wire type length-delimited, expected varint"},
		{"event past its line", []byte{0x0a, 0x06, 0x1a, 0x04, 0x22, 0x05, 0x08, 0x01, 0x22, 0x01, 'h'}, 5,
			"(planes[0].lines[0]): XLine.events (4) is 5 bytes long, but only 2 bytes remain in the enclosing message (ends at byte 8)"},
		{"event offset as fixed64", []byte{0x0a, 0x0d, 0x1a, 0x0b, 0x22, 0x09, 0x11, 1, 2, 3, 4, 5, 6, 7, 8}, 6,
			"(planes[0].lines[0].events[0]): field XEvent.offset_ps (2) has wire type fixed64, expected varint"},
		// The stat is a correlation_id, whose value the reader decodes (it
		// does not look inside stats it does not interpret).
		{"stat double cut", slices.Concat([]byte{0x0a, 0x24, 0x1a, 0x0a, 0x22, 0x08, 0x22, 0x06, 0x08, 0x01, 0x11, 0x00, 0x00, 0x00},
			[]byte{0x2a, 0x16, 0x08, 0x01, 0x12, 0x12, 0x08, 0x01, 0x12, 0x0e}, []byte("correlation_id")), 11,
			"XStat.double_value (2): 8-byte value runs past the end of its message"},
		{"stat metadata entry key as bytes", []byte{0x0a, 0x04, 0x2a, 0x02, 0x0a, 0x00}, 4,
			"(planes[0].stat_metadata): field stat_metadata key (1) has wire type length-delimited, expected varint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Decode(tt.in, trace.Options{})
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Decode = %v, %v; want a *FormatError", tr, err)
			}
			if fe.Offset != tt.offset || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q (offset %d), want offset %d and %q", err, fe.Offset, tt.offset, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "not a valid XSpace (likely corrupted): at byte ") {
				t.Errorf("error %q does not say the input is not a valid XSpace", err)
			}
		})
	}
}

// Every cut of a valid XSpace fails cleanly, except a cut between two
// planes, which leaves a shorter valid XSpace.
func TestDecodeTruncated(t *testing.T) {
	full := smallSpace(t)
	if _, err := Decode(full, trace.Options{}); err != nil {
		t.Fatal(err)
	}
	boundaries := map[int]bool{}
	for off := 0; off < len(full); {
		_, n := uvarint(full, off+1, len(full))
		size, _ := uvarint(full, off+1, len(full))
		off = n + int(size)
		boundaries[off] = true
	}
	failed := 0
	for cut := 0; cut < len(full); cut++ {
		_, err := Decode(full[:cut], trace.Options{})
		var fe *FormatError
		switch {
		case boundaries[cut] && err != nil:
			t.Errorf("cut at plane boundary %d: %v", cut, err)
		case !boundaries[cut] && !errors.As(err, &fe):
			t.Errorf("cut at %d of %d: %v, want a *FormatError", cut, len(full), err)
		case !boundaries[cut] && (fe.Offset < 0 || fe.Offset > cut):
			t.Errorf("cut at %d: error at offset %d, outside the input", cut, fe.Offset)
		default:
			failed++
		}
	}
	if failed != len(full) {
		t.Errorf("%d of %d cuts behaved", failed, len(full))
	}
}

func TestSniff(t *testing.T) {
	small := smallSpace(t)
	tests := []struct {
		name string
		head []byte
		want bool
	}{
		{"written XSpace", small, true},
		{"hostnames first", []byte{0x22, 0x05, 'h', 'o', 's', 't', '1', 0x0a, 0x02, 0x08, 0x01}, true},
		{"warnings first", []byte{0x1a, 0x03, 'b', 'a', 'd', 0x0a, 0x00}, true},
		{"empty plane", []byte{0x0a, 0x00}, true},
		{"json object", []byte(`{"traceEvents": [{"ph": "X"}]}`), false},
		{"json array", []byte(`[{"ph":"X","name":"a"}]`), false},
		{"json after newline", []byte("\n{\"traceEvents\": []}"), false},
		{"json after newlines", []byte("\n\n[{\"ph\": \"X\"}]"), false},
		{"json indented", []byte("\n  {\n    \"traceEvents\": []\n  }\n"), false},
		{"json after CRLF", []byte("\r\n{}"), false},
		{"text", []byte("\nhello, this is a text file\n"), false},
		{"quoted csv", []byte(`"name","start","dur"` + "\n" + `"a",1,2`), false},
		{"gzip magic", []byte{0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0}, false},
		{"one byte", []byte{0x0a}, false},
		{"other protobuf", []byte{0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i'}, false},
		{"plane with a wrong field", []byte{0x0a, 0x02, 0x0a, 0x00}, false},
		{"plane name not UTF-8", []byte{0x0a, 0x04, 0x12, 0x02, 0xff, 0xfe}, false},
		{"damaged after a plane name", []byte("\x0a\xef\xbf\xbd\xef\xbf\xbd\x06\x08\x02\x12\x0a/device:TPU:0\x1a\x02\xff\xff"), true},
	}
	for _, tt := range tests {
		if got := Sniff(tt.head); got != tt.want {
			t.Errorf("Sniff(%s: % x) = %v, want %v", tt.name, tt.head[:min(len(tt.head), 16)], got, tt.want)
		}
	}
}

// The first 512 bytes of each real XPlane, the damaged one included, are
// recognised, and so each reaches this reader.
func TestSniffReal(t *testing.T) {
	dir := realtraces.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.xplane.pb"))
	if len(files) != 4 {
		t.Fatalf("%d XPlane files in %s, want 4", len(files), dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !Sniff(b[:512]) {
			t.Errorf("%s: not recognised", filepath.Base(f))
		}
	}
	others, _ := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	for _, f := range others {
		tr, err := trace.Open(f, trace.Options{Format: ""})
		if err == nil && tr.Format == "xplane" {
			t.Errorf("%s: read as xplane", filepath.Base(f))
		}
	}
}
