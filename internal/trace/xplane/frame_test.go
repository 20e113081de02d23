package xplane

import "testing"

// TestIsPythonFrame checks which names lose their "$": frames of JAX's
// Python tracer only, never a name that merely starts with one.
func TestIsPythonFrame(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"$api.py:3154 block_until_ready", true},
		{"$<unknown> __exit__", true},
		{"$data_loader.py:480 __next__", true},
		{"$builtins len", true},
		{"$jaxlib.utils safe_zip", true},
		{"$5 bill", false},
		{"$jaxlib. x", false},
		{"$a-b c", false},
		{"$builtins ", false},
		{"$api.py:3154", false},
		{"api.py:3154 block_until_ready", false},
		{"$", false},
	}
	for _, tt := range tests {
		if got := isPythonFrame(tt.name); got != tt.want {
			t.Errorf("isPythonFrame(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
