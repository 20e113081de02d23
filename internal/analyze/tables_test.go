package analyze

import "testing"

// TestLoaderKinds: a name of each kind of input pipeline is named as that
// kind, so that no row shadows a later one, and every row has a case here.
func TestLoaderKinds(t *testing.T) {
	tests := []struct{ name, kind string }{
		{"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", LoaderSingleProcess},
		{"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", LoaderMultiProcess},
		{"enumerate(DataPipe)#ShufflerIterDataPipe", "DataPipe"},
		{"IteratorGetNext", LoaderTFData},
		{"Iterator::Model::Prefetch", LoaderTFData},
		{"grain_iterator_next", LoaderGrain},
		{"data_loader.py:120 __next__", LoaderGrain},
		{"prefetch.py:450 __next__", LoaderGrainDataset},
		{"multihost_dataloading.py:200 __next__", "MaxText input pipeline"},
		{"load_batch", LoaderAny},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if got := LoaderKindOf(tt.name); got != tt.kind {
			t.Errorf("LoaderKindOf(%q) = %q, want %q", tt.name, got, tt.kind)
		}
		seen[tt.kind] = true
	}
	for _, k := range loaderKinds {
		if !seen[k.name] {
			t.Errorf("loader kind %q has no case in this test", k.name)
		}
	}
}

// TestJITCompileIsRuntime: compiling CUDA code at run time (NVRTC, the
// CUDA linker, nvFuser's ranges around them) is runtime work of kind
// RuntimeJIT; loading code and launching stay warm-up, and other work is
// not runtime.
func TestJITCompileIsRuntime(t *testing.T) {
	tests := []struct {
		name    string
		runtime bool
		kind    RuntimeKind
	}{
		{"nvrtcCompileProgram", true, RuntimeJIT},
		{"executor_utils::NVRTC", true, RuntimeJIT},
		{"executor_utils::Nvrtc::CompileProgram", true, RuntimeJIT},
		{"KernelExecutor::compileFusion", true, RuntimeJIT},
		{"FusionKernelRuntime::compileFusionParallel", true, RuntimeJIT},
		{"nvJitLinkComplete", true, RuntimeJIT},
		{"cuLinkComplete", true, RuntimeJIT},
		{"cuLinkAddData_v2", true, RuntimeJIT},
		{"cuModuleLoadDataEx", true, RuntimeWarmup},
		{"cuLibraryLoadData", true, RuntimeWarmup},
		{"backend_compile", true, RuntimeCompile},
		{"cudaLaunchKernel", false, RuntimeWarmup},
		{"KernelExecutor::runFusion", false, RuntimeCompile},
		{"MPI_Recv", false, RuntimeCompile},
	}
	rt := builtin().runtime
	for _, tt := range tests {
		if got := matchAny(rt, tt.name); got != tt.runtime {
			t.Errorf("%q matched as runtime work: %v, want %v", tt.name, got, tt.runtime)
		}
		if got := RuntimeKindOf(tt.name); tt.runtime && got != tt.kind {
			t.Errorf("RuntimeKindOf(%q) = %d, want %d", tt.name, got, tt.kind)
		}
	}
}

// TestCommWait: host calls that wait on other processes are told from
// launches of collectives (which return at once) and from device kernels.
func TestCommWait(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"MPI_Recv", true},
		{"MPI_Send", true},
		{"MPI_Allreduce", true},
		{"PMPI_Wait", true},
		{"shmem_barrier_all", true},
		{"nvshmem_quiet", true},
		{"gloo::allreduce", true},
		{"ProcessGroupGloo::allreduce", true},
		{"ncclCommInitRank", true},
		{"c10d::barrier", true},
		{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", false},
		{"nccl:all_reduce", false},
		{"c10d::allreduce_", false},
		{"ncclAllReduce", false},
		{"cudaMemcpy", false},
		{"compute_MPI_halo", false},
	}
	for _, tt := range tests {
		if got := IsCommWait(tt.name); got != tt.want {
			t.Errorf("IsCommWait(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
