package trackname

import (
	"slices"
	"testing"
)

func TestCompareDevice(t *testing.T) {
	ids := []string{"TPU:0", "GPU:10", "GPU:x", "GPU:2", "GPU", "GPU:1"}
	slices.SortFunc(ids, CompareDevice)
	want := []string{"GPU", "GPU:1", "GPU:2", "GPU:10", "GPU:x", "TPU:0"} // "GPU:x" is a kind of its own
	if !slices.Equal(ids, want) {
		t.Errorf("sorted = %q, want %q", ids, want)
	}
}
