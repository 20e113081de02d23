package xplane

import (
	"cmp"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"
	"github.com/tracegap/tracegap/trace"
)

// planeSpec builds a plane for tests: events name their metadata by name
// and their stats by stat name.
type planeSpec struct {
	name  string
	lines []lineSpec
}

type lineSpec struct {
	id      int64
	name    string
	ts      int64
	events  []eventSpec
	display string
}

type eventSpec struct {
	name, display string
	off, dur      int64 // picoseconds
	occurrences   int64 // set instead of off when > 0
	stats         []statSpec
	rawMeta       int64 // when > 0, refer to this metadata id without defining it
}

type statSpec struct {
	name string
	v    any // int64, uint64, float64, string, or refString
}

// refString is a string stat stored as ref_value.
type refString string

func (p planeSpec) build() *pb.XPlane {
	pl := &pb.XPlane{Name: p.name, EventMetadata: map[int64]*pb.XEventMetadata{}, StatMetadata: map[int64]*pb.XStatMetadata{}}
	evIDs, statIDs := map[string]int64{}, map[string]int64{}
	statID := func(name string) int64 {
		if id, ok := statIDs[name]; ok {
			return id
		}
		id := int64(len(statIDs) + 1)
		statIDs[name] = id
		pl.StatMetadata[id] = &pb.XStatMetadata{Id: id, Name: name}
		return id
	}
	for _, l := range p.lines {
		xl := &pb.XLine{Id: l.id, Name: l.name, DisplayName: l.display, TimestampNs: l.ts}
		for _, e := range l.events {
			key := e.name + "\x00" + e.display
			id, ok := evIDs[key]
			if !ok {
				id = int64(len(evIDs) + 1)
				evIDs[key] = id
				pl.EventMetadata[id] = &pb.XEventMetadata{Id: id, Name: e.name, DisplayName: e.display}
			}
			if e.rawMeta > 0 {
				id = e.rawMeta
			}
			xe := &pb.XEvent{MetadataId: id, DurationPs: e.dur, Data: &pb.XEvent_OffsetPs{OffsetPs: e.off}}
			if e.occurrences > 0 {
				xe.Data = &pb.XEvent_NumOccurrences{NumOccurrences: e.occurrences}
			}
			for _, s := range e.stats {
				st := &pb.XStat{MetadataId: statID(s.name)}
				switch v := s.v.(type) {
				case int64:
					st.Value = &pb.XStat_Int64Value{Int64Value: v}
				case uint64:
					st.Value = &pb.XStat_Uint64Value{Uint64Value: v}
				case float64:
					st.Value = &pb.XStat_DoubleValue{DoubleValue: v}
				case string:
					st.Value = &pb.XStat_StrValue{StrValue: v}
				case refString:
					st.Value = &pb.XStat_RefValue{RefValue: uint64(statID(string(v)))}
				}
				xe.Stats = append(xe.Stats, st)
			}
			xl.Events = append(xl.Events, xe)
		}
		pl.Lines = append(pl.Lines, xl)
	}
	return pl
}

func encode(t testing.TB, space *pb.XSpace) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(space)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func spaceOf(planes ...planeSpec) *pb.XSpace {
	s := &pb.XSpace{}
	for _, p := range planes {
		s.Planes = append(s.Planes, p.build())
	}
	return s
}

// got is one event as a test looks at it.
type got struct {
	track string // Track.Name
	name  string
	kind  trace.Kind
	flags trace.Flag
	start int64 // absolute
	dur   int64
	corr  uint64
}

func events(t *trace.Trace) []got {
	var out []got
	for i := range t.Tracks {
		for _, e := range t.TrackEvents(i) {
			out = append(out, got{t.Tracks[i].Name, t.Str(e.Name), e.Kind, e.Flags, t.StartNs + e.Start, e.Dur(), t.CorrID(e.Corr)})
		}
	}
	slices.SortFunc(out, func(a, b got) int {
		return cmp.Or(strings.Compare(a.track, b.track), cmp.Compare(a.start, b.start), strings.Compare(a.name, b.name))
	})
	return out
}

const ts0 = 1_700_000_000_000_000_000 // a line timestamp in ns since the epoch

func TestDecodeEvents(t *testing.T) {
	space := spaceOf(
		planeSpec{name: "/device:GPU:1", lines: []lineSpec{
			{id: 7, name: "Stream #7(Kernel,MemcpyD2H)", ts: ts0, events: []eventSpec{
				{name: "sgemm", off: 1_500, dur: 2_500, stats: []statSpec{{"correlation_id", uint64(42)}}},
				{name: "MemcpyD2H", off: 10_000_000, dur: 1_000_000, stats: []statSpec{{"correlation_id", int64(43)}}},
				{name: "copy_kernel", off: 20_000_000, dur: 1_000_000, stats: []statSpec{{"memcpy_details", "kind_src:pageable kind_dst:device size:8 dest:1 async:1"}, {"correlation_id", uint64(44)}}},
				{name: "late", off: 30_000_000, dur: 0},
			}},
			{id: 0xdeadbeef + 5, name: "XLA Ops", ts: ts0, events: []eventSpec{{name: "fusion.1", off: 0, dur: 4_000}}},
			{id: 0xdeadbeef + 9, name: "Some view", ts: ts0, events: []eventSpec{{name: "v", off: 0, dur: 4_000}}},
			{id: 8, name: "Counters", ts: ts0, events: []eventSpec{{name: "c", off: 0, dur: 1_000}}},
		}},
		planeSpec{name: "/host:CPU", lines: []lineSpec{
			{id: 1234, name: "python", display: "python (main)", ts: ts0 - 1_000, events: []eventSpec{
				{name: "hipMemcpyDtoHAsync", off: 0, dur: 5_000, stats: []statSpec{{"correlation_id", uint64(43)}}},
				{name: "cudaMemsetAsync", off: 6_000, dur: 5_000},
				{name: "cudaMemcpyAsync", off: 12_000, dur: 5_000, stats: []statSpec{{"memcpy_details", refString("kind:DeviceToHost size:16 async:1 kind_dst:pageable")}, {"correlation_id", uint64(45)}}},
			}},
		}},
		planeSpec{name: "/device:CUSTOM:Megascale", lines: []lineSpec{
			{id: 1, name: "net", ts: ts0, events: []eventSpec{{name: "send", off: 0, dur: 1_000}}},
			{id: 2, name: "empty", ts: ts0},
		}},
	)
	space.Hostnames = []string{"a", "b"}
	space.Errors = []string{"CUPTI buffer full"}
	tr, err := Decode(encode(t, space), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []got{
		{"/device:CUSTOM:Megascale net", "send", trace.KindOverlay, 0, ts0, 1, 0},
		{"GPU:1 Counters", "c", trace.KindOverlay, 0, ts0, 1, 0},
		{"GPU:1 Some view", "v", trace.KindOverlay, 0, ts0, 4, 0},
		{"GPU:1 Stream #7(Kernel,MemcpyD2H)", "sgemm", trace.KindWork, 0, ts0 + 1, 3, 42},
		{"GPU:1 Stream #7(Kernel,MemcpyD2H)", "MemcpyD2H", trace.KindWork, trace.FlagMemcpy | trace.FlagDtoH, ts0 + 10_000, 1_000, 43},
		{"GPU:1 Stream #7(Kernel,MemcpyD2H)", "copy_kernel", trace.KindWork, trace.FlagMemcpy | trace.FlagPageable, ts0 + 20_000, 1_000, 44},
		{"GPU:1 Stream #7(Kernel,MemcpyD2H)", "late", trace.KindWork, trace.FlagInstant, ts0 + 30_000, 0, 0},
		{"GPU:1 XLA Ops", "fusion.1", trace.KindOverlay, 0, ts0, 4, 0},
		{"python (main)", "hipMemcpyDtoHAsync", trace.KindHost, trace.FlagMemcpy | trace.FlagDtoH, ts0 - 1_000, 5, 43},
		{"python (main)", "cudaMemsetAsync", trace.KindHost, 0, ts0 - 994, 5, 0},
		{"python (main)", "cudaMemcpyAsync", trace.KindHost, trace.FlagMemcpy | trace.FlagDtoH | trace.FlagPageable, ts0 - 988, 5, 45},
	}
	if g := events(tr); !slices.Equal(g, want) {
		t.Errorf("events:\n got  %+v\n want %+v", g, want)
	}
	// Copy sizes come from memcpy_details ("size:8"), kept by correlation
	// id; the hipMemcpyDtoHAsync call gives none.
	if want := map[uint32]int64{44: 8, 45: 16}; !maps.Equal(tr.CopyBytes, want) {
		t.Errorf("copy bytes %v, want %v", tr.CopyBytes, want)
	}
	derived := map[string]bool{}
	for _, tk := range tr.Tracks {
		derived[tk.Name] = tk.Derived
	}
	if !derived["GPU:1 XLA Ops"] || !derived["GPU:1 Some view"] || derived["GPU:1 Counters"] || derived["GPU:1 Stream #7(Kernel,MemcpyD2H)"] {
		t.Errorf("derived tracks %v: want XLA Ops and the 0xdeadbeef line only", derived)
	}
	if len(tr.Tracks) != 6 {
		t.Errorf("%d tracks, want 6 (a line without events makes none)", len(tr.Tracks))
	}
	if tr.Meta["hostname"] != "a,b" || !slices.Contains(tr.Warnings, "profiler errors: CUPTI buffer full") {
		t.Errorf("hostname %q, warnings %q", tr.Meta["hostname"], tr.Warnings)
	}
}

func TestDecodeSteps(t *testing.T) {
	space := spaceOf(
		planeSpec{name: "/device:TPU:2", lines: []lineSpec{
			{id: 3, name: "XLA Ops", ts: 1000, events: []eventSpec{{name: "%fusion = f32[8] fusion()", display: "fusion", off: 0, dur: 5_000}}},
			{id: 1, name: "Steps", ts: 1000, events: []eventSpec{
				{name: "12", off: 0, dur: 9_000},
				{name: "", off: 9_000, dur: 9_000, stats: []statSpec{{"group_id", int64(13)}}},
				{name: "13", display: "train", off: 18_000, dur: 9_000},
				{name: "14", display: "train 14", off: 27_000, dur: 9_000},
			}},
		}},
		planeSpec{name: "/host:CPU", lines: []lineSpec{
			{id: 5, name: "main", ts: 1000, events: []eventSpec{
				{name: "train_step", off: 0, dur: 9_000, stats: []statSpec{{"step_num", int64(7)}}},
				{name: "SessionRun", off: 10_000, dur: 9_000, stats: []statSpec{{"_r", int64(1)}, {"group_id", uint64(4)}}},
				{name: "ProfilerStep#2", off: 20_000, dur: 9_000, stats: []statSpec{{"step_num", float64(2)}}},
				{name: "inner", off: 21_000, dur: 1_000, stats: []statSpec{{"_r", int64(0)}, {"group_id", int64(4)}}},
			}},
		}},
	)
	tr, err := Decode(encode(t, space), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []got{
		{"TPU:2 Steps", "12", trace.KindOverlay, trace.FlagStep, 1000, 9, 0},
		{"TPU:2 Steps", "step#13", trace.KindOverlay, trace.FlagStep, 1009, 9, 0},
		{"TPU:2 Steps", "13", trace.KindOverlay, trace.FlagStep, 1018, 9, 0},
		{"TPU:2 Steps", "train 14", trace.KindOverlay, trace.FlagStep, 1027, 9, 0},
		{"TPU:2 XLA Ops", "fusion", trace.KindWork, 0, 1000, 5, 0},
		{"main", "train_step#7", trace.KindHost, trace.FlagStep, 1000, 9, 0},
		{"main", "SessionRun#4", trace.KindHost, trace.FlagStep, 1010, 9, 0},
		{"main", "ProfilerStep#2", trace.KindHost, trace.FlagStep, 1020, 9, 0},
		{"main", "inner", trace.KindHost, 0, 1021, 1, 0},
	}
	if g := events(tr); !slices.Equal(g, want) {
		t.Errorf("events:\n got  %+v\n want %+v", g, want)
	}
}

// Events that decode but cannot be placed in time are dropped and counted;
// an event whose metadata is missing keeps a made-up name.
func TestDecodeDrops(t *testing.T) {
	space := spaceOf(planeSpec{name: "/host:CPU", lines: []lineSpec{
		{id: 1, name: "t", ts: 5_000, events: []eventSpec{
			{name: "ok", off: 0, dur: 1_000},
			{name: "agg", occurrences: 12, dur: 1_000},
			{name: "neg", off: -1_000, dur: 1_000},
			{name: "negdur", off: 0, dur: -1},
			{name: "orphan", rawMeta: 99, off: 2_000, dur: 1_000},
		}},
		{id: 2, name: "before epoch", ts: -10, events: []eventSpec{{name: "x", off: 0, dur: 1}}},
		{id: 3, name: "end of time", ts: math.MaxInt64 - 5, events: []eventSpec{{name: "x", off: 10_000, dur: 1}}},
	}})
	tr, err := Decode(encode(t, space), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []got{
		{"t", "ok", trace.KindHost, 0, 5_000, 1, 0},
		{"t", "metadata #99", trace.KindHost, 0, 5_002, 1, 0},
	}
	if g := events(tr); !slices.Equal(g, want) {
		t.Errorf("events:\n got  %+v\n want %+v", g, want)
	}
	wantWarn := []string{
		"dropped 1 event: aggregated XEvent (num_occurrences) has no start time",
		"dropped 4 events: negative or overflowing XEvent time",
	}
	if !slices.Equal(tr.Warnings, wantWarn) {
		t.Errorf("warnings %q, want %q", tr.Warnings, wantWarn)
	}
}

func TestDecodeMaxEvents(t *testing.T) {
	var evs []eventSpec
	for i := range 10 {
		evs = append(evs, eventSpec{name: "e", off: int64(i) * 1000, dur: 500})
	}
	b := encode(t, spaceOf(planeSpec{name: "/host:CPU", lines: []lineSpec{{id: 1, name: "t", events: evs}}}))
	if _, err := Decode(b, trace.Options{MaxEvents: 10}); err != nil {
		t.Errorf("10 events under a limit of 10: %v", err)
	}
	if _, err := Decode(b, trace.Options{MaxEvents: 9}); !errors.Is(err, trace.ErrLimit) {
		t.Errorf("10 events under a limit of 9: %v, want ErrLimit", err)
	}
}

func TestClassifyPlane(t *testing.T) {
	for name, want := range map[string]planeKind{
		"/device:GPU:0":            {kind: planeGPU, device: "GPU:0"},
		"/device:GPU:12":           {kind: planeGPU, device: "GPU:12"},
		"/device:TPU:3":            {kind: planeTPU, device: "TPU:3"},
		"/device:TPU:3 SparseCore": {kind: planeOther},
		"/device:GPU:01":           {kind: planeOther},
		"/device:GPU:-1":           {kind: planeOther},
		"/device:CUSTOM:x":         {kind: planeOther},
		"/host:CPU":                {kind: planeHost},
		"/host:metadata":           {kind: planeOther},
		"Task Environment":         {kind: planeOther},
	} {
		want.name = name
		if got := classifyPlane(name); got != want {
			t.Errorf("classifyPlane(%q) = %+v, want %+v", name, got, want)
		}
	}
}

func TestMemcpyDetails(t *testing.T) {
	for s, want := range map[string]struct {
		f    trace.Flag
		size int64
	}{
		"kind_src:pageable kind_dst:device size:64 dest:0 async:1": {trace.FlagPageable, 64},
		"kind_src:device kind_dst:pinned size:64 dest:0 async:1":   {trace.FlagDtoH, 64},
		"kind_src:device kind_dst:pageable size:64 dest:0 async:0": {trace.FlagDtoH | trace.FlagPageable, 64},
		"kind_src:device kind_dst:device size:1048576":             {0, 1 << 20},
		"kind:DeviceToHost size:0 dest:512 async:1":                {trace.FlagDtoH, 0},
		"kind:Unknown size:-4 dest:512 async:1":                    {0, 0},
		"kind:Unknown size:1e3":                                    {0, 0},
		"":                                                         {0, 0},
	} {
		if f, size := memcpyDetails(s); f != want.f || size != want.size {
			t.Errorf("memcpyDetails(%q) = %b, %d, want %b, %d", s, f, size, want.f, want.size)
		}
	}
}
