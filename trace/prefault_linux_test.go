package trace

import (
	"testing"
	"time"
)

// tooSlow stops huge pages past a microsecond a KB: a 4 MB populate takes
// about a millisecond when the kernel has huge pages free, and far longer
// when it must compact memory to make them.
func TestTooSlow(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		d    time.Duration
		n    int
		want bool
	}{
		{time.Millisecond, 4 * mb, false},
		{4096 * time.Microsecond, 4 * mb, false},
		{4097 * time.Microsecond, 4 * mb, true},
		{50 * time.Millisecond, 4 * mb, true},
		{time.Millisecond, 2 * mb, false},
		{3 * time.Millisecond, 2 * mb, true},
	} {
		if got := tooSlow(tc.d, tc.n); got != tc.want {
			t.Errorf("tooSlow(%v, %d) = %v, want %v", tc.d, tc.n, got, tc.want)
		}
	}
}
