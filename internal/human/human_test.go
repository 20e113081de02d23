package human

import (
	"math"
	"testing"
)

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		ns   int64
		want string
	}{
		{0, "0"},
		{850, "850 ns"},
		{999, "999 ns"},
		{1_000, "1.00 us"},
		{12_449, "12.4 us"},
		{850_000, "850 us"},
		{999_400, "999 us"},
		// Three figures would not hold 999.999 us: the next unit.
		{999_999, "1.00 ms"},
		{1_234_567, "1.23 ms"},
		{48_250_001, "48.3 ms"},
		{150_000_000, "150 ms"},
		{2_310_000_000, "2.31 s"},
		{125_000_000_000, "125 s"},
		{-1_500_000, "-1.50 ms"},
		{math.MinInt64, "-9223372037 s"},
	} {
		if got := Duration(tt.ns); got != tt.want {
			t.Errorf("Duration(%d) = %q, want %q", tt.ns, got, tt.want)
		}
	}
}

func TestShare(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0%", 0.284: "28.4%", 1: "100.0%", 0.00049: "0.0%", math.NaN(): "-", math.Inf(1): "-"} {
		if got := Share(v); got != want {
			t.Errorf("Share(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 812: "812 B", 12_345_678: "12.3 MB", 1_050_000_000: "1.05 GB", 999_999: "1.00 MB", 999_499: "999 kB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestOrList(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a or b"}, {[]string{"a", "b", "c"}, "a, b or c"}} {
		if got := OrList(tt.in); got != tt.want {
			t.Errorf("OrList(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		noun string
		want string
	}{{0, "step", "0 steps"}, {1, "step", "1 step"}, {2, "host event", "2 host events"}, {1, "argument", "1 argument"}} {
		if got := Count(tt.n, tt.noun); got != tt.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}

// TestPlural: a noun follows its count, a consonant's y becoming ies.
func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n          int
		noun, want string
	}{
		{0, "blocking call", "0 blocking calls"},
		{1, "blocking call", "1 blocking call"},
		{2, "blocking call", "2 blocking calls"},
		{1, "copy", "1 copy"},
		{5, "copy", "5 copies"},
		{2, "delay", "2 delays"},
		{3, "event", "3 events"},
	} {
		if got := Count(tt.n, tt.noun); got != tt.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}
