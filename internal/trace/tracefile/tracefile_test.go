package tracefile

import (
	"os"
	"testing"
)

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
