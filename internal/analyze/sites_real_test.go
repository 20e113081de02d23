package analyze

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/trackname"
	"github.com/tracegap/tracegap/trace"
)

func analyzeReal(t *testing.T, name string) *Result {
	t.Helper()
	tr, err := trace.Open(realtraces.Path(t, name), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return mustAnalyze(t, tr)
}

// TestRealCopy: TorchRec blocks on one 704-byte device-to-host copy to
// pageable memory a step, whose call blocks ~146 ms (expected.tsv), but on
// a device stalled with its work queued: the copy holds no idle, and the
// sync-on-stalled finding names it.
func TestRealCopy(t *testing.T) {
	res := analyzeReal(t, "hta-torchrec-a100-rank0.json.gz")
	if len(res.Copies) == 0 {
		t.Fatal("no copies")
	}
	var c *CopyStat
	for i := range res.Copies {
		if res.Copies[i].Kind() == "DtoH pageable" {
			c = &res.Copies[i]
		}
	}
	if c == nil {
		t.Fatalf("copies %+v: no DtoH pageable copy", res.Copies)
	}
	perStep := c.Top.HostBlocked / int64(c.Top.Count)
	if c.Top.Bytes != 704 || c.Top.Count != res.Window.Steps || perStep < 140*msec || perStep > 150*msec || c.Idle > msec {
		t.Errorf("copy %+v (%d steps), want 704 B, one a step, ~146 ms each, holding no idle", c, res.Window.Steps)
	}
	if f := findingByID(res, "blocking-copy"); f != nil {
		t.Errorf("blocking-copy finding %+v on a stalled device", f)
	}
	f := findingByID(res, "sync-on-stalled")
	if f == nil || !strings.Contains(f.Message, "cudaMemcpyAsync") || f.Severity != "medium" {
		t.Errorf("sync-on-stalled finding %+v", f)
	}
}

// TestRealCopyInItem: in HTA's CUDA event sync trace aten::item blocks in
// the device-to-host copy to pageable memory inside it (one
// cudaMemcpyAsync): the idle its call site holds, 123 us in and just after
// it, is the copy's idle in the copies table too.
func TestRealCopyInItem(t *testing.T) {
	res := analyzeReal(t, "hta-cuda-event-sync.json.gz")
	var item int64
	for _, s := range res.CallSites {
		if s.Call == "aten::item" {
			item += s.Idle
		}
	}
	if len(res.Copies) != 1 || item == 0 {
		t.Fatalf("copies %+v, aten::item idle %d: want one copy kind and idle in aten::item", res.Copies, item)
	}
	if c := res.Copies[0]; c.Kind() != "DtoH pageable" || c.Idle != item || c.Top.Idle != item {
		t.Errorf("copy %+v: want DtoH pageable holding aten::item's %d ns of idle", c, item)
	}
}

// TestRealZeroGrad: in ResNet-50 with workers=0, Optimizer.zero_grad holds
// ~43 ms of device idle, fixed by set_to_none=True.
func TestRealZeroGrad(t *testing.T) {
	res := analyzeReal(t, "kineto-resnet50-workers0.pt.trace.json.gz")
	for _, o := range res.Ops {
		if strings.Contains(o.Name, "zero_grad") {
			if o.Idle < 40*msec || o.Idle > 46*msec || o.Setting == nil || o.Setting.Name != "zero_grad.set_to_none" || o.Calls != res.Window.Steps {
				t.Errorf("zero_grad row %+v", o)
			}
			return
		}
	}
	t.Errorf("no zero_grad row in %+v", res.Ops)
}

// TestRealStacks: vLLM's eager trace carries Python stacks: its costly ops
// come with vllm/ call sites, and the dispatch finding names them.
func TestRealStacks(t *testing.T) {
	res := analyzeReal(t, "tracelens-vllm-eager-b200.json.gz")
	if res.StackHint != "" || len(res.CallSites) == 0 {
		t.Fatalf("hint %q, %d call sites", res.StackHint, len(res.CallSites))
	}
	for _, s := range res.CallSites[:3] {
		if !strings.HasPrefix(s.Frame.File, "vllm/") || s.Frame.Line <= 0 || s.Count == 0 {
			t.Errorf("call site %+v, want a vllm/ line", s)
		}
	}
	f := findingByID(res, "dispatch-overhead")
	if f == nil || len(f.Sites) == 0 || !strings.Contains(f.Message, "Called from vllm/") {
		t.Errorf("dispatch-overhead finding %+v", f)
	}
	if o := res.Ops[0]; o.Frame.IsZero() || o.Calls == 0 {
		t.Errorf("top op %+v, want a call site and calls", o)
	}
}

// TestRealDispatchNamesSites: the dispatch finding names the work the call
// sites table puts first for host idle. On ResNet-50 with workers=0 that
// is Optimizer.zero_grad among the convolutions, not aten::zero_ inside it.
func TestRealDispatchNamesSites(t *testing.T) {
	res := analyzeReal(t, "kineto-resnet50-workers0-array.pt.trace.json.gz")
	f := findingByID(res, "dispatch-overhead")
	if f == nil {
		t.Fatal("no dispatch-overhead finding")
	}
	var calls []string // the first three distinct calls of host sites
	for _, s := range res.CallSites {
		if s.Cause == Host && !slices.Contains(calls, s.Call) && len(calls) < 3 {
			calls = append(calls, s.Call)
		}
	}
	for _, call := range calls {
		if !strings.Contains(f.Message, call) {
			t.Errorf("the finding does not name the call site %q: %s", call, f.Message)
		}
	}
	if !strings.Contains(f.Message, "Optimizer.zero_grad#SGD.zero_grad") || strings.Contains(f.Message, "aten::zero_") {
		t.Errorf("the finding names the op inside zero_grad, not zero_grad: %s", f.Message)
	}
}

// TestRealJAXSites: on the shared JAX traces no call site names a library
// frame as the user's line. The GPU traces' Python frames all lie inside
// JAX (the tracer saw no user frame enter), so no site has a frame, the
// library frame each went through is named beside it, and the hint says
// why no line can be named; the TPU trace has no Python frames at all.
func TestRealJAXSites(t *testing.T) {
	for _, tt := range []struct {
		file   string
		hint   string
		viaSet bool // some site names the library frame it went through
	}{
		{"tracelens-jax-conv-block-until-ready.xplane.pb", "all in library code", true},
		{"tracelens-jax-te-fused-attn.xplane.pb", "all in library code", false},
		{"xprof-tpu-inference.xplane.pb", "no Python frames", false},
	} {
		t.Run(tt.file, func(t *testing.T) {
			res := analyzeReal(t, tt.file)
			via := false
			for _, s := range res.CallSites {
				if !s.Frame.IsZero() && trackname.LibraryFile(s.Frame.File, true) {
					t.Errorf("call site %+v names a library frame as the user's", s)
				}
				via = via || !s.Via.IsZero()
			}
			if via != tt.viaSet {
				t.Errorf("a via named: %v, want %v: %+v", via, tt.viaSet, res.CallSites)
			}
			for _, f := range res.Findings {
				if strings.Contains(f.Message, "Called from") {
					t.Errorf("%s finding names a caller where none is the user's: %s", f.ID, f.Message)
				}
			}
			if !strings.Contains(res.StackHint, tt.hint) {
				t.Errorf("stack hint %q, want %q", res.StackHint, tt.hint)
			}
			checkForeignAdvice(t, res)
		})
	}
}

// TestRealProgramSite: on the JAX traces whose Python frames around the
// blocking call are all JAX's, the sync site names the program the device
// waited on and the user's line most of its ops come from, read from the
// HLO protos: the conv trace's jit_forward_3d_conv at
// generate_conv_trace.py:23 (its five ops that name a line all name 23);
// sites of other causes name none.
func TestRealProgramSite(t *testing.T) {
	res := analyzeReal(t, "tracelens-jax-conv-block-until-ready.xplane.pb")
	want := ProgramLine{Name: "jit_forward_3d_conv", File: "/workspace/traces/generate_conv_trace.py", Line: 23, Op: "jit(forward_3d_conv)/conv_general_dilated"}
	var n int
	for _, s := range res.CallSites {
		switch {
		case s.Program.IsZero():
		case s.Cause != InSync || !s.Frame.IsZero():
			t.Errorf("site %+v: a program on a site that is not a sync without a user frame", s)
		default:
			n++
			if s.Program != want {
				t.Errorf("site %s: program %+v, want %+v", s.Call, s.Program, want)
			}
		}
	}
	if n == 0 {
		t.Errorf("no site names a program: %+v", res.CallSites)
	}
}
