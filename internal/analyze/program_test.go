package analyze

import (
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// TestLastProgram: of the given tracks' runs, the program whose work
// reaches furthest up to the time asked is the one waited on; a run of a
// program without lines (-1) hides an earlier one; other tracks' runs and
// runs starting at or after the time do not count.
func TestLastProgram(t *testing.T) {
	runs := []trace.ProgramRun{
		{Track: 0, Program: 0, Start: 0, End: 100},
		{Track: 0, Program: 1, Start: 200, End: 300},
		{Track: 1, Program: 2, Start: 50, End: 250},
		{Track: 1, Program: -1, Start: 260, End: 280},
		{Track: 2, Program: 3, Start: 0, End: 1000},
	}
	for _, c := range []struct {
		tracks []int32
		at     int64
		want   int
	}{
		{[]int32{0}, 0, -1},
		{[]int32{0}, 150, 0},
		{[]int32{0}, 200, 0},
		{[]int32{0}, 350, 1},
		{[]int32{0, 1}, 150, 2}, // track 1's run reaches 150, track 0's 100
		{[]int32{0, 1}, 255, 1}, // track 0 runs program 1 at 255; track 1 stopped at 250
		{[]int32{0, 1}, 400, 1}, // 300 against 280
		{[]int32{1}, 400, -1},   // a program without lines ran last
		{[]int32{3}, 400, -1},   // a track without runs
		{[]int32{2, 0}, 500, 3}, // a run over the time reaches it
	} {
		if got := lastProgram(runs, c.tracks, c.at); got != c.want {
			t.Errorf("lastProgram(%v, %d) = %d, want %d", c.tracks, c.at, got, c.want)
		}
	}
}
