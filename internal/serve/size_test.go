package serve

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"2GiB", 2 << 30},
		{"2gib", 2 << 30},
		{"500MB", 500e6},
		{"64k", 64 << 10},
		{"1.5 MiB", 3 << 19},
		{"1048576", 1 << 20},
		{"10B", 10},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if back, err := ParseSize(FormatSize(got)); err != nil || back != got {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", got, back, err)
		}
	}
	for _, bad := range []string{"", "0", "-1k", "lots", "1e30GiB", "GiB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded, want an error", bad)
		}
	}
}
