package analyze

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tracegap/tracegap/trace"
)

// class is what a host event's name says about the thread inside it.
type class uint8

const (
	classNone class = iota // ordinary host work
	// classSync is a call that blocks the host until the device is done.
	classSync
	// classAsyncCopy is an asynchronous copy call: it blocks only when its
	// device copy is from or to pageable memory, or device to host.
	classAsyncCopy
	// classInput is the input pipeline.
	classInput
	// classRuntime is runtime work that holds the device back while the
	// host does it: compilation, device memory allocation,
	// defragmentation, autotuning.
	classRuntime
	// classDispatch is a JAX program handing a compiled function to the
	// runtime: the loop thread is in it while its work is queued, or while
	// the runtime threads prepare it (see jax.go).
	classDispatch

	// unclassified marks a name not classified yet (see classifier.of).
	unclassified class = 0xff
)

// The built-in name tables. Every pattern is a regular expression matched
// against the whole event name (unanchored, so a pattern can match a part
// of a long Python frame name). They are the one place where the analysis
// knows event names; Options.SyncPatterns and Options.InputPatterns extend
// them.
var (
	syncPatterns = []string{
		// CUDA and HIP runtime, and the CUDA driver API.
		`^(cuda|hip)(Device|Stream|Event|Ctx)Synchronize$`,
		`^cu(Ctx|Stream|Event)Synchronize$`,
		// Synchronous copies: cudaMemcpy, cudaMemcpy2D, cudaMemcpyToSymbol,
		// hipMemcpyDtoH, hipMemcpyWithStream, cuMemcpyDtoH_v2, ...
		`^(cuda|hip)Memcpy(2D|3D)?(ToSymbol|FromSymbol|DtoH|HtoD|DtoD|WithStream)?$`,
		`^cuMemcpy(DtoH|HtoD|DtoD)?(_v2)?$`,
		// PyTorch ops that read a device scalar back.
		`^aten::(item|_local_scalar_dense)$`,
		// JAX, PJRT, StreamExecutor and TPU runtime.
		`block_until_ready`,
		`BlockHostUntil(Ready|Done)`,
		`ToLiteral`,
		`TransferFromDevice`,
		`TransferLiteralFromDevice`,
		`TransferFromOutfeed`,
		// JAX reading a device array back: np.asarray(jax.Array) on TPU,
		// jax.device_get, and the Python frames of jax.Array's conversions
		// (np.asarray, float(loss), print(loss), loss.item()).
		`^np\.asarray\(jax\.Array\)$`,
		`device_get`,
		`^array\.py:\d+ (__array__|_value|__float__|__int__|__bool__|__index__|item|tolist)$`,
	}
	asyncCopyPatterns = []string{
		`^(cuda|hip)Memcpy(Peer)?(2D|3D)?(HtoD|DtoH|DtoD)?Async$`,
		`^cuMemcpy(DtoH|HtoD|DtoD)?Async(_v2)?$`,
	}
	runtimePatterns = []string{
		// JAX and XLA compilation, and loading a compiled program.
		`backend_compile`,
		`Compiler::Compile$`,
		`(Client|Executable)::Compile$`,
		`^XlaCompile`,
		// JAX's tracing and lowering before a compilation: a call that
		// misses the compilation cache (new shapes, new static
		// arguments) retraces and lowers before backend_compile.
		`lower_sharding_computation`,
		`^pxla\.py:\d+ (lower_sharding_computation|_cached_compilation|compile_or_get_cached)$`,
		`^compiler\.py:\d+ (compile_or_get_cached|backend_compile)$`,
		`^(pjit|partial_eval)\.py:\d+ (_pjit_lower|trace_to_jaxpr\w*|_create_pjit_jaxpr)$`,
		`LoadProgramCacheMiss`,
		`[Aa]utotun`,
		// Compiling CUDA code at run time (JIT): NVRTC, nvJitLink and the
		// driver's linker, and the NVTX ranges JIT compilers put around
		// them (nvFuser's KernelExecutor::compileFusion,
		// executor_utils::NVRTC).
		`(?i:nvrtc)`,
		`^nvJitLink`,
		`^cuLink(Create|AddData|AddFile|Complete)`,
		`compileFusion`,
		// Device memory allocation and defragmentation.
		`Build buffer allocations`,
		`DeviceMemAllocator::Alloc`,
		`DefragmentMemory`,
		`^(cuda|hip)Malloc(Async|Managed|Host)?$`,
		`^cuMemAlloc`,
		// Freeing device memory synchronizes the device (the caching
		// allocator frees only when it runs short, or on empty_cache), and
		// pinned host allocation maps memory for the device.
		`^(cuda|hip)Free(Async|Host)?$`,
		`^cuMemFree`,
		`^(cuda|hip)HostAlloc$`,
		`^hipHostMalloc$`,
		`^cuMemHostAlloc`,
		// Loading kernel code onto the device: on a kernel's first launch
		// under lazy loading (CUDA_MODULE_LOADING=LAZY, the default since
		// CUDA 12.2), or explicitly.
		`^cuModuleLoad`,
		`^cuLibraryLoad`,
		`^hipModuleLoad`,
		// The TPU runtime loading a compiled program onto the device
		// before its first run.
		`^LoadProgram$`,
	}
	// dispatchPatterns name a JAX program's dispatch of a compiled
	// function on its loop thread, the thread with most of them: the jitted
	// call and the PjRt execute inside it (GPU and TPU). The execute
	// threads' own events (ExecuteHelper, "Scheduled ...::Execute") are
	// not dispatch.
	dispatchPatterns = []string{
		`^PjitFunction\(`,
		`^PJRT_LoadedExecutable_Execute$`,
		`^\w+LoadedExecutable::Execute$`,
		`^ExecuteReplicated`,
	}
	// backgroundLoaderPatterns name input events that show the loader
	// running in worker processes or threads: the loop only takes ready
	// batches from a queue.
	backgroundLoaderPatterns = []string{
		`_MultiProcessingDataLoaderIter`,
		`process_prefetch`,
		`IteratorGetNext`,
		// grain's annotation of its thread-prefetch iterator's __next__
		// (a wait on the queue its thread fills).
		`^ThreadPrefetchDatasetIterator\.__next__$`,
	}
	inputPatterns = slices.Concat([]string{
		// PyTorch: the profiler's DataLoader and DataPipe records, and the
		// loader's Python frames (python_function events).
		`^enumerate\((DataLoader|DataPipe)\)#`,
		`DataLoaderIter`,
		`dataloader\.py\(\d+\): __next__`,
		// tf.data and grain.
		`IteratorGetNext`,
		`^Iterator::`,
		`grain.*__next__`,
		// MaxText's multihost iterator.
		`^multihost_dataloading\.py:\d+ `,
		// grain's sources, by the annotation grain writes around a
		// source's __getitem__ for XProf's input-pipeline analysis
		// (stats.py, trace_input_pipeline).
		`^(SourceMapDataset|RangeMapDataset|\w+DataSource)\.__getitem__$`,
		// Annotations a training loop puts around input: "## data_load ##",
		// TorchRec's "## load_batch ##", "## wait_for_batch ##" and
		// "## sparse_data_dist ##" (the pipeline's distribution of a
		// batch's sparse features, input work on the critical path).
		`^##\s*(data_?load\w*|load_batch|wait_for_batch|sparse_data_dist|input\w*|get_batch|next_batch)\s*##$`,
	}, grainNames)
)

// The names the analysis asks about one at a time, outside the tables
// above: what a launch, an allocation op, warm-up or a dependency looks
// like.

// launchNamePattern names the calls that launch a kernel.
var launchNamePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(cuda|hip)(LaunchKernel|LaunchCooperativeKernel|ExtLaunchKernel|ModuleLaunchKernel|ExtModuleLaunchKernel)|^cuLaunch(Kernel|CooperativeKernel)`)
})

// allocNamePattern names the framework ops that only allocate.
var allocNamePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^aten::(empty|empty_strided|empty_like|new_empty|new_empty_strided)$`)
})

// warmupNamePattern names the CUDA and HIP runtime work of warm-up (see
// runtimeWarmup); allocation ops and slow launches are matched by
// allocNamePattern and launchNamePattern.
var warmupNamePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(cu|hip)(ModuleLoad|LibraryLoad)|^(cuda|hip)(Free(Async|Host)?|HostAlloc|MallocHost)$|^hipHostMalloc$|^cuMem(Free|HostAlloc)`)
})

// graphLaunchPattern names the launch of a captured CUDA or HIP graph.
var graphLaunchPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(cuda|hip|cu)GraphLaunch`)
})

// depPatterns name the calls and work that show a dependency.
var depPatterns = sync.OnceValue(func() (p struct{ wait, launch, collective *regexp.Regexp }) {
	p.wait = regexp.MustCompile(`^(cuda|hip|cu)StreamWaitEvent`)
	// Calls that queue device work, which end the look for a wait.
	p.launch = regexp.MustCompile(`^(cuda|hip|cu)(LaunchKernel|LaunchCooperativeKernel|ModuleLaunchKernel|ExtModuleLaunchKernel|Memcpy|Memset|GraphLaunch)|^cuLaunch`)
	// NCCL and RCCL kernels, and XLA's collectives.
	p.collective = regexp.MustCompile(`(?i)^(nccl|rccl)|^%?(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute|collective-broadcast)`)
	return p
})

// grainModuleFrame matches the frames of grain's generic modules that
// contextRules make input: an input event of that name is grain's.
var grainModuleFrame = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(joinPatterns(contextRules[0].input)) })

// grainNames are names only grain writes, all of them input: a trace that
// holds one runs grain (see contextRules). Of grain's Dataset API
// (MapDataset, IterDataset): the prefetch iterators' __next__
// (PrefetchDatasetIterator and ThreadPrefetchDatasetIterator,
// transformations/prefetch.py), and the annotations grain writes for
// XProf's input-pipeline analysis (stats.py: "<iterator class>.__next__"
// from trace_input_pipeline_next, "Prefetch._getitem" from
// trace_input_pipeline_prefetch). Of its DataLoader: the iterator and its
// worker processes' queue (Python tracer frames). The frames of grain's
// other transformations have generic names: see contextRules.
var grainNames = []string{
	`^prefetch\.py:\d+ __next__$`,
	`^_?[A-Z]\w*DatasetIterator\.__next__$`,
	`^Prefetch\._getitem$`,
	`^data_loader\.py:\d+ __next__$`,
	`process_prefetch`,
}

// contextRules are patterns that hold only in a trace that shows, by some
// other name, whose names they match. grain's transformations live in
// modules of generic names (map.py, batch.py) that JAX's Python tracer
// writes without their folder: their frames are grain's input only in a
// trace that runs grain. The rule: a generic module's frame is input when
// its function is one grain's classes define there (an iterator's
// __next__, a MapDataset's __getitem__) and the trace holds a name of
// grainNames.
var contextRules = []struct {
	// when holds the names of which the trace must hold one; each holds
	// one of the literals, which are looked for first (a trace's every
	// name is tested).
	when, literals    []string
	input, background []string
}{
	{
		// grain/_src/python/dataset: transformations/map.py
		// (_MapDatasetIterator.__next__, MapMapDataset.__getitem__),
		// batch.py (_BatchDatasetIterator.__next__,
		// BatchMapDataset.__getitem__), and the other transformations'
		// iterators and MapDatasets; dataset.py (MapDataset.__getitem__).
		when:     grainNames,
		literals: []string{"__next__", "_getitem", "process_prefetch"},
		input: []string{
			`^(map|batch|filter|flatmap|shuffle|interleave|mix|packing|packing_concat_then_split|rebatch|limit|zip|source|slice|repeat)\.py:\d+ (__next__|__getitem__)$`,
			`^dataset\.py:\d+ __getitem__$`,
		},
	},
	{
		// grain's prefetch threads (transformations/prefetch.py): the
		// thread of a ThreadPrefetchDatasetIterator filling its queue
		// (_put_iterator_elements_in_buffer), the thread pool of a
		// PrefetchDatasetIterator reading elements (_getitem). The loop's
		// prefetch __next__ then waits on them; without them it runs the
		// pipeline inline (num_threads=0).
		when:       []string{`^prefetch\.py:\d+ (_put_iterator_elements_in_buffer|_getitem)$`, `^Prefetch\._getitem$`},
		literals:   []string{"_put_iterator_elements_in_buffer", "_getitem"},
		background: []string{`^prefetch\.py:\d+ __next__$`, `^PrefetchDatasetIterator\.__next__$`},
	},
}

// compiledRules is contextRules compiled, once per process.
var compiledRules = sync.OnceValue(func() (res []compiledRule) {
	all := func(ps []string) []matcher {
		var out []matcher
		for _, p := range ps {
			out = append(out, mustMatcher(p))
		}
		return out
	}
	for _, r := range contextRules {
		res = append(res, compiledRule{regexp.MustCompile(joinPatterns(r.when)), r.literals, all(r.input), all(r.background)})
	}
	return res
})

// compiledRule is a context rule compiled.
type compiledRule struct {
	when              *regexp.Regexp
	literals          []string
	input, background []matcher
}

// holds reports whether the name is one of the rule's when.
func (r *compiledRule) holds(name string) bool {
	return slices.ContainsFunc(r.literals, func(l string) bool { return strings.Contains(name, l) }) && r.when.MatchString(name)
}

// withContext returns the built-in input and background patterns with
// those of the context rules that the names of t hold, and whether the
// first holds: the trace runs grain.
func withContext(t *trace.Trace, input, background []matcher) (_, _ []matcher, grain bool) {
	for i, r := range compiledRules() {
		if slices.ContainsFunc(t.Strings, r.holds) {
			input = append(slices.Clip(input), r.input...)
			background = append(slices.Clip(background), r.background...)
			grain = grain || i == 0
		}
	}
	return input, background, grain
}

// classifier classifies host event names, each distinct name once: names
// are interned, so the verdict for a StrID is cached.
type classifier struct {
	sync, asyncCopy, input, runtime, dispatch []matcher
	strings                                   []string
	cache                                     []class // per StrID; unclassified until classified
	// background answers inBackground, asked of every input event.
	background *nameMatcher
	// grain is set when the trace runs grain (see contextRules).
	grain bool
}

// compileAll appends to builtin the compiled extra patterns.
func compileAll(what string, builtin []matcher, extra []string) ([]matcher, error) {
	res := slices.Clip(builtin)
	for _, p := range extra {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("bad %s pattern %q: %w", what, p, err)
		}
		res = append(res, newMatcher(re))
	}
	return res, nil
}

// builtin holds the built-in tables compiled, once per process: compiling
// them took most of the time of analysing a small trace.
var builtin = sync.OnceValue(func() (b struct{ sync, asyncCopy, input, runtime, dispatch, background []matcher }) {
	for _, t := range []struct {
		dst *[]matcher
		src []string
	}{
		{&b.sync, syncPatterns}, {&b.asyncCopy, asyncCopyPatterns}, {&b.input, inputPatterns},
		{&b.runtime, runtimePatterns}, {&b.dispatch, dispatchPatterns}, {&b.background, backgroundLoaderPatterns},
	} {
		for _, p := range t.src {
			*t.dst = append(*t.dst, mustMatcher(p))
		}
	}
	return b
})

func newClassifier(t *trace.Trace, opt *Options) (*classifier, error) {
	c := &classifier{strings: t.Strings, cache: make([]class, len(t.Strings))}
	for i := range c.cache {
		c.cache[i] = unclassified
	}
	b := builtin()
	c.asyncCopy, c.runtime, c.dispatch = b.asyncCopy, b.runtime, b.dispatch
	input, background, grain := withContext(t, b.input, b.background)
	c.grain = grain
	c.background = newNameTest(func(name string) bool { return matchAny(background, name) }, t)
	var err error
	if c.sync, err = compileAll("sync", b.sync, opt.SyncPatterns); err != nil {
		return nil, err
	}
	if c.input, err = compileAll("input", input, opt.InputPatterns); err != nil {
		return nil, err
	}
	return c, nil
}

// of returns the class of the name id. It is asked of every host event:
// the answer known is kept short enough to be inlined.
func (c *classifier) of(id trace.StrID) class {
	if int(id) < len(c.cache) && c.cache[id] != unclassified {
		return c.cache[id]
	}
	return c.first(id)
}

// first is of for a name not classified yet.
func (c *classifier) first(id trace.StrID) class {
	if int(id) >= len(c.cache) {
		return classNone
	}
	k := c.classify(c.strings[id])
	c.cache[id] = k
	return k
}

func (c *classifier) classify(name string) class {
	switch {
	case name == "":
		return classNone
	case matchAny(c.sync, name):
		return classSync
	case matchAny(c.asyncCopy, name):
		return classAsyncCopy
	case matchAny(c.input, name):
		return classInput
	case matchAny(c.runtime, name):
		return classRuntime
	case matchAny(c.dispatch, name):
		return classDispatch
	}
	return classNone
}

// inBackground reports whether the input event name shows a loader running
// in the background (see backgroundLoaderPatterns).
func (c *classifier) inBackground(id trace.StrID) bool {
	return c.background.matches(id)
}

func matchAny(ms []matcher, s string) bool {
	for i := range ms {
		if ms[i].match(s) {
			return true
		}
	}
	return false
}

// defaultStepPattern names the host events that mark steps when a trace has
// no ProfilerStep or XPlane step markers: train, train_step,
// training_step_12, step#3, ...
const defaultStepPattern = `(?i)^(train(ing)?([_ ]?step)?|step)([#_ ]?\d+)?$`

var defaultStepRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(defaultStepPattern) })

// frameworkPatterns name events only one framework records, most specific
// first: vLLM runs on PyTorch, so its names are tried before PyTorch's.
var frameworkPatterns = []struct {
	f        Framework
	patterns []string
}{
	{VLLM, []string{`^vllm/`, `vllm::`}},
	{JAX, []string{`^PjitFunction\(`, `^np\.asarray\(jax\.Array\)$`, `^jit_\w+`}},
	{TensorFlow, []string{`^__inference_`, `^EagerExecute$`, `^EagerKernelExecute$`, `^ExecutorState::Process`, `^tf\.data`}},
	{PyTorch, []string{`^ProfilerStep#\d+$`, `^aten::`, `^autograd::engine::`, `^torch/`}},
}

var frameworkRegexps = sync.OnceValue(func() []matcher {
	res := make([]matcher, len(frameworkPatterns))
	for i, fp := range frameworkPatterns {
		res[i] = mustMatcher(joinPatterns(fp.patterns))
	}
	return res
})

// joinPatterns joins patterns, none of which is an alternation at its top,
// into one regular expression that matches where any of them does. Those
// anchored at the start share one anchor: a name that none of them starts
// is then given up at its first bytes, where "^a|^b" is tried at every
// offset of it. Every name of a trace is matched.
func joinPatterns(patterns []string) string {
	var anchored, rest []string
	for _, p := range patterns {
		if s, ok := strings.CutPrefix(p, "^"); ok {
			anchored = append(anchored, s)
		} else {
			rest = append(rest, p)
		}
	}
	if len(anchored) > 0 {
		rest = append([]string{"^(?:" + strings.Join(anchored, "|") + ")"}, rest...)
	}
	return strings.Join(rest, "|")
}
