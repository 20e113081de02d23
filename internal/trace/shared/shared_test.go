package shared

import (
	"os"
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

func TestIsGzip(t *testing.T) {
	for _, tt := range []struct {
		head string
		want bool
	}{
		{"\x1f\x8b\x08", true},
		{"\x1f\x8b", true},
		{"\x1f", false},
		{"", false},
		{"{\"traceEvents\"", false},
	} {
		if got := IsGzip([]byte(tt.head)); got != tt.want {
			t.Errorf("IsGzip(%q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

func TestFileError(t *testing.T) {
	_, err := os.Open("/nonexistent/dir/x.json")
	if got, want := FileError("x.json", err).Error(), "x.json: no such file or directory"; got != want {
		t.Errorf("FileError = %q, want %q", got, want)
	}
}
