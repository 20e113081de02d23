package analyze

import (
	"strings"
	"testing"
)

// frameworkWords are words only one framework's advice uses. vLLM runs on
// PyTorch, so PyTorch's words are not foreign to it; tf.data is left out,
// as JAX programs load with it too.
var frameworkWords = map[Framework][]string{
	PyTorch:    {"pin_memory", ".item()", "with_stack", "DataLoader", "torch"},
	JAX:        {"jax", "lax.", "block_until_ready", "grain", "static_argnums", "MaxText"},
	TensorFlow: {"tf.function", "Keras", "tf.summary", "tf.profiler"},
	VLLM:       {"vLLM", "enforce_eager"},
}

// foreignWords returns the words a fix for f must not use: every other
// framework's, and CUDA graphs where the framework has none of its own.
func foreignWords(f Framework) []string {
	if f == UnknownFramework {
		return nil
	}
	var ws []string
	for g, words := range frameworkWords {
		if g != f && (f != VLLM || g != PyTorch) {
			ws = append(ws, words...)
		}
	}
	if f == JAX || f == TensorFlow {
		ws = append(ws, "CUDA graph")
	}
	return ws
}

// checkForeignAdvice fails when a finding of res gives another framework's
// advice.
func checkForeignAdvice(t *testing.T, res *Result) {
	t.Helper()
	foreign := foreignWords(res.Framework)
	if res.Framework == UnknownFramework && !res.Facts.HasFrames {
		// Plain CUDA (no framework, no Python): no framework's words.
		for _, ws := range frameworkWords {
			foreign = append(foreign, ws...)
		}
	}
	for _, f := range res.Findings {
		for _, w := range foreign {
			if strings.Contains(f.Message+" "+f.Fix, w) {
				t.Errorf("%s finding on a %s trace gives another framework's advice (%q): %s", f.ID, res.Framework, w, f.Fix)
			}
		}
	}
	for _, w := range foreign {
		if strings.Contains(res.StackHint, w) {
			t.Errorf("the stack hint on a %s trace gives another framework's advice (%q): %s", res.Framework, w, res.StackHint)
		}
	}
}
