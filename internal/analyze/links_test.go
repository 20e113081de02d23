package analyze

import (
	"math"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// linkTrace returns a trace whose host tracks hold events with the given
// correlation ids (0: none), one track per slice, and a device track.
func linkTrace(t *testing.T, tracks ...[]uint32) *trace.Trace {
	t.Helper()
	tr := &trace.Trace{}
	for _, corrs := range tracks {
		lo := len(tr.Events)
		for i, c := range corrs {
			e := trace.Event{Start: int64(i), Corr: c}
			e.SetDur(1)
			tr.Events = append(tr.Events, e)
		}
		tr.Tracks = append(tr.Tracks, trace.Track{Kind: trace.TrackHost, Lo: lo, Hi: len(tr.Events)})
	}
	// Device work carries correlation ids too; they must not be taken
	// for launches.
	lo := len(tr.Events)
	tr.Events = append(tr.Events, trace.Event{Corr: 1, Kind: trace.KindWork})
	tr.Tracks = append(tr.Tracks, trace.Track{Kind: trace.TrackDevice, Lo: lo, Hi: len(tr.Events)})
	return tr
}

// firstLaunch is what links.host must return: the first host event in
// index order with the id.
func firstLaunch(tr *trace.Trace, corr uint32) int32 {
	if corr == 0 {
		return -1
	}
	for i := range tr.Tracks {
		if tr.Tracks[i].Kind != trace.TrackHost {
			continue
		}
		for j := tr.Tracks[i].Lo; j < tr.Tracks[i].Hi; j++ {
			if tr.Events[j].Corr == corr {
				return int32(j)
			}
		}
	}
	return -1
}

func TestLinksHost(t *testing.T) {
	spread := []uint32{5, 1 << 24, 3 << 24, 5, 1<<31 + 7}
	tests := []struct {
		name   string
		tracks [][]uint32
		dense  bool
		probe  []uint32
	}{
		{"none", [][]uint32{{0, 0}}, false, []uint32{0, 1, 2}},
		{"dense", [][]uint32{{10, 0, 11, 12}, {13, 11, 14}}, true, []uint32{0, 1, 9, 10, 11, 12, 13, 14, 15, 1 << 31}},
		{"dense with shared ids", [][]uint32{{7, 7, 8}, {8, 7}}, true, []uint32{6, 7, 8, 9}},
		{"spread", [][]uint32{spread, {1 << 24}}, false, append(spread, 0, 4, 6, 1<<24+1, 1<<32-1)},
		{"one id", [][]uint32{{1<<32 - 1}}, true, []uint32{1<<32 - 2, 1<<32 - 1, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := linkTrace(t, tt.tracks...)
			l := buildLinks(tr)
			if got := l.dense != nil; got != tt.dense {
				t.Errorf("dense table = %v, want %v", got, tt.dense)
			}
			// Twice, in both orders, for the sorted slice's hint.
			for range 2 {
				for k := range tt.probe {
					for _, c := range []uint32{tt.probe[k], tt.probe[len(tt.probe)-1-k]} {
						if got, want := l.host(c), firstLaunch(tr, c); got != want {
							t.Errorf("host(%d) = %d, want %d", c, got, want)
						}
					}
				}
			}
		})
	}
}

// buildLinks links the launches of t, as the analysis does in its
// scan of the host events (see hostScan), for tests and benchmarks.
func buildLinks(t *trace.Trace) *links {
	ids := launchIDs{lo: math.MaxUint32}
	forEachLaunch(t, func(corr uint32, _ int32) { ids.add(corr) })
	return newLinks(t, ids)
}
