package analyze

import (
	"fmt"
	"math"
)

// formatDuration writes ns for people, with three significant figures and
// a unit that fits: "850 ns", "12.4 us", "48.2 ms", "3.20 s".
func formatDuration(ns int64) string {
	v := float64(ns)
	abs := math.Abs(v)
	switch {
	case abs < 999.5:
		return fmt.Sprintf("%d ns", ns)
	case abs < 999_500:
		return sig3(v/1e3) + " us"
	case abs < 999_500_000:
		return sig3(v/1e6) + " ms"
	}
	return sig3(v/1e9) + " s"
}

func sig3(v float64) string {
	switch a := math.Abs(v); {
	case a >= 99.95:
		return fmt.Sprintf("%.0f", v)
	case a >= 9.995:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
