package analyze

import (
	"regexp"
	"strings"
	"sync"
)

// The kinds of input pipeline and of runtime work, as names show them:
// classification only; package advice holds what each kind's fix is.

// The kinds of input pipeline, where names tell them apart; loaderKinds
// holds the names that show each.
const (
	LoaderSingleProcess = "single-process DataLoader"
	LoaderMultiProcess  = "multi-process DataLoader"
	LoaderDataPipe      = "DataPipe"
	LoaderTFData        = "tf.data pipeline"
	LoaderGrain         = "grain loader"
	// LoaderGrainDataset is the loader kind of grain's Dataset API.
	LoaderGrainDataset = "grain Dataset pipeline"
	LoaderMaxText      = "MaxText input pipeline"
	// LoaderAny is the kind of an input pipeline no row recognises.
	LoaderAny = "input pipeline"
)

// loaderKind is a kind of input pipeline: its name and the input event
// names that show it.
type loaderKind struct {
	name  string
	match func(name string) bool
}

// loaderKinds are the kinds of input pipeline, most specific first:
// LoaderKindOf names a pipeline by the first that matches.
var loaderKinds = []loaderKind{
	{LoaderSingleProcess, contains("_SingleProcessDataLoaderIter")},
	{LoaderMultiProcess, contains("_MultiProcessingDataLoaderIter")},
	{LoaderDataPipe, contains("DataPipe")},
	{LoaderTFData, func(name string) bool {
		return strings.Contains(name, "IteratorGetNext") || strings.HasPrefix(name, "Iterator::")
	}},
	{LoaderGrain, func(name string) bool {
		return strings.Contains(name, "grain") || strings.HasPrefix(name, "data_loader.py:") || strings.Contains(name, "process_prefetch")
	}},
	{LoaderGrainDataset, func(name string) bool {
		return strings.HasPrefix(name, "prefetch.py:") || strings.Contains(name, "DatasetIterator.") || strings.HasPrefix(name, "Prefetch.") ||
			grainModuleFrame().MatchString(name)
	}},
	{LoaderMaxText, func(name string) bool { return strings.HasPrefix(name, "multihost_dataloading.py:") }},
}

// contains returns a test for names holding s.
func contains(s string) func(string) bool {
	return func(name string) bool { return strings.Contains(name, s) }
}

// LoaderKindOf names the kind of input pipeline a name shows (LoaderAny
// when no row matches).
func LoaderKindOf(name string) string {
	for _, k := range loaderKinds {
		if k.match(name) {
			return k.name
		}
	}
	return LoaderAny
}

// RuntimeKind is the kind of runtime work a name shows.
type RuntimeKind int

const (
	RuntimeCompile RuntimeKind = iota
	RuntimeLoad
	RuntimeAlloc
	RuntimeDefrag
	// RuntimeWarmup is CUDA or HIP warm-up: loading kernel code (a slow
	// first launch, cuModuleLoad), freeing device memory and allocating
	// pinned host memory.
	RuntimeWarmup
	// RuntimeJIT is compiling CUDA code at run time: NVRTC, nvJitLink,
	// the driver's linker, and a JIT compiler's ranges around them
	// (nvFuser's compileFusion).
	RuntimeJIT
)

// RuntimeKindOf returns the kind of the runtime work named name (one of
// runtimePatterns): compilation unless the name shows otherwise.
func RuntimeKindOf(name string) RuntimeKind {
	switch {
	case warmupNamePattern().MatchString(name), allocNamePattern().MatchString(name), launchNamePattern().MatchString(name):
		return RuntimeWarmup
	case strings.Contains(name, "Defragment"):
		return RuntimeDefrag
	case jitNamePattern().MatchString(name):
		return RuntimeJIT
	case strings.Contains(name, "LoadProgram"):
		return RuntimeLoad
	case strings.Contains(name, "alloc"), strings.Contains(name, "Alloc"), strings.Contains(name, "Malloc"):
		return RuntimeAlloc
	}
	return RuntimeCompile
}

// runtimeIsWarmup reports whether the runtime work the idle was spent in
// most is warm-up (see RuntimeWarmup).
func (a *analyzer) runtimeIsWarmup() bool { return WarmupFirst(a.top(a.tally.names[Runtime], 1)) }

// WarmupFirst reports whether the first of names, the runtime work idle
// time was spent in, most first, is warm-up (RuntimeWarmup).
func WarmupFirst(names []string) bool {
	return len(names) > 0 && RuntimeKindOf(names[0]) == RuntimeWarmup
}

// jitNamePattern names the runtime work of compiling CUDA code at run time
// (see RuntimeJIT); runtimePatterns holds the same names.
var jitNamePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i:nvrtc)|^nvJitLink|^cuLink(Create|AddData|AddFile|Complete)|compileFusion`)
})

// commNamePattern names the host calls that wait on other processes:
// MPI (and its profiling interface PMPI), OpenSHMEM and NVSHMEM, gloo,
// NCCL's communicator set-up, and c10d's barrier. The host blocks in
// them until the other ranks answer: the idle they hold the device in is
// communication, not dispatch.
var commNamePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^P?MPI_|^(nv|open)?shmem_|^gloo(::|:)|ProcessGroupGloo|^nccl(CommInit|CommSplit|CommFinalize)|^c10d::barrier`)
})

// IsCommWait reports whether name is a host call that waits on other
// processes (see commNamePattern).
func IsCommWait(name string) bool { return commNamePattern().MatchString(name) }
