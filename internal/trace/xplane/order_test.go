package xplane

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"

	"github.com/tracegap/tracegap/trace"
)

// growingEvents returns n events of a "op" each 1 us after the last: their
// offsets, and so their encodings, grow along the line.
func growingEvents(n int) []*pb.XEvent {
	evs := make([]*pb.XEvent, n)
	for i := range evs {
		evs[i] = &pb.XEvent{MetadataId: 1, DurationPs: 500_000, Data: &pb.XEvent_OffsetPs{OffsetPs: int64(i) * 1_000_000}}
	}
	return evs
}

// spaceOfLine returns an XSpace of one host plane holding one line made of
// the concatenated encodings of parts: protobuf merges them into one
// message, whose fields come in the parts' order (a scalar given twice
// takes the last value).
func spaceOfLine(t *testing.T, parts ...*pb.XLine) []byte {
	t.Helper()
	var line []byte
	for _, p := range parts {
		b, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		line = append(line, b...)
	}
	return spaceOfRawLine(t, line)
}

// spaceOfRawLine returns an XSpace of one host plane holding the line
// encoded as line.
func spaceOfRawLine(t *testing.T, line []byte) []byte {
	t.Helper()
	plane, err := proto.Marshal(&pb.XPlane{Name: "/host:CPU", EventMetadata: map[int64]*pb.XEventMetadata{1: {Id: 1, Name: "op"}}})
	if err != nil {
		t.Fatal(err)
	}
	plane = protowire.AppendBytes(protowire.AppendTag(plane, 3, protowire.BytesType), line)
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), plane)
}

// TestFieldOrder reads lines whose fields come in other orders than
// profilers write them. The track is named by the line's last
// display_name, though it follows the events.
func TestFieldOrder(t *testing.T) {
	evs := growingEvents(200)
	for _, tc := range []struct {
		name   string
		parts  []*pb.XLine
		thread string
	}{
		{"as written", []*pb.XLine{{Id: 7, Name: "t", TimestampNs: 1000, Events: evs, DisplayName: "python"}}, "python"},
		{"no display name", []*pb.XLine{{Id: 7, Name: "t", TimestampNs: 1000, Events: evs}}, "t"},
		{"nameless", []*pb.XLine{{Id: 7, TimestampNs: 1000, Events: evs}}, "line 7"},
		{"display name first", []*pb.XLine{{Id: 7, Name: "t", TimestampNs: 1000, DisplayName: "python"}, {Events: evs}}, "python"},
		{"display name twice", []*pb.XLine{{Id: 7, Name: "t", TimestampNs: 1000, DisplayName: "a", Events: evs}, {DisplayName: "b"}}, "b"},
		{"timestamp after events", []*pb.XLine{{Id: 7, Name: "t", Events: evs}, {TimestampNs: 1000}}, "t"},
		{"name after events", []*pb.XLine{{Id: 7, TimestampNs: 1000, Events: evs}, {Name: "t"}}, "t"},
		{"id after events", []*pb.XLine{{Name: "t", TimestampNs: 1000, Events: evs}, {Id: 7}}, "t"},
		{"duration after events", []*pb.XLine{{Id: 7, Name: "t", TimestampNs: 1000, Events: evs, DurationPs: 5}}, "t"},
	} {
		b := spaceOfLine(t, tc.parts...)
		checkSame(t, tc.name, b, trace.Options{})
		tr, err := Decode(b, trace.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(tr.Tracks) != 1 || tr.Tracks[0].Thread != tc.thread || tr.Tracks[0].Name != tc.thread || len(tr.Events) != len(evs) {
			t.Errorf("%s: tracks %+v with %d events, want one named %q with %d", tc.name, tr.Tracks, len(tr.Events), tc.thread, len(evs))
		}
	}
}

// TestEventType reads lines with an event of the wrong wire type after
// 200 good events: the read must fail naming it, not take the field for
// an event.
func TestEventType(t *testing.T) {
	good, err := proto.Marshal(&pb.XLine{Id: 7, Name: "t", TimestampNs: 1000, Events: growingEvents(200)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"varint 0", []byte{4<<3 | 0, 0}},
		{"varint 2", []byte{4<<3 | 0, 2, 4<<3 | 2, 0}},
		{"fixed32", []byte{4<<3 | 5, 0, 0, 0, 0}},
	} {
		b := spaceOfRawLine(t, append(slices.Clip(good), tc.tail...))
		checkSame(t, tc.name, b, trace.Options{})
		if _, err := Decode(b, trace.Options{}); err == nil || !strings.Contains(err.Error(), "XLine.events (4) has wire type") {
			t.Errorf("%s: error %v, want the events' wire type named", tc.name, err)
		}
	}
}

// TestProgressForward reads from a file a line of about 8 MB of events in
// two walks, each reported as half the input: the reports must not go
// back.
func TestProgressForward(t *testing.T) {
	line, err := proto.Marshal(&pb.XLine{Id: 7, Name: "t", TimestampNs: 1000, Events: growingEvents(800_000)})
	if err != nil {
		t.Fatal(err)
	}
	b := spaceOfRawLine(t, line)
	var reads []int64
	opt := trace.Options{Source: bytes.NewReader(b), SizeHint: int64(len(b)), Progress: func(read, total int64) {
		reads = append(reads, read)
	}}
	if _, err := Read(nil, opt); err != nil {
		t.Fatal(err)
	}
	if len(reads) < 2 {
		t.Fatalf("reports %v, want some", reads)
	}
	for i := 1; i < len(reads); i++ {
		if reads[i] < reads[i-1] {
			t.Fatalf("reports %v go back", reads)
		}
	}
}
