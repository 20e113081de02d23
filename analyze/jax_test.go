package analyze

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// TestJAXRealTraces checks that the shared JAX traces are explained on the
// loop thread: the first long gap of the conv benchmark is its first
// call's buffer allocation on the execute threads, the later ones
// block_until_ready; the TPU inference's long gaps are np.asarray reads,
// compilation, program loading and DefragmentMemory, with the stretches
// of untraced Python between them left untraced.
func TestJAXRealTraces(t *testing.T) {
	dir := realtraces.Dir(t)
	tests := []struct {
		file   string
		thread string
		// first and last are the causes of the longest gap starting
		// before and after split (ns).
		split       int64
		first, last Cause
		// culprits are the names the tally holds for a cause.
		culprits map[Cause]string
		// untraced is the most untraced idle allowed, as a share.
		untraced float64
	}{
		{
			file: "tracelens-jax-conv-block-until-ready.xplane.pb", thread: "python",
			split: 50 * msec, first: Runtime, last: InSync,
			culprits: map[Cause]string{Runtime: "Build buffer allocations", InSync: "api.py:3154 block_until_ready"},
			untraced: 0.01,
		},
		{
			file: "xprof-tpu-inference.xplane.pb", thread: "main/3116817",
			split: 7000 * msec, first: InSync, last: Runtime,
			culprits: map[Cause]string{Runtime: "TfrtTpuClient::DefragmentMemory", InSync: "np.asarray(jax.Array)"},
			untraced: 0.07,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, tt.file), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			x, err := New(tr, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			res := x.Result()
			if res.Framework != JAX {
				t.Errorf("framework %q, want JAX", res.Framework)
			}
			var first, last *Gap
			for i := range res.Gaps {
				g := &res.Gaps[i]
				if g.Thread != tt.thread {
					t.Fatalf("gap at %d waits on %s, want the loop thread %s", g.Start, g.Thread, tt.thread)
				}
				p := &last
				if g.Start < tt.split {
					p = &first
				}
				if *p == nil || g.Dur > (*p).Dur {
					*p = g
				}
			}
			if first == nil || first.Cause != tt.first {
				t.Errorf("longest gap before %d: %+v, want cause %s", tt.split, first, tt.first)
			}
			if last == nil || last.Cause != tt.last {
				t.Errorf("longest gap after %d: %+v, want cause %s", tt.split, last, tt.last)
			}
			for c, name := range tt.culprits {
				if got := x.a.top(x.a.tally.names[c], 1); len(got) == 0 || got[0] != name {
					t.Errorf("%s idle mostly in %q, want %q", c, got, name)
				}
			}
			for _, f := range res.Findings {
				for _, torch := range []string{"pin_memory", "CUDA graphs", ".item()", "with_stack", "DataLoader", "torch"} {
					if strings.Contains(f.Message+f.Fix, torch) {
						t.Errorf("%s finding on a JAX trace gives PyTorch advice (%q): %s", f.ID, torch, f.Fix)
					}
				}
			}
			if u := float64(res.Idle.Of(Untraced)) / float64(res.Window.Dur()); u > tt.untraced {
				t.Errorf("untraced %.1f%% of the window, want at most %.1f%%", 100*u, 100*tt.untraced)
			}
		})
	}
}

// TestJAXNames checks the pattern table on the names JAX, grain and
// MaxText write, as the XPlane reader gives them (Python frames without
// their "$"), and on names that look alike but are not.
func TestJAXNames(t *testing.T) {
	tests := []struct {
		name string
		want class
	}{
		{"api.py:3154 block_until_ready", classSync},
		{"array.py:641 __array__", classSync},
		{"array.py:652 _value", classSync},
		{"array.py:1226 _array_shard_arg", classNone},
		{"np.asarray(jax.Array)", classSync},
		{"data_loader.py:480 __next__", classInput},
		{"process_prefetch.py:212 __next__", classInput},
		{"multihost_dataloading.py:118 __next__", classInput},
		{"Iterator::Prefetch", classInput},
		{"backend_compile", classRuntime},
		{"pxla.py:2213 lower_sharding_computation", classRuntime},
		{"TfrtTpuClient::DefragmentMemory", classRuntime},
		{"LoadProgram", classRuntime},
		{"PjitFunction(train_step)", classDispatch},
		{"TfrtTpuLoadedExecutable::Execute", classDispatch},
		{"Scheduled TfrtTpuLoadedExecutable::Execute", classNone},
		{"PjRtStreamExecutorLoadedExecutable::ExecuteHelper", classNone},
	}
	names := make([]string, len(tests))
	for i, tt := range tests {
		names[i] = tt.name
	}
	opt := DefaultOptions()
	c, err := newClassifier(&trace.Trace{Strings: names}, &opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if got := c.of(trace.StrID(i)); got != tt.want {
			t.Errorf("%q: class %d, want %d", tt.name, got, tt.want)
		}
	}
}
