package render

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/trackname"
	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"
	"github.com/tracegap/tracegap/trace"
)

// AnnotationPlane names the plane AnnotateXPlane adds: XProf's prefix for
// planes of tools other than the devices and the host, which its trace
// viewer shows as a process of their own. The XPlane reader keeps such a
// plane as context, so that an annotated XPlane analyses as the original.
const AnnotationPlane = trackname.AnnotationPlane

// AnnotateXPlane writes the XSpace src (its bytes, decompressed) with the
// analysis res laid over it, for XProf and TensorBoard's profile plugin:
// every byte of src, then one more plane (AnnotationPlane) with a line
// per device of one event per gap (named by its cause; its figures, the
// waited-for thread and what it was doing as stats) and a line of steps
// (named by their verdicts). An XSpace is its planes one after another, so
// the original planes, lines, events and stats are all still there, as
// they were.
func AnnotateXPlane(w io.Writer, src io.Reader, t *trace.Trace, res *analyze.Result) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := io.Copy(bw, src); err != nil {
		return err
	}
	plane, err := proto.MarshalOptions{Deterministic: true}.Marshal(annotationPlane(t, res))
	if err != nil {
		return fmt.Errorf("encoding the annotation plane: %w", err)
	}
	b := protowire.AppendTag(nil, 1, protowire.BytesType) // XSpace.planes
	b = protowire.AppendBytes(b, plane)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// xplaneAnnotation fills the annotation plane and its metadata.
type xplaneAnnotation struct {
	plane *pb.XPlane
	event map[string]int64
	stat  map[string]int64
}

func (x *xplaneAnnotation) eventID(name string) int64 {
	id, ok := x.event[name]
	if !ok {
		id = int64(len(x.event) + 1)
		x.event[name] = id
		x.plane.EventMetadata[id] = &pb.XEventMetadata{Id: id, Name: name}
	}
	return id
}

func (x *xplaneAnnotation) str(name, v string) *pb.XStat {
	id, ok := x.stat[name]
	if !ok {
		id = int64(len(x.stat) + 1)
		x.stat[name] = id
		x.plane.StatMetadata[id] = &pb.XStatMetadata{Id: id, Name: name}
	}
	return &pb.XStat{MetadataId: id, Value: &pb.XStat_StrValue{StrValue: v}}
}

func (x *xplaneAnnotation) num(name string, v int64) *pb.XStat {
	s := x.str(name, "")
	s.Value = &pb.XStat_Int64Value{Int64Value: v}
	return s
}

// annotationPlane builds the plane of res's gaps and steps on t's clock.
func annotationPlane(t *trace.Trace, res *analyze.Result) *pb.XPlane {
	x := &xplaneAnnotation{
		plane: &pb.XPlane{Id: 0x7a6e, Name: AnnotationPlane,
			EventMetadata: map[int64]*pb.XEventMetadata{}, StatMetadata: map[int64]*pb.XStatMetadata{}},
		event: map[string]int64{}, stat: map[string]int64{},
	}
	byDevice := map[string][]*analyze.Gap{}
	for i := range res.Gaps {
		g := &res.Gaps[i]
		byDevice[g.Device] = append(byDevice[g.Device], g)
	}
	devices := slices.SortedFunc(maps.Keys(byDevice), trackname.CompareDevice)
	for i, d := range devices {
		gaps := byDevice[d]
		slices.SortFunc(gaps, func(a, b *analyze.Gap) int { return cmp.Compare(a.Start, b.Start) })
		line := x.line(int64(i+1), d+" idle (tracegap)", t.StartNs+gaps[0].Start)
		for _, g := range gaps {
			stats := []*pb.XStat{
				x.str("why", "the host was "+g.Cause.About()),
				x.str("host_thread", g.Thread),
				x.str("host_doing", strings.Join(HostStack(res, g), " > ")),
			}
			for _, c := range analyze.Causes() {
				if d := g.Split.Of(c); d > 0 {
					stats = append(stats, x.num(c.Key()+"_ns", d))
				}
			}
			if n := stepNum(res, g.Step); n >= 0 {
				stats = append(stats, x.num("step", n))
			}
			x.event1(line, g.Cause.String(), t.StartNs+g.Start, g.Dur, stats)
		}
	}
	if len(res.Steps) > 0 {
		line := x.line(int64(len(devices)+1), "steps (tracegap)", t.StartNs+res.Steps[0].Start)
		for i := range res.Steps {
			s := &res.Steps[i]
			x.event1(line, string(s.Verdict), t.StartNs+s.Start, s.Dur,
				[]*pb.XStat{x.str("step", s.Name), x.num("device_busy_ns", s.DeviceBusy)})
		}
	}
	return x.plane
}

// line adds a line of the plane starting at ts (ns on the trace's clock).
func (x *xplaneAnnotation) line(id int64, name string, ts int64) *pb.XLine {
	l := &pb.XLine{Id: id, DisplayId: id, Name: name, DisplayName: name, TimestampNs: ts}
	x.plane.Lines = append(x.plane.Lines, l)
	return l
}

// event1 adds an event of dur ns at ts to line l.
func (x *xplaneAnnotation) event1(l *pb.XLine, name string, ts, dur int64, stats []*pb.XStat) {
	l.Events = append(l.Events, &pb.XEvent{
		MetadataId: x.eventID(name),
		Data:       &pb.XEvent_OffsetPs{OffsetPs: (ts - l.TimestampNs) * 1000},
		DurationPs: dur * 1000,
		Stats:      stats,
	})
}
