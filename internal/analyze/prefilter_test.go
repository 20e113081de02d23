package analyze

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// TestLiteralsOf: the literals a pattern's matches must hold, at the
// start where the pattern is anchored there; none where a branch needs no
// literal or the pattern ignores case.
func TestLiteralsOf(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []lit
	}{
		{`cudaStreamSynchronize`, []lit{{s: "cudaStreamSynchronize"}}},
		{`^aten::item$`, []lit{{s: "aten::item", prefix: true}}},
		{`^(cuda|hip)Free$`, []lit{{s: "Free"}}},
		{`enumerate\(DataLoader\)#.*__next__`, []lit{{s: "enumerate(DataLoader)#"}}},
		{`^PjitFunction\(|^jit_\w+`, []lit{{s: "PjitFunction(", prefix: true}, {s: "jit_", prefix: true}}},
		{`block_until_ready|BlockHostUntilReady`, []lit{{s: "block_until_ready"}, {s: "BlockHostUntilReady"}}},
		{`(?i)^train`, nil},
		{`^\d+$`, nil},
		{`a|\d+`, nil},
		{`x*`, nil},
	} {
		if got := literalsOf(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("literalsOf(%q) = %+v, want %+v", tt.expr, got, tt.want)
		}
	}
}

// TestPrefilterAgrees: on every name of the shared traces and on crafted
// ones, each built-in pattern matches through its filter exactly as it
// does alone.
func TestPrefilterAgrees(t *testing.T) {
	b := builtin()
	var res []matcher
	for _, set := range [][]matcher{b.sync, b.asyncCopy, b.input, b.runtime, b.dispatch, b.background, frameworkRegexps()} {
		res = append(res, set...)
	}
	names := []string{"", "aten::item", "xaten::item", "cudaFree", "hipFree", "PjitFunction(f)", "jit_train_step(1)",
		"api.py:3154 block_until_ready", "np.asarray(jax.Array)", strings.Repeat("a", 300) + "cudaStreamSynchronize"}
	dir := realtraces.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.*"))
	for _, f := range files {
		if tr, err := trace.Open(f, trace.Options{}); err == nil {
			names = append(names, tr.Strings...)
		}
	}
	if _, err := os.Stat(dir); err == nil && len(names) < 1000 {
		t.Fatalf("%d names from the shared traces: too few to tell", len(names))
	}
	for _, re := range res {
		for _, s := range names {
			if got, want := re.match(s), re.re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v through the filter, %v alone", re.re, s, got, want)
			}
		}
	}
}

// FuzzPrefilter: no name matches a built-in pattern through its filter
// otherwise than alone.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{"aten::item", "cudaFree", "PjitFunction(f)", "api.py:3154 block_until_ready", "enumerate(DataLoader)#x.__next__"} {
		f.Add(s)
	}
	b := builtin()
	var res []matcher
	for _, set := range [][]matcher{b.sync, b.asyncCopy, b.input, b.runtime, b.dispatch, b.background, frameworkRegexps()} {
		res = append(res, set...)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, re := range res {
			if got, want := re.match(s), re.re.MatchString(s); got != want {
				t.Errorf("%q on %q: %v through the filter, %v alone", re.re, s, got, want)
			}
		}
	})
}
