package tracetest

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"
)

// XPlane line ids and names the writer uses for what is not a thread or a
// stream. Derived lines get ids from 0xdeadbeef up, as XProf gives them.
const (
	xplaneModulesLineID = 0xdeadbeef + 4
	xplaneModulesLine   = "XLA Modules"
	// xplaneOpsLineID is the id of a TPU's "XLA Ops" line, its own
	// timeline of work: below the derived lines' ids, above any stream's.
	xplaneOpsLineID = 0xdeadbeef - 1
)

// WriteXPlane writes s as a serialized XSpace, laid out as the XLA profiler
// lays out a GPU run: a "/host:CPU" plane (even without events) with a
// line per thread (line id the TID, name "<thread name>/<tid>"), and a
// "/device:GPU:<n>" plane per device with a "Stream #<s>(...)" line per
// stream. Events with a Corr carry a correlation_id stat, events with a
// Flow its producer or consumer stats (as int64, as XProf writes them), host events
// named ProfilerStep#N a step_num stat, copies whose name gives a
// direction ("Memcpy DtoH (Device -> Pageable)") a memcpy_details stat,
// and DeviceAnnotation events sit on a derived "XLA Modules" line. Each
// line's timestamp is its first event's start, and its events are in time
// order.
func WriteXPlane(w io.Writer, s *Spec) error {
	space, err := xspace(s)
	if err != nil {
		return err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(space)
	if err != nil {
		return fmt.Errorf("marshaling XSpace: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// xplaneThread is the line name WriteXPlane gives a host thread.
func xplaneThread(tid int64, name string) string {
	if name == "" {
		name = "thread"
	}
	return name + "/" + strconv.FormatInt(tid, 10)
}

// xlineKey identifies a line: a host thread (device -1) or a device's
// stream (stream -1: the derived annotation line).
type xlineKey struct {
	device int
	id     int64
}

func xspace(s *Spec) (*pb.XSpace, error) {
	names := map[int64]string{}
	for _, th := range s.Threads {
		names[th.TID] = th.Name
	}
	lines := map[xlineKey][]int{} // events of each line, by index into s.Events
	for i, e := range s.Events {
		if e.Start < 0 || e.Dur < 0 {
			return nil, fmt.Errorf("event %d (%q): start %d ns, duration %d ns: XPlane times cannot be negative", i, e.Name, e.Start, e.Dur)
		}
		k := xlineKey{device: -1, id: e.Thread}
		switch {
		case e.Role == DeviceAnnotation:
			k = xlineKey{device: e.Device, id: xplaneModulesLineID}
		case e.Role.Device() && s.TPU:
			k = xlineKey{device: e.Device, id: xplaneOpsLineID}
		case e.Role.Device():
			k = xlineKey{device: e.Device, id: int64(e.Stream)}
		}
		lines[k] = append(lines[k], i)
	}
	// Profilers write a line's events in time order, an enclosing event
	// before those it encloses.
	for _, idx := range lines {
		slices.SortStableFunc(idx, func(a, b int) int {
			x, y := &s.Events[a], &s.Events[b]
			return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(y.Dur, x.Dur))
		})
	}
	keys := make([]xlineKey, 0, len(lines))
	for k := range lines {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b xlineKey) int {
		return cmp.Or(cmp.Compare(a.device, b.device), cmp.Compare(a.id, b.id))
	})
	space := &pb.XSpace{Hostnames: []string{"tracetest"}}
	planes := map[int]*xplaneBuilder{}
	// Profilers always write the host plane, and an XSpace without a plane
	// (only its hostname) is indistinguishable from text.
	host := newXPlaneBuilder(-1, false)
	planes[-1] = host
	space.Planes = append(space.Planes, host.plane)
	for _, k := range keys {
		p := planes[k.device]
		if p == nil {
			p = newXPlaneBuilder(k.device, s.TPU)
			planes[k.device] = p
			space.Planes = append(space.Planes, p.plane)
		}
		if err := p.addLine(s, k, lines[k], names[k.id]); err != nil {
			return nil, err
		}
	}
	// XProf writes device planes before the host plane; so does this.
	isHost := func(p *pb.XPlane) int {
		if strings.HasPrefix(p.Name, "/host:") {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(space.Planes, func(a, b *pb.XPlane) int { return cmp.Compare(isHost(a), isHost(b)) })
	return space, nil
}

// xplaneBuilder fills one plane and its metadata.
type xplaneBuilder struct {
	plane *pb.XPlane
	event map[string]int64 // event metadata id by name
	stat  map[string]int64 // stat metadata id by name
}

func newXPlaneBuilder(device int, tpu bool) *xplaneBuilder {
	p := &pb.XPlane{
		Id:            int64(device + 1),
		Name:          "/host:CPU",
		EventMetadata: map[int64]*pb.XEventMetadata{},
		StatMetadata:  map[int64]*pb.XStatMetadata{},
	}
	switch {
	case device >= 0 && tpu:
		p.Name = "/device:TPU:" + strconv.Itoa(device)
	case device >= 0:
		p.Name = "/device:GPU:" + strconv.Itoa(device)
	}
	return &xplaneBuilder{plane: p, event: map[string]int64{}, stat: map[string]int64{}}
}

func (p *xplaneBuilder) eventID(name string) int64 {
	id, ok := p.event[name]
	if !ok {
		id = int64(len(p.event) + 1)
		p.event[name] = id
		p.plane.EventMetadata[id] = &pb.XEventMetadata{Id: id, Name: name}
	}
	return id
}

// statID returns the id of the stat metadata named name; ref_value stats
// use such ids for their string values too.
func (p *xplaneBuilder) statID(name string) int64 {
	id, ok := p.stat[name]
	if !ok {
		id = int64(len(p.stat) + 1)
		p.stat[name] = id
		p.plane.StatMetadata[id] = &pb.XStatMetadata{Id: id, Name: name}
	}
	return id
}

func (p *xplaneBuilder) addLine(s *Spec, k xlineKey, idx []int, threadName string) error {
	line := &pb.XLine{Id: k.id}
	var kinds []string
	for _, i := range idx {
		kinds = appendKind(kinds, s.Events[i].Role)
	}
	switch {
	case k.device < 0:
		line.Name = xplaneThread(k.id, threadName)
		line.DisplayName = line.Name
	case k.id == xplaneModulesLineID:
		line.Name = xplaneModulesLine
	case k.id == xplaneOpsLineID:
		line.Name = "XLA Ops"
	default:
		line.Name = fmt.Sprintf("Stream #%d(%s)", k.id, strings.Join(kinds, ","))
	}
	line.TimestampNs = math.MaxInt64
	for _, i := range idx {
		line.TimestampNs = min(line.TimestampNs, s.Events[i].Start)
	}
	for _, i := range idx {
		ev, err := p.event1(&s.Events[i], line.TimestampNs)
		if err != nil {
			return fmt.Errorf("event %d (%q): %w", i, s.Events[i].Name, err)
		}
		line.Events = append(line.Events, ev)
	}
	p.plane.Lines = append(p.plane.Lines, line)
	return nil
}

// appendKind adds what a stream carries to its line name's list, once.
func appendKind(kinds []string, r Role) []string {
	var k string
	switch r {
	case Kernel:
		k = "Kernel"
	case Memcpy:
		k = "Memcpy"
	case Memset:
		k = "Memset"
	default:
		return kinds
	}
	if slices.Contains(kinds, k) {
		return kinds
	}
	return append(kinds, k)
}

func (p *xplaneBuilder) event1(e *Event, ts int64) (*pb.XEvent, error) {
	const maxNs = math.MaxInt64 / 1000
	if e.Start-ts > maxNs || e.Dur > maxNs {
		return nil, fmt.Errorf("offset %d ns or duration %d ns too large for picoseconds", e.Start-ts, e.Dur)
	}
	ev := &pb.XEvent{
		MetadataId: p.eventID(e.Name),
		Data:       &pb.XEvent_OffsetPs{OffsetPs: (e.Start - ts) * 1000},
		DurationPs: e.Dur * 1000,
	}
	if e.Corr != 0 {
		ev.Stats = append(ev.Stats, &pb.XStat{
			MetadataId: p.statID("correlation_id"),
			Value:      &pb.XStat_Uint64Value{Uint64Value: e.Corr},
		})
	}
	n, ok := profilerStep(e)
	if e.StepNum != 0 && !e.Role.Device() {
		n, ok = e.StepNum, true
	}
	if ok {
		ev.Stats = append(ev.Stats, &pb.XStat{
			MetadataId: p.statID("step_num"),
			Value:      &pb.XStat_Int64Value{Int64Value: n},
		})
	}
	if f := e.Flow; f.ID != 0 {
		id, kind := "_p", "_pt"
		if f.Consumer {
			id, kind = "_c", "_ct"
		}
		ev.Stats = append(ev.Stats,
			&pb.XStat{MetadataId: p.statID(kind), Value: &pb.XStat_Int64Value{Int64Value: f.Kind}},
			&pb.XStat{MetadataId: p.statID(id), Value: &pb.XStat_Int64Value{Int64Value: int64(f.ID)}})
	}
	if d := memcpyDetails(e); d != "" {
		ev.Stats = append(ev.Stats, &pb.XStat{
			MetadataId: p.statID("memcpy_details"),
			Value:      &pb.XStat_RefValue{RefValue: uint64(p.statID(d))},
		})
	}
	return ev, nil
}

// profilerStep returns N for a host event named "ProfilerStep#N", whatever
// its role: Kineto's name marks a step (as Build and the Chrome reader
// take it), so the XPlane gets the step_num stat that marks one there.
func profilerStep(e *Event) (int64, bool) {
	rest, ok := strings.CutPrefix(e.Name, "ProfilerStep#")
	if e.Role.Device() || !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, err == nil
}

// memcpyDetails writes CUPTI's memcpy_details for a copy whose Kineto name
// gives its memory kinds: "Memcpy HtoD (Pageable -> Device)" gives
// "kind_src:pageable kind_dst:device".
func memcpyDetails(e *Event) string {
	if e.Role != Memcpy {
		return ""
	}
	_, kinds, ok := strings.Cut(e.Name, "(")
	src, dst, ok2 := strings.Cut(strings.TrimSuffix(kinds, ")"), " -> ")
	if !ok || !ok2 {
		return ""
	}
	return "kind_src:" + strings.ToLower(src) + " kind_dst:" + strings.ToLower(dst) + " size:" + strconv.FormatInt(e.Bytes, 10) + " dest:0 async:1"
}
