package analyze

import (
	"math"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// linkTrace returns a trace whose host tracks hold events with the given
// correlation ids (0: none), one track per slice, and a device track.
func linkTrace(t *testing.T, tracks ...[]uint64) *trace.Trace {
	t.Helper()
	tr := &trace.Trace{}
	for _, corrs := range tracks {
		lo := len(tr.Events)
		for i, c := range corrs {
			tr.Events = append(tr.Events, trace.Event{Start: int64(i), Dur: 1, Corr: c})
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
func firstLaunch(tr *trace.Trace, corr uint64) int32 {
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
	spread := []uint64{5, 1 << 40, 3 << 40, 5, 1<<63 + 7}
	tests := []struct {
		name   string
		tracks [][]uint64
		dense  bool
		probe  []uint64
	}{
		{"none", [][]uint64{{0, 0}}, false, []uint64{0, 1, 2}},
		{"dense", [][]uint64{{10, 0, 11, 12}, {13, 11, 14}}, true, []uint64{0, 1, 9, 10, 11, 12, 13, 14, 15, 1 << 63}},
		{"dense with shared ids", [][]uint64{{7, 7, 8}, {8, 7}}, true, []uint64{6, 7, 8, 9}},
		{"spread", [][]uint64{spread, {1 << 40}}, false, append(spread, 0, 4, 6, 1<<40+1, 1<<64-1)},
		{"one id", [][]uint64{{1<<64 - 1}}, true, []uint64{1<<64 - 2, 1<<64 - 1, 0, 1}},
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
					for _, c := range []uint64{tt.probe[k], tt.probe[len(tt.probe)-1-k]} {
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
	ids := launchIDs{lo: math.MaxUint64}
	forEachLaunch(t, func(corr uint64, _ int32) { ids.add(corr) })
	return newLinks(t, ids)
}
