package advice

import (
	"strings"

	"github.com/tracegap/tracegap/internal/analyze"
)

// The fixes of the findings in the terms of the framework that recorded the
// trace (Result.Framework): a JAX user is not told to pin memory or capture
// CUDA graphs, a PyTorch user not to jit, a vLLM user is told about graph
// mode. UnknownFramework gets advice that names each framework's way.

// syncFix says how to take a sync off the step.
func (a *adviser) syncFix() string {
	switch a.r.Framework {
	case analyze.JAX:
		return "Move the read of device values off the step: keep this step's metrics as jax.Array and read them (jax.device_get) a step later, when the device has finished them, as MaxText buffers its metrics; drop print(loss), float(loss), np.asarray and block_until_ready from the step."
	case analyze.TensorFlow:
		return "Keep the step inside the graph: read tensors back (.numpy(), float(loss), printing a tensor) every N steps or through tf.summary and Keras callbacks rather than every step, and keep tf.py_function out of the step."
	case analyze.UnknownFramework:
		if a.native() {
			return nativeSyncFix
		}
		return "Move the sync off the step: read the previous step's metrics instead of this one's, and drop the per-step reads of device values (.item(), print(loss), block_until_ready, .numpy())."
	}
	return "Move the sync off the step: log the previous step's loss instead of this one's, drop .item(), print(loss) and torch.cuda.synchronize() from the step, and pin memory (pin_memory=True, non_blocking=True) for host-device copies."
}

// dispatchFix says how to cut host overhead: no CUDA graphs for JAX, whose
// compiled functions are the unit of dispatch; graph mode for vLLM.
func (a *adviser) dispatchFix() string {
	switch a.r.Framework {
	case analyze.JAX:
		return "Dispatch fewer, larger compiled functions: jax.jit the whole step instead of calling many small jitted functions or un-jitted jnp ops from Python, move Python loops into lax.scan / lax.fori_loop, and keep host-side NumPy work off the step."
	case analyze.VLLM:
		if !a.f.GraphLaunches {
			return "vLLM ran in eager mode (the trace holds no CUDA or HIP graph launch): every op is launched from Python one by one. Serve in graph mode, which replays captured CUDA graphs: enforce_eager=False (drop --enforce-eager), with the batch sizes you serve among the captured sizes (compilation_config's cudagraph_capture_sizes), since larger batches run eagerly."
		}
		return "vLLM already replays CUDA graphs: the host time is outside them. Look at what runs eagerly: batches larger than the captured sizes (raise compilation_config's cudagraph_capture_sizes), prefill, the scheduler and sampling."
	case analyze.TensorFlow:
		return "Run the step as one compiled graph: wrap it in tf.function (jit_compile=True for XLA), raise Keras's steps_per_execution so that one call runs several steps, and keep Python and NumPy work off the step."
	case analyze.UnknownFramework:
		if a.native() {
			return nativeDispatchFix
		}
		return "Cut per-op host overhead: capture the step in CUDA graphs or compile it (torch.compile, jax.jit, tf.function), fuse small ops into larger kernels, and keep Python and CPU-side work off the step."
	}
	return "Cut per-op host overhead: capture the step in CUDA graphs (torch.cuda.graphs, torch.compile(mode=\"reduce-overhead\")), compile it (torch.compile), fuse small ops into larger kernels, and keep Python and CPU-side optimizer work off the step."
}

// copyFix says how to keep copies in direction dir ("DtoH", else to the
// device) from blocking the host, with the settings that do it, in the
// terms of the framework the trace shows; plain CUDA's in the CUDA API's.
func (a *adviser) copyFix(dir string) (string, []analyze.Setting) {
	toHost := dir == "DtoH"
	switch {
	case a.r.Framework == analyze.JAX && toHost:
		return "Read device values a step later: keep this step's metrics as jax.Array and jax.device_get them after the next step is dispatched; np.asarray and float() on a jax.Array wait for all queued work and then for the copy.", nil
	case a.r.Framework == analyze.JAX:
		return "Put the next batch on the device ahead of its step: jax.device_put it, or prefetch a few batches to the device, while the current step runs, so that no step waits on its copy.", nil
	case a.r.Framework == analyze.TensorFlow && toHost:
		return "Read tensors back (.numpy(), float(loss)) every N steps rather than every step, or through tf.summary and Keras callbacks: each read waits for all queued work and then for the copy.", nil
	case a.r.Framework == analyze.TensorFlow:
		return "Prefetch input to the device: end the tf.data pipeline with tf.data.experimental.prefetch_to_device (or .prefetch(tf.data.AUTOTUNE)) so that copies overlap the step.", nil
	case a.native() && toHost:
		return "Keep results on the device until the host needs them, or copy them with cudaMemcpyAsync into pinned host memory (cudaMallocHost, cudaHostAlloc) on a non-default stream and wait on an event (cudaEventRecord, then cudaEventSynchronize) only where the host reads them: cudaMemcpy into pageable memory waits for all queued work and then for the copy.", nil
	case a.native():
		return "Copy from pinned host memory (cudaMallocHost, or cudaHostRegister on an existing buffer) with cudaMemcpyAsync on a non-default stream, so that the copy overlaps kernels and the host does not wait for it.", nil
	case toHost:
		return "Do not read device values on the step: keep them on the device, or copy into a pinned buffer with non_blocking=True and wait on an event a step later; a device-to-host copy into pageable memory (.cpu(), .tolist(), .item()) waits for all queued work and then for the copy.",
			[]analyze.Setting{{Name: "pin_memory", Value: "True"}}
	}
	return "Copy from pinned memory asynchronously: DataLoader(pin_memory=True) or tensor.pin_memory(), then .to(device, non_blocking=True).",
		[]analyze.Setting{{Name: "non_blocking", Value: "True"}}
}

// commFix says how to overlap communication with the device's work: with
// torch.distributed's asynchronous collectives for PyTorch, else with
// MPI's non-blocking calls.
func (a *adviser) commFix() string {
	if a.r.Framework == analyze.PyTorch || a.r.Framework == analyze.VLLM {
		return "Overlap communication with computation: issue collectives with async_op=True and wait on the handle only where the result is needed, queue the next GPU work before waiting, and use the NCCL backend for GPU tensors rather than gloo. To see which rank the others wait on, analyse every rank's trace together (tracegap analyze --job RANK0 RANK1 ..., or the folder holding them)."
	}
	return "Overlap communication with computation: queue the next kernels before the host communicates, post non-blocking transfers (MPI_Isend, MPI_Irecv) and wait on them (MPI_Wait) only where the data is needed, and with a CUDA-aware MPI or NCCL pass device buffers directly instead of staging them through host copies. To see which rank the others wait on, analyse every rank's trace together (tracegap analyze --job RANK0 RANK1 ..., or the folder holding them)."
}

// runtimeFix says how to keep the runtime work the idle was spent in off
// the steps: for JAX, the advice for each kind of work among the names
// the idle was most spent in, most idle first (compilation when none is
// named).
func (a *adviser) runtimeFix() string {
	if names := a.f.Causes[analyze.Runtime].Names(1); len(names) > 0 && analyze.RuntimeKindOf(names[0]) == analyze.RuntimeJIT {
		return a.jitFix()
	}
	switch a.r.Framework {
	case analyze.JAX:
		var parts []string
		seen := map[analyze.RuntimeKind]bool{}
		for _, name := range a.f.Causes[analyze.Runtime].Names(3) {
			if k := analyze.RuntimeKindOf(name); !seen[k] {
				seen[k] = true
				parts = append(parts, jaxRuntimeFixes[k])
			}
		}
		if len(parts) == 0 {
			parts = append(parts, jaxRuntimeFixes[analyze.RuntimeCompile])
		}
		return strings.Join(parts, " ")
	case analyze.TensorFlow:
		return "Trace once: give tf.function an input_signature (or reduce_retracing=True) and static shapes so that it does not retrace, and warm up before profiling; reuse device memory instead of allocating it each step."
	}
	if analyze.WarmupFirst(a.f.Causes[analyze.Runtime].Names(1)) {
		return warmupFix
	}
	return "Compile once and allocate once: warm up before the profiled steps, keep shapes static, and reuse device memory instead of freeing and allocating it each step."
}

// warmupFix is the fix for CUDA or HIP warm-up in the window: not CUDA
// graphs, which would not remove it.
const warmupFix = "Warm up before profiling: run a few steps before the profiler's active ones (torch.profiler.schedule(wait=1, warmup=2, active=N)); keep the caching allocator warm (no torch.cuda.empty_cache() in the loop: freed memory is allocated again with cudaMalloc, and cudaFree synchronizes the device); load modules eagerly (CUDA_MODULE_LOADING=EAGER) so that no first launch loads kernel code."

// jitWarmupFix is the fix for compiling CUDA code at run time (NVRTC, the CUDA
// linker): a first-call cost in any framework, not dispatch.
const jitWarmupFix = "Compiling kernels at run time (NVRTC, the CUDA linker) is a first-call cost: run each kernel or fusion once, with the shapes it will see, before the part you measure; keep shapes static so that nothing is compiled again; and keep compiled kernels across runs where the compiler caches them on disk (the driver caches the PTX it compiles under CUDA_CACHE_PATH)."

// jitFix says how to keep run-time compilation out of the measured part:
// jitWarmupFix, and how to leave the warm-up out of the capture with the
// profiler that recorded the trace.
func (a *adviser) jitFix() string {
	switch {
	case a.nsight():
		return jitWarmupFix + " Leave the warm-up out of the capture: nsys profile --capture-range=cudaProfilerApi, with cudaProfilerStart() called after the warm-up."
	case a.r.Framework == analyze.PyTorch:
		return jitWarmupFix + " Leave the warm-up out of the profile: torch.profiler.schedule(wait=1, warmup=2, active=N)."
	}
	return jitWarmupFix
}

// jaxRuntimeFixes are the JAX fixes by kind of runtime work. None assumes a
// training loop: an inference server compiles, loads and fragments memory
// as well.
var jaxRuntimeFixes = map[analyze.RuntimeKind]string{
	analyze.RuntimeCompile: "Compile once: keep shapes static (pad or bucket batches and requests), pass Python scalars as arrays or mark them static_argnums, and warm up every shape before profiling or serving; jax.config.update(\"jax_log_compiles\", True) names each recompilation, and the persistent compilation cache saves it across runs.",
	analyze.RuntimeLoad:    "Loading a program (LoadProgram, LoadProgramCacheMiss) follows each new compilation: warm up every shape before profiling or serving and keep the set of shapes small (pad or bucket them).",
	analyze.RuntimeAlloc:   "Buffer allocation on a first call is warm-up: warm up before profiling; if it recurs, keep shapes static so that buffers are reused.",
	analyze.RuntimeWarmup:  "Loading kernel code and the first launches are warm-up: warm up every shape before profiling, and load modules eagerly (CUDA_MODULE_LOADING=EAGER) so that no launch loads code.",
	analyze.RuntimeJIT:     jitWarmupFix,
	analyze.RuntimeDefrag:  "DefragmentMemory means device memory was too fragmented for the next program's buffers: donate the inputs a call replaces (jax.jit(..., donate_argnums=...)), drop references to arrays no longer needed (or x.delete()) so that they are freed early, keep shapes few so that buffers are reused, and lower peak memory.",
}

// untracedMarks say, per framework, how to name a stretch of a thread that
// the trace's Python frames do not cover; PyTorch's stands for the others.
var untracedMarks = map[analyze.Framework]string{
	analyze.JAX:        "with jax.profiler.TraceAnnotation(\"load\")",
	analyze.TensorFlow: "with tf.profiler.experimental.Trace(\"load\")",
	analyze.PyTorch:    "with torch.profiler.record_function(\"load\")",
}

// untracedFix says how to capture what an untraced thread does: the
// Python tracer where the trace has no Python frames, an annotation of
// the stretch where it has them (the thread then ran code outside Python
// or outside the tracer's reach).
func (a *adviser) untracedFix() string {
	if a.nsight() {
		return "Trace what the thread does between these calls: put NVTX ranges around its parts (" + nvtxHow(a.r.Framework, a.f.HasFrames) + "), which this report names, trace the APIs it calls (nsys profile --trace=cuda,nvtx,osrt,mpi) and sample its stacks (--sample=process-tree, with --python-sampling=true for Python)."
	}
	if a.f.HasFrames {
		mark, ok := untracedMarks[a.r.Framework]
		if !ok {
			mark = untracedMarks[analyze.PyTorch]
		}
		return "The trace has Python frames, but not in these stretches: the thread ran native code, waited outside Python, or ran before the tracer saw the frame enter. Wrap the work between steps in named annotations (" + mark + ", one per part) to see which part it is."
	}
	switch a.r.Framework {
	case analyze.JAX:
		// A run without steps may serve rather than train: no batches.
		what, mark := "the loop does between dispatches (most often getting the next batch)", "mark steps with jax.profiler.StepTraceAnnotation(\"train\", step_num=step)"
		if a.r.Window.Steps == 0 {
			what, mark = "the thread does between dispatches (preparing inputs, reading results back, Python between calls)", "mark each step or request with jax.profiler.StepTraceAnnotation(name, step_num=n)"
		}
		return "Capture the Python tracer to see what " + what + ": jax.profiler.start_trace(dir, profiler_options=jax.profiler.ProfileOptions()) with python_tracer_level=1 and host_tracer_level=2, and " + mark + "."
	case analyze.TensorFlow:
		return "Profile with the Python and host tracers (tf.profiler.experimental.ProfilerOptions(python_tracer_level=1, host_tracer_level=2)) and mark steps with tf.profiler.experimental.Trace(\"train\", step_num=step, _r=1) to see what that thread does."
	}
	return "Profile with Python stacks or more activities (with_stack=True, record_shapes, user annotations around data loading and logging) to see what that thread does."
}

// The advice for a program that shows no framework and no Python, plain
// CUDA (C, C++, Fortran): in the CUDA API's terms, with no framework's.
const (
	nativeSyncFix     = "Take the blocking calls off the critical path: queue the next kernels before the host waits, replace cudaMemcpy and cudaDeviceSynchronize with cudaMemcpyAsync from or to pinned host memory (cudaMallocHost, cudaHostRegister) on a non-default stream, and wait on an event (cudaEventSynchronize) only where the host needs the data."
	nativeDispatchFix = "Cut per-launch host overhead: capture the repeated sequence of kernels in a CUDA graph (cudaStreamBeginCapture, cudaGraphInstantiate, cudaGraphLaunch), fuse small kernels into larger ones, and keep host-side work between launches off the critical path."
)

// nvtxHow says how a program of framework f (with Python frames in its
// trace or not) puts NVTX ranges around its code: PyTorch's own, the C
// API for plain CUDA, the nvtx package for other Python.
func nvtxHow(f analyze.Framework, frames bool) string {
	switch {
	case f == analyze.PyTorch || f == analyze.VLLM:
		return "with torch.cuda.nvtx.range(\"load\")"
	case f == analyze.UnknownFramework && !frames:
		return "nvtxRangePushA and nvtxRangePop"
	}
	return "with nvtx.annotate(\"load\") from the nvtx package"
}

// native reports whether the trace shows a program with no framework and
// no Python frames: plain CUDA, whose advice names CUDA's API.
func (a *adviser) native() bool {
	return a.r.Framework == analyze.UnknownFramework && !a.f.HasFrames
}

// nsightFormat is the format name of Nsight Systems exports.
const nsightFormat = "nsight"

// nsight reports whether the trace is an Nsight Systems export: how to
// record more is said in nsys's options.
func (a *adviser) nsight() bool { return a.r.Source.Format == nsightFormat }

// loaderKind returns the kind of the input pipeline the idle was spent in
// (analyze.LoaderKindOf its name), or without one, the framework's own: tf.data for
// TensorFlow.
func (a *adviser) loaderKind() string {
	if a.f.InputName != "" {
		return analyze.LoaderKindOf(a.f.InputName)
	}
	if a.r.Framework == analyze.TensorFlow {
		return analyze.LoaderTFData
	}
	return analyze.LoaderAny
}
