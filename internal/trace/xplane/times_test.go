package xplane

import (
	"math"
	"math/big"
	"testing"
)

// wantTimes is eventTimes worked out in exact arithmetic, as its doc says:
// the start is the timestamp plus the offset rounded down to nanoseconds,
// the duration the rounded-down end less the rounded-down start, the end
// being the offset's remainder plus the duration in picoseconds; times
// that are negative or pass MaxInt64 are refused, as are durations within
// 1000 of it.
func wantTimes(ts, offPs, durPs int64) (start, dur int64, ok bool) {
	if ts < 0 || offPs < 0 || durPs < 0 || durPs > math.MaxInt64-1000 {
		return 0, 0, false
	}
	k := big.NewInt(1000)
	q, r := new(big.Int).QuoRem(big.NewInt(offPs), k, new(big.Int))
	s := new(big.Int).Add(big.NewInt(ts), q)
	d := new(big.Int).Quo(new(big.Int).Add(r, big.NewInt(durPs)), k)
	end := new(big.Int).Add(s, d)
	if !s.IsInt64() || !end.IsInt64() {
		return 0, 0, false
	}
	return s.Int64(), d.Int64(), true
}

func checkTimes(t *testing.T, ts, off, dur int64) {
	t.Helper()
	s, d, ok := eventTimes(ts, off, dur)
	ws, wd, wok := wantTimes(ts, off, dur)
	if s != ws || d != wd || ok != wok {
		t.Errorf("eventTimes(%d, %d, %d) = %d, %d, %v; want %d, %d, %v", ts, off, dur, s, d, ok, ws, wd, wok)
	}
}

// eventTimes agrees with exact arithmetic on the edges of its rounding
// (0, 999, 1000, 1001 picoseconds) and of its range (near MaxInt64).
func TestEventTimes(t *testing.T) {
	const m = math.MaxInt64
	edges := []int64{0, 1, 999, 1000, 1001, 1999, 2000, 1e12 + 999, m/1000*1000 - 1, m - 1001, m - 1000, m - 999, m - 1, m, -1, math.MinInt64}
	for _, ts := range []int64{0, 1, 1_700_000_000_000_000_000, m / 1000, m - m/1000, m - m/1000 - 1, m - 1, m, -1} {
		for _, off := range edges {
			for _, dur := range edges {
				checkTimes(t, ts, off, dur)
			}
		}
	}
}

func FuzzEventTimes(f *testing.F) {
	f.Add(int64(0), int64(999), int64(1))
	f.Add(int64(math.MaxInt64/1000), int64(math.MaxInt64), int64(math.MaxInt64-1000))
	f.Fuzz(checkTimes)
}
