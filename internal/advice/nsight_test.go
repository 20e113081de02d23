package advice

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// Timeline of nsightLoop, per iteration i from t0 = i*loopPeriod.
const (
	loopPeriod  = 20 * msec
	launchAt    = 0           // cudaLaunchKernel, 10 us
	kernelAt    = 20 * usec   // the kernel, 1 ms
	copyCallAt  = 30 * usec   // cudaMemcpy, to copyCallEnd
	copyAt      = 1020 * usec // the DtoH copy on the device, 1 ms
	copyCallEnd = 2100 * usec
	afterEnd    = loopPeriod - 10*usec // the host work after the copy ends
)

// nsightLoop is a loop of n iterations on one thread, as a plain CUDA
// program records it: launch a 1 ms kernel, copy its 1 MB result to
// pageable memory with a blocking cudaMemcpy (1 ms on the device), then
// host work named after until the next launch ("" for none). wrap, when
// set, names a host op around the launch and the copy (the framework's).
func nsightLoop(n int, wrap, after string) *tracetest.Spec {
	s := &tracetest.Spec{Threads: []tracetest.Thread{{TID: 1, Name: "main"}}}
	add := func(e tracetest.Event) { s.Events = append(s.Events, e) }
	for i := range n {
		t0 := int64(i) * loopPeriod
		c := uint64(2*i + 1)
		if wrap != "" {
			add(tracetest.Event{Role: tracetest.CPUOp, Name: wrap, Thread: 1, Start: t0, Dur: copyCallEnd})
		}
		add(tracetest.Event{Role: tracetest.Runtime, Name: "cudaLaunchKernel", Thread: 1, Start: t0 + launchAt, Dur: 10 * usec, Corr: c})
		add(tracetest.Event{Role: tracetest.Kernel, Name: "saxpy", Start: t0 + kernelAt, Dur: msec, Corr: c, Stream: 7})
		add(tracetest.Event{Role: tracetest.Runtime, Name: "cudaMemcpy", Thread: 1, Start: t0 + copyCallAt, Dur: copyCallEnd - copyCallAt, Corr: c + 1})
		add(tracetest.Event{Role: tracetest.Memcpy, Name: "Memcpy DtoH (Device -> Pageable)", Start: t0 + copyAt, Dur: msec, Corr: c + 1, Stream: 7, Bytes: 1 << 20})
		if after != "" {
			add(tracetest.Event{Role: tracetest.CPUOp, Name: after, Thread: 1, Start: t0 + copyCallEnd, Dur: afterEnd - copyCallEnd})
		}
	}
	return s
}

// analyzeNsight writes s as an Nsight Systems export, reads it back and
// analyses and advises it.
func analyzeNsight(t *testing.T, s *tracetest.Spec) *analyze.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "loop.sqlite")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tracetest.WriteNsight(f, s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Open(path, trace.Options{})
	return analyzed(t, tr, err)
}

// pytorchWords are the PyTorch terms advice for another framework, or
// for plain CUDA, must not use.
var pytorchWords = []string{"torch.profiler", "with_stack", "record_shapes", ".cpu()", "non_blocking", "pin_memory", ".item()", "torch.compile"}

// TestNsightRealCompile: nvFuser's NVRTC compilation (390 ms inside
// KernelExecutor::compileFusion) is runtime work, whose fix is warm-up
// and leaving it out of the capture, not dispatch's; the Nsight export is
// told how nsys records call sites, not torch.profiler.
func TestNsightRealCompile(t *testing.T) {
	tr, err := trace.Open(realtraces.Path(t, "nsight/nvfuser-matmul-h200.sqlite"), trace.Options{})
	r := analyzed(t, tr, err)
	if r.Verdict != analyze.HostBound {
		t.Fatalf("verdict %s, want host-bound", r.Verdict)
	}
	g := r.Gaps[r.TopGaps[0]]
	if g.Cause != analyze.Runtime || g.Dur < 300*msec {
		t.Errorf("longest gap %s of cause %s, want the compilation's (over 300 ms) as runtime", human.Duration(g.Dur), g.Cause)
	}
	if rt, host := r.Idle.Of(analyze.Runtime), r.Idle.Of(analyze.Host); rt < 300*msec || host > 100*msec {
		t.Errorf("runtime idle %s, host %s: want the compilation's 387 ms as runtime", human.Duration(rt), human.Duration(host))
	}
	if findingOf(r, FindDispatch) != nil {
		t.Errorf("a dispatch-overhead finding on a compile stall")
	}
	f := findingOf(r, FindRuntimeWork)
	if f == nil || f.Severity != "high" || !strings.Contains(f.Message, "KernelExecutor::compileFusion") ||
		!strings.Contains(f.Fix, "NVRTC") || !strings.Contains(f.Fix, "--capture-range=cudaProfilerApi") {
		t.Fatalf("runtime-work finding %+v: want it high, naming compileFusion, with the JIT warm-up fix", f)
	}
	checkNsysAdvice(t, r)
}

// TestNsightRealMPI: MPI_Send and MPI_Recv on a plain CUDA program (no
// Python) are communication, not dispatch; its fixes are CUDA's and MPI's,
// and its blocking copies, without steps, are counted over the window as
// forced-sync counts them.
func TestNsightRealMPI(t *testing.T) {
	tr, err := trace.Open(realtraces.Path(t, "nsight/pipit-saxpy-mpi-a100-old-schema.sqlite"), trace.Options{})
	r := analyzed(t, tr, err)
	if r.Window.Steps != 0 {
		t.Fatalf("%d steps, want none", r.Window.Steps)
	}
	if findingOf(r, FindDispatch) != nil {
		t.Errorf("a dispatch-overhead finding on MPI waits")
	}
	if f := findingOf(r, FindCommWait); f == nil || !strings.Contains(f.Message, "MPI_Send, MPI_Recv") || !strings.Contains(f.Fix, "MPI_Isend") ||
		!slices.Equal(f.Calls, []string{"MPI_Send", "MPI_Recv"}) || f.Idle != r.Idle.Of(analyze.Host) || len(f.Sites) != 2 {
		t.Errorf("comm-wait finding %+v: want MPI_Send, MPI_Recv (calls and sites), the host idle and non-blocking MPI", f)
	}
	sync, cp := findingOf(r, FindForcedSync), findingOf(r, FindBlockingCopy)
	if sync == nil || cp == nil {
		t.Fatalf("forced-sync %v, blocking-copy %v: want both", sync, cp)
	}
	n := r.Facts.SyncCalls
	if !strings.Contains(sync.Message, fmt.Sprintf("(%d blocking calls in the window)", n)) {
		t.Errorf("forced-sync %q does not count %d blocking calls", sync.Message, n)
	}
	top := r.Copies[0].Top
	want := fmt.Sprintf("blocks the host for %s in all, over %d copies (%d of the window's %d blocking calls)", human.Duration(top.HostBlocked), top.Count, top.Count, n)
	if !strings.Contains(cp.Message, want) || strings.Contains(cp.Message, "per step") {
		t.Errorf("blocking-copy %q: want %q, no per-step figure", cp.Message, want)
	}
	for _, f := range []*analyze.Finding{sync, cp} {
		if !strings.Contains(f.Fix, "cudaMemcpyAsync") || len(f.Settings) > 0 {
			t.Errorf("%s fix %q, settings %v: want cudaMemcpyAsync and no framework setting", f.ID, f.Fix, f.Settings)
		}
	}
	checkNsysAdvice(t, r)
}

// checkNsysAdvice checks that an Nsight export without framework is told
// how to record more with nsys, in no fix or hint PyTorch's terms.
func checkNsysAdvice(t *testing.T, r *analyze.Result) {
	t.Helper()
	for _, w := range []string{"--python-backtrace=cuda", "--python-sampling=true", "--backtrace=dwarf", "--cudabacktrace=all", "NVTX"} {
		if !strings.Contains(r.StackHint, w) {
			t.Errorf("stack hint %q lacks %q", r.StackHint, w)
		}
	}
	texts := []string{r.StackHint}
	for _, f := range r.Findings {
		texts = append(texts, f.Fix)
	}
	for _, s := range texts {
		for _, w := range pytorchWords {
			if strings.Contains(s, w) {
				t.Errorf("advice on a plain CUDA Nsight export uses %q: %s", w, s)
			}
		}
	}
}

// The figures of nsightLoop(n, ...) after the copy: per gap, the device
// ran copyAt+msec-copyCallAt while the host blocked in cudaMemcpy, which
// after-sync idle lasts; the host work after it holds the device idle
// until afterEnd.
const (
	loopAfterSync = copyAt + msec - copyCallAt
	loopAfterWork = afterEnd - copyCallEnd - loopAfterSync
)

// TestNsightGenerated: on generated Nsight exports of nsightLoop, the
// host work after the copy is classified by its name: NVRTC compilation
// is runtime work, MPI_Recv communication, other work dispatch; each gets
// its finding, and exact idle.
func TestNsightGenerated(t *testing.T) {
	const n = 5 // n-1 gaps
	tests := []struct {
		after string
		cause analyze.Cause
		id    string
		fix   string
	}{
		{"executor_utils::Nvrtc::CompileProgram", analyze.Runtime, FindRuntimeWork, "NVRTC"},
		{"nvrtcCompileProgram", analyze.Runtime, FindRuntimeWork, "NVRTC"},
		{"KernelExecutor::compileFusion", analyze.Runtime, FindRuntimeWork, "NVRTC"},
		{"MPI_Recv", analyze.Host, FindCommWait, "MPI_Irecv"},
		{"gloo::allreduce", analyze.Host, FindCommWait, "MPI_Irecv"},
		{"compute_on_host", analyze.Host, FindDispatch, "cudaGraphLaunch"},
	}
	for _, tt := range tests {
		t.Run(tt.after, func(t *testing.T) {
			r := analyzeNsight(t, nsightLoop(n, "", tt.after))
			// The launch's 10 us after the work is host work in every case.
			want := map[analyze.Cause]int64{analyze.AfterSync: (n - 1) * loopAfterSync, tt.cause: (n - 1) * loopAfterWork}
			want[analyze.Host] += (n - 1) * 10 * usec
			for _, c := range []analyze.Cause{analyze.AfterSync, analyze.Runtime, analyze.Host} {
				if got := r.Idle.Of(c); got != want[c] {
					t.Errorf("%s idle %d, want %d", c, got, want[c])
				}
			}
			f := findingOf(r, tt.id)
			if f == nil || f.Severity != "high" || !strings.Contains(f.Fix, tt.fix) {
				t.Fatalf("finding %s %+v: want it high, its fix naming %s", tt.id, f, tt.fix)
			}
			for _, other := range []string{FindRuntimeWork, FindCommWait, FindDispatch} {
				if other != tt.id && findingOf(r, other) != nil {
					t.Errorf("a %s finding beside %s", other, tt.id)
				}
			}
		})
	}
}

// TestNsightFrameworkFixes: the same loop recorded by Nsight under each
// framework (named by an op around the launch and the copy) gets each
// fix in that framework's terms, and a plain CUDA program in CUDA's;
// every one is told how to record call sites with nsys.
func TestNsightFrameworkFixes(t *testing.T) {
	tests := []struct {
		name, wrap string
		f          analyze.Framework
		// copy, sync and comm are phrases the fixes must use, nvtx one
		// the stack hint must.
		copy, sync, comm, nvtx string
	}{
		{"pytorch", "aten::copy_", analyze.PyTorch, "non_blocking=True", ".item()", "async_op=True", "torch.cuda.nvtx.range"},
		{"jax", "jit_train_step", analyze.JAX, "jax.device_get", "jax.device_get", "MPI_Isend", "nvtx.annotate"},
		{"tensorflow", "__inference_train_step_42", analyze.TensorFlow, "tf.summary", "tf.summary", "MPI_Isend", "nvtx.annotate"},
		{"plain CUDA", "", analyze.UnknownFramework, "cudaMemcpyAsync", "cudaMemcpyAsync", "MPI_Isend", "nvtxRangePushA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := analyzeNsight(t, nsightLoop(5, tt.wrap, "MPI_Recv"))
			if r.Framework != tt.f {
				t.Fatalf("framework %q, want %q", r.Framework, tt.f)
			}
			fixes := map[string]string{FindBlockingCopy: tt.copy, FindForcedSync: tt.sync, FindCommWait: tt.comm}
			foreign := foreignWords(tt.f)
			if tt.f == analyze.UnknownFramework {
				for _, ws := range frameworkWords {
					foreign = append(foreign, ws...)
				}
			}
			for id, w := range fixes {
				f := findingOf(r, id)
				if f == nil {
					t.Fatalf("no %s finding", id)
				}
				if !strings.Contains(f.Fix, w) {
					t.Errorf("%s fix %q lacks %q", id, f.Fix, w)
				}
				for _, fw := range foreign {
					if strings.Contains(f.Fix, fw) {
						t.Errorf("%s fix uses %q: %s", id, fw, f.Fix)
					}
				}
			}
			if !strings.Contains(r.StackHint, "--python-backtrace=cuda") || !strings.Contains(r.StackHint, tt.nvtx) {
				t.Errorf("stack hint %q: want nsys's options and %s", r.StackHint, tt.nvtx)
			}
			untraced := (&adviser{r: r, f: &r.Facts}).untracedFix()
			if !strings.Contains(untraced, "nsys profile --trace=cuda,nvtx,osrt,mpi") || !strings.Contains(untraced, tt.nvtx) {
				t.Errorf("untraced fix %q: want nsys's options and %s", untraced, tt.nvtx)
			}
			for _, fw := range foreign {
				for _, s := range []string{r.StackHint, untraced} {
					if strings.Contains(s, fw) {
						t.Errorf("advice uses %q: %s", fw, s)
					}
				}
			}
		})
	}
}
