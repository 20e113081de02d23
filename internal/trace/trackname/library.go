package trackname

import (
	"strings"
	"sync"
)

// Source files a trace names, a Python frame's or a compiled op's, are the
// user's code or a library's: the analysis names a call site by the
// user's line, and the XPlane reader keeps the user's lines of each
// program. Both ask LibraryFile, so that they draw the line alike.

// frameworkDirs are the folders whose files are never the user's code:
// the frameworks and their loaders, installed packages, and Python's own
// library.
var frameworkDirs = []string{
	"torch/", "torchvision/", "torchrec/", "fbgemm_gpu/", "jax/", "jaxlib/", "flax/", "optax/",
	"grain/", "transformers/", "tensorflow/", "keras/", "numpy/", "triton/", "accelerate/",
	"logging/", "importlib/", "concurrent/", "multiprocessing/",
	"site-packages/", "dist-packages/", "lib/python3", "lib/python2",
}

// libraryModules are the modules a JAX program calls through, by the
// basename JAX's Python tracer writes for a frame ("$api.py:3154
// block_until_ready": no folder, so frameworkDirs cannot tell them). A
// bare frame of one is never the user's line. They are the modules of the
// libraries' call paths, read from their sources: JAX (jax/_src,
// jax/_src/numpy, lax, interpreters), flax (linen, nnx), optax (_src),
// grain (_src/python, dataset, transformations), NumPy (_core, lib) and
// Python's library. Names too common for a user's file to be ruled out
// (utils.py, config.py, base.py, train.py) are left out: such a frame
// stays the user's.
var libraryModules = []struct {
	lib   string
	files []string
}{
	{"JAX", []string{
		"api.py", "api_util.py", "pjit.py", "pxla.py", "dispatch.py", "array.py", "array_methods.py",
		"basearray.py", "core.py", "lax.py", "lax_numpy.py", "ufunc_api.py", "ufuncs.py", "reductions.py",
		"indexing.py", "linear_util.py", "partial_eval.py", "ad.py", "batching.py", "mlir.py", "compiler.py",
		"xla_bridge.py", "sharding_impls.py", "named_sharding.py", "sharding.py", "tree_util.py",
		"traceback_util.py", "source_info_util.py", "dtypes.py", "profiler.py", "stages.py",
		"custom_derivatives.py", "shard_map.py", "prng.py", "util.py", "dlpack.py", "callback.py",
		"debugging.py", "compilation_cache.py", "cache_key.py", "control_flow.py", "loops.py",
		"conditionals.py", "slicing.py", "convolution.py", "einsum.py", "tensor_contractions.py",
		"array_creation.py", "array_constructors.py", "checkify.py", "layout.py", "mesh.py",
	}},
	{"flax", []string{
		"module.py", "linear.py", "normalization.py", "attention.py", "transforms.py", "scope.py",
		"graph.py", "graphlib.py", "object.py", "rnglib.py", "variablelib.py", "extract.py", "filterlib.py",
		"compilation.py", "autodiff.py", "optimizer.py",
	}},
	{"optax", []string{
		"alias.py", "transform.py", "combine.py", "update.py", "numerics.py", "clipping.py", "wrappers.py",
		"schedule.py", "linear_algebra.py", "factorized.py",
	}},
	{"grain", []string{
		"prefetch.py", "process_prefetch.py", "data_sources.py", "multiprocessing_common.py", "grain_pool.py",
		"shared_memory_array.py",
	}},
	// grain's modules of names common for a user's own files: a library's
	// only in a trace that runs grain (contextRules).
	{grainOnly, []string{
		"dataset.py", "data_loader.py", "map.py", "batch.py", "filter.py", "shuffle.py", "interleave.py",
		"packing.py", "rebatch.py", "stats.py",
	}},
	{"NumPy", []string{
		"fromnumeric.py", "numeric.py", "_methods.py", "shape_base.py", "multiarray.py", "function_base.py",
		"_asarray.py", "arrayprint.py", "_ufunc_config.py",
	}},
	{"Python", []string{
		"threading.py", "contextlib.py", "functools.py", "queue.py", "selectors.py", "abc.py", "typing.py",
		"enum.py", "weakref.py", "_weakrefset.py", "copy.py", "copyreg.py", "dataclasses.py", "inspect.py",
		"traceback.py", "warnings.py", "pickle.py", "socket.py", "queues.py", "connection.py",
		"synchronize.py", "reduction.py", "_base.py", "genericpath.py", "posixpath.py",
	}},
}

// libraryOf maps a module's basename to its library (libraryModules).
var libraryOf = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, l := range libraryModules {
		for _, f := range l.files {
			m[f] = l.lib
		}
	}
	return m
})

// grainOnly marks the modules of libraryModules that are grain's only in
// a trace that runs grain.
const grainOnly = "grain, in a trace running grain"

// LibraryFile reports whether a source file a trace names (a Python
// frame's, a compiled op's) belongs to a framework, an installed package
// or Python's library rather than to the user's code: by its folder, or,
// named bare as JAX's tracer names it, by its basename (libraryModules;
// grain's generic ones only when grain is set: the trace runs grain).
func LibraryFile(file string, grain bool) bool {
	if strings.HasPrefix(file, "<") {
		return true
	}
	for _, d := range frameworkDirs {
		if strings.HasPrefix(file, d) || strings.Contains(file, "/"+d) {
			return true
		}
	}
	// A library module is named bare ("threading.py") or, for Python's,
	// by its path under the interpreter's library.
	base := file[strings.LastIndexByte(file, '/')+1:]
	lib := libraryOf()[base]
	if lib == grainOnly && !grain {
		lib = ""
	}
	return base == file && lib != "" || lib == "Python" && strings.Contains(file, "python3")
}
