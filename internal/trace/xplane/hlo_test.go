package xplane

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"
	"github.com/tracegap/tracegap/trace"
)

// hloOpSpec is an instruction's OpMetadata for a test's HLO proto.
type hloOpSpec struct {
	name, file string
	line       int
	frame      int // stack_frame_id, 0 for none
}

// hloFrameSpec is a stack frame of the module's index: a file, a line and
// the parent frame (1-based, 0 for none).
type hloFrameSpec struct {
	file   string
	line   int
	parent int
}

func appendField(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// hloProto encodes an HloProto of module name and id whose one computation
// holds an instruction of each op, with the stack frame index frames.
func hloProto(name string, id uint64, ops []hloOpSpec, frames []hloFrameSpec) []byte {
	var comp []byte
	comp = appendField(comp, 1, []byte("main"))
	for i, op := range ops {
		var md []byte
		md = appendField(md, 1, []byte("op_type"))
		md = appendField(md, 2, []byte(op.name))
		if op.file != "" {
			md = appendField(md, 3, []byte(op.file))
			md = appendVarint(md, 4, uint64(op.line))
		}
		if op.frame > 0 {
			md = appendVarint(md, 15, uint64(op.frame))
		}
		var ins []byte
		ins = appendField(ins, 1, []byte("op."+strconv.Itoa(i)))
		ins = appendField(ins, 2, []byte("add"))
		ins = appendField(ins, 7, md)
		ins = appendVarint(ins, 35, uint64(i+1))
		comp = appendField(comp, 2, ins)
	}
	var mod []byte
	mod = appendField(mod, 1, []byte(name))
	mod = appendField(mod, 2, []byte("main"))
	mod = appendField(mod, 3, comp)
	mod = appendVarint(mod, 5, id)
	if len(frames) > 0 {
		var idx []byte
		for _, f := range frames {
			idx = appendField(idx, 1, []byte(f.file))
		}
		for i, f := range frames {
			var loc []byte
			loc = appendVarint(loc, 1, uint64(i+1))
			loc = appendVarint(loc, 3, uint64(f.line))
			idx = appendField(idx, 3, loc)
		}
		for i, f := range frames {
			var fr []byte
			fr = appendVarint(fr, 1, uint64(i+1))
			if f.parent > 0 {
				fr = appendVarint(fr, 2, uint64(f.parent))
			}
			idx = appendField(idx, 4, fr)
		}
		mod = appendField(mod, 17, idx)
	}
	return appendField(nil, 1, mod)
}

// metadataPlaneOf is the "/host:metadata" plane holding each HLO proto on
// the event metadata of its program id.
func metadataPlaneOf(protos map[int64][]byte) *pb.XPlane {
	pl := &pb.XPlane{Name: metadataPlane, EventMetadata: map[int64]*pb.XEventMetadata{},
		StatMetadata: map[int64]*pb.XStatMetadata{1: {Id: 1, Name: "Hlo Proto"}}}
	for id, b := range protos {
		pl.EventMetadata[id] = &pb.XEventMetadata{Id: id, Name: "program(" + strconv.FormatInt(id, 10) + ")",
			Stats: []*pb.XStat{{MetadataId: 1, Value: &pb.XStat_BytesValue{BytesValue: b}}}}
	}
	return pl
}

// userAndLibraryOps are a program's ops from the user's code and from
// libraries: train.py:12 twice, train.py:30 once, train.py:40 through the
// stack frame index (the op's own line is a library's), the rest library
// code, which is left out.
var userAndLibraryOps = []hloOpSpec{
	{"jit(step)/lib", "/venv/lib/python3.12/site-packages/flax/linen/module.py", 700, 0},
	{"jit(step)/dot_general", "/home/me/train.py", 12, 0},
	{"jit(step)/add", "/home/me/train.py", 30, 0},
	{"jit(step)/mul", "/home/me/train.py", 12, 0},
	{"jit(step)/jnp", "jax/_src/numpy/lax_numpy.py", 5, 0},
	{"jit(step)/ctx", "/usr/lib/python3.12/contextlib.py", 81, 0},
	{"jit(step)/optax", "/opt/optax/_src/transform.py", 9, 0},
	{"jit(step)/dist", "/usr/lib/python3/dist-packages/x.py", 1, 0},
	{"jit(step)/frozen", "<frozen runpy>", 3, 0},
	{"jit(step)/softmax", "", 0, 2},
	{"jit(step)/unresolved", "", 0, 9},
}

// userAndLibraryFrames: frame 2 is in jaxlib, called from frame 1 in the
// user's train.py:40.
var userAndLibraryFrames = []hloFrameSpec{
	{"/home/me/train.py", 40, 0},
	{"/venv/lib/python3.12/site-packages/jaxlib/x.py", 77, 1},
}

// hloSpace is an XSpace with program 7's HLO proto (userAndLibraryOps), a
// program of library code only (8), and a GPU stream whose kernels run
// program 7, then 8, then 7 again, then an unknown program 99.
func hloSpace(t testing.TB) []byte {
	t.Helper()
	gpu := planeSpec{name: "/device:GPU:0", lines: []lineSpec{{id: 7, name: "Stream #7", ts: ts0, events: []eventSpec{
		{name: "fusion", off: 0, dur: 1_000_000, stats: []statSpec{{"program_id", uint64(7)}}},
		{name: "fusion.1", off: 2_000_000, dur: 1_000_000, stats: []statSpec{{"program_id", int64(7)}}},
		{name: "lib", off: 4_000_000, dur: 1_000_000, stats: []statSpec{{"program_id", uint64(8)}}},
		{name: "fusion", off: 6_000_000, dur: 1_000_000, stats: []statSpec{{"program_id", uint64(7)}}},
		{name: "other", off: 9_000_000, dur: 1_000_000, stats: []statSpec{{"program_id", uint64(99)}}},
	}}}}
	space := spaceOf(gpu)
	lib := hloProto("jit_lib", 8, userAndLibraryOps[:1], nil)
	space.Planes = append(space.Planes, metadataPlaneOf(map[int64][]byte{
		7: hloProto("jit_step", 7, userAndLibraryOps, userAndLibraryFrames),
		8: lib,
	}))
	return encode(t, space)
}

// TestHLOSourceLines: a program's HLO proto gives exactly the lines of the
// user's code its ops come from, most ops first, library files left out
// and a frame resolved through the stack frame index to the user's line
// that called it; a program of library code only is not kept; device work
// is tied to its program by its program_id, and work of a program not kept
// (8, and 99 with no HLO proto) is no kept program's.
func TestHLOSourceLines(t *testing.T) {
	tr, err := Decode(hloSpace(t), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Programs) != 1 {
		t.Fatalf("programs %+v, want jit_step only", tr.Programs)
	}
	p := tr.Programs[0]
	var got []string
	for _, l := range p.Lines {
		got = append(got, tr.Str(l.File)+":"+strconv.Itoa(int(l.Line))+" "+tr.Str(l.Op)+" x"+strconv.Itoa(int(l.Ops)))
	}
	want := []string{
		"/home/me/train.py:12 jit(step)/dot_general x2",
		"/home/me/train.py:30 jit(step)/add x1",
		"/home/me/train.py:40 jit(step)/softmax x1",
	}
	if tr.Str(p.Name) != "jit_step" || p.ID != 7 || !slices.Equal(got, want) {
		t.Errorf("program %s (%d) lines %q, want jit_step (7) %q", tr.Str(p.Name), p.ID, got, want)
	}
	// Times relative to the first event, at ts0.
	wantRuns := []trace.ProgramRun{{Track: 0, Program: 0, Start: 0, End: 3_000}, {Track: 0, Program: -1, Start: 4_000, End: 5_000},
		{Track: 0, Program: 0, Start: 6_000, End: 7_000}, {Track: 0, Program: -1, Start: 9_000, End: 10_000}}
	if !slices.Equal(tr.ProgramRuns, wantRuns) {
		t.Errorf("runs %+v, want %+v", tr.ProgramRuns, wantRuns)
	}
}

// TestHLOMalformed: a damaged HLO proto costs its program, with a warning
// naming its byte, not the trace.
func TestHLOMalformed(t *testing.T) {
	good := hloProto("jit_step", 7, userAndLibraryOps, nil)
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"cut", good[:len(good)-3]},
		{"bad tag", append(slices.Clone(good), 0x80)},
	} {
		t.Run(c.name, func(t *testing.T) {
			space := spaceOf(planeSpec{name: "/device:GPU:0", lines: []lineSpec{{id: 1, name: "Stream #1", ts: ts0,
				events: []eventSpec{{name: "k", dur: 1000, stats: []statSpec{{"program_id", uint64(7)}}}}}}})
			space.Planes = append(space.Planes, metadataPlaneOf(map[int64][]byte{7: c.b}))
			tr, err := Decode(encode(t, space), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Programs) != 0 || len(tr.Events) != 1 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "HLO proto at byte") {
				t.Errorf("programs %+v, %d events, warnings %q: want no program, the event, one warning", tr.Programs, len(tr.Events), tr.Warnings)
			}
		})
	}
}

// TestHLOFuzzSeed keeps the fuzz corpus's seed of an XSpace with HLO
// protos (testdata/fuzz/FuzzRead/writer-hlo-programs) the one hloSpace
// makes; TRACEGAP_UPDATE_SEEDS=1 rewrites it.
func TestHLOFuzzSeed(t *testing.T) {
	path := filepath.Join("testdata", "fuzz", "FuzzRead", "writer-hlo-programs")
	want := "go test fuzz v1\n[]byte(" + strconv.Quote(string(hloSpace(t))) + ")\n"
	if os.Getenv("TRACEGAP_UPDATE_SEEDS") != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not hloSpace's XSpace: rerun with TRACEGAP_UPDATE_SEEDS=1", path)
	}
}

// FuzzHLO feeds arbitrary bytes to the HLO proto reader: it must return
// lines or an error inside the input, never panic or hang, and keep only
// lines of user code, at most maxSourceLines of them, each of at least
// one op.
func FuzzHLO(f *testing.F) {
	f.Add(hloProto("jit_step", 7, userAndLibraryOps, userAndLibraryFrames))
	f.Add(hloProto("jit_lib", 8, userAndLibraryOps[:1], nil))
	f.Add([]byte{0x0a, 0x02, 0x88, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readHLO(b)
		if err != nil {
			var he *hloError
			if !errors.As(err, &he) || he.off < 0 || he.off > len(b) {
				t.Fatalf("error %v: want an hloError inside the %d-byte input", err, len(b))
			}
			return
		}
		if len(m.lines) > maxSourceLines {
			t.Fatalf("%d lines, more than %d", len(m.lines), maxSourceLines)
		}
		for _, l := range m.lines {
			if !userFile(l.file) || l.line <= 0 || l.ops <= 0 {
				t.Fatalf("line %q:%d of %d ops kept", l.file, l.line, l.ops)
			}
		}
	})
}

// TestUserFile: files of installed packages, JAX's ecosystem and Python's
// library are not the user's; a user's folder of a similar name is.
func TestUserFile(t *testing.T) {
	for _, c := range []struct {
		file string
		want bool
	}{
		{"/workspace/traces/generate_conv_trace.py", true},
		{"train.py", true},
		{"/home/me/lib/python_tools/x.py", true},
		{"/home/me/myjax/model.py", true},
		{"/venv/lib/python3.12/site-packages/transformer_engine/jax/attention.py", false},
		{"/usr/lib/python3/dist-packages/numpy/core.py", false},
		{"/usr/lib/python3.12/contextlib.py", false},
		{"jax/_src/api.py", false},
		{"/src/jaxlib/xla_client.py", false},
		{"/src/flax/linen/module.py", false},
		{"/src/optax/_src/transform.py", false},
		{"<frozen runpy>", false},
	} {
		if got := userFile([]byte(c.file)); got != c.want {
			t.Errorf("userFile(%q) = %v, want %v", c.file, got, c.want)
		}
	}
}
