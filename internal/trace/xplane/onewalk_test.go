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

// TestOneWalkFieldOrder reads lines whose fields come in other orders than
// profilers write them in one walk, sampling fewer bytes than the line's
// events, and wants what two walks read: checkSame. The track is named
// by the line's last display_name, though it follows the events; a header
// field after the events makes the read start over in two walks.
func TestOneWalkFieldOrder(t *testing.T) {
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
		setOneWalk(t, 64)
		tr, err := Decode(b, trace.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(tr.Tracks) != 1 || tr.Tracks[0].Thread != tc.thread || tr.Tracks[0].Name != tc.thread || len(tr.Events) != len(evs) {
			t.Errorf("%s: tracks %+v with %d events, want one named %q with %d", tc.name, tr.Tracks, len(tr.Events), tc.thread, len(evs))
		}
	}
}

// TestOneWalkEstimate checks the counts a one-walk scan gives a plane's
// lines: exact for a line shorter than the sample; at least the events of
// a longer line, whose later events are longer (offsets from 0 to 5 ms,
// 1 to 5 varint bytes, and a sixteenth more for a margin), and within a
// quarter of them;
// exact again for a line whose first events are too small to judge the
// rest by (8 empty events, then 100 ordinary ones).
func TestOneWalkEstimate(t *testing.T) {
	tiny := append(make([]*pb.XEvent, 8), growingEvents(100)...)
	for i := range 8 {
		tiny[i] = &pb.XEvent{}
	}
	for _, tc := range []struct {
		name    string
		evs     []*pb.XEvent
		sampled bool
	}{
		{"short", growingEvents(5), false},
		{"long", growingEvents(5000), true},
		{"tiny first", tiny, false},
	} {
		b := spaceOfLine(t, &pb.XLine{Id: 1, Name: "t", Events: tc.evs})
		d := newDecoder(wire{buf: b, size: len(b), plane: -1, line: -1, event: -1}, trace.Options{MaxTracks: 10, MaxStrings: 10}, true)
		d.sample = 64
		_, _, n := protowire.ConsumeTag(b)
		plane, m := protowire.ConsumeBytes(b[n:])
		pl, err := d.scanPlane(span{n + m - len(plane), n + m})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		h := pl.lines[0]
		want := len(tc.evs)
		if h.sampled != tc.sampled || h.count < want || h.count > want+want/4 || !h.sampled && h.count != want {
			t.Errorf("%s: count %d (sampled %v), want %d events (sampled %v)", tc.name, h.count, h.sampled, want, tc.sampled)
		}
	}
}

// TestOneWalkEventType reads lines with an event of the wrong wire type
// after the bytes a one-walk scan samples: the read must fail as two walks
// do, not take the field for an event. Each tail follows 200 good events.
func TestOneWalkEventType(t *testing.T) {
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
		setOneWalk(t, 16)
		if _, err := Decode(b, trace.Options{}); err == nil || !strings.Contains(err.Error(), "XLine.events (4) has wire type") {
			t.Errorf("%s: error %v, want the events' wire type named", tc.name, err)
		}
	}
}

// TestOneWalkProgressAgain reads from a file a line of about 8 MB of
// events and a damaged field after them: the one-walk read reports most
// of the input, fails there and reads again in two walks, whose reports
// start over from the beginning. The reports must not go back.
func TestOneWalkProgressAgain(t *testing.T) {
	good, err := proto.Marshal(&pb.XLine{Id: 7, Name: "t", TimestampNs: 1000, Events: growingEvents(800_000)})
	if err != nil {
		t.Fatal(err)
	}
	b := spaceOfRawLine(t, append(slices.Clip(good), 4<<3|0, 0))
	setOneWalk(t, sampleBytes)
	var reads []int64
	opt := trace.Options{Source: bytes.NewReader(b), SizeHint: int64(len(b)), Progress: func(read, total int64) {
		reads = append(reads, read)
	}}
	if _, err := Read(nil, opt); err == nil {
		t.Fatal("a varint field 4 read, want an error")
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
