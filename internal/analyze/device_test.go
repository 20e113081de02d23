package analyze

import (
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// queuedTrace returns a trace of one host thread and a device of two
// streams. Device work is given as start, stream and launch: launch 0 is
// work without a launch (queued), launch > 0 work launched by a host call
// of that id ending at the launch value (queued when that is more than
// the slack before the work's start). Each stream also holds an instant
// and a non-work event, which are not work and never queued.
func queuedTrace(t *testing.T, work [][3]int64) *trace.Trace {
	t.Helper()
	tr := &trace.Trace{}
	for i, w := range work {
		if w[2] > 0 {
			e := trace.Event{Start: w[2] - 1, Corr: uint32(i + 1)}
			e.SetDur(1)
			tr.Events = append(tr.Events, e)
		}
	}
	// Host calls are in index order but must start in order too.
	evs := tr.Events
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].Start < evs[j-1].Start; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
	tr.Tracks = append(tr.Tracks, trace.Track{Kind: trace.TrackHost, Lo: 0, Hi: len(tr.Events)})
	for stream := int64(0); stream < 2; stream++ {
		lo := len(tr.Events)
		var evs []trace.Event
		for i, w := range work {
			if w[1] != stream {
				continue
			}
			e := trace.Event{Start: w[0], Kind: trace.KindWork}
			if w[2] > 0 {
				e.Corr = uint32(i + 1)
			}
			e.SetDur(1)
			evs = append(evs, e)
		}
		evs = append(evs, trace.Event{Start: 4, Kind: trace.KindWork}, trace.Event{Start: 9, Kind: trace.KindOverlay})
		evs[len(evs)-1].SetDur(3)
		for i := 1; i < len(evs); i++ {
			for j := i; j > 0 && evs[j].Start < evs[j-1].Start; j-- {
				evs[j], evs[j-1] = evs[j-1], evs[j]
			}
		}
		tr.Events = append(tr.Events, evs...)
		tr.Tracks = append(tr.Tracks, trace.Track{Kind: trace.TrackDevice, Device: "GPU:0", Lo: lo, Hi: len(tr.Events)})
	}
	return tr
}

// TestQueuedIn checks queuedIn, which keeps only the runs of queued work,
// against its definition: some queued work starts inside the window. The
// work has equal starts on both streams, queued on one and not on the
// other, runs that start or end on such a tie, and a run whose work starts
// far apart (18 and 22: nothing queued starts in between).
func TestQueuedIn(t *testing.T) {
	const slack = 2
	work := [][3]int64{ // start, stream, launch end
		{1, 0, 0}, {2, 0, 2}, {3, 1, 0}, {5, 0, 1}, {5, 1, 5},
		{7, 0, 7}, {7, 1, 1}, {8, 0, 2}, {10, 1, 2}, {10, 0, 10},
		{12, 0, 12}, {13, 1, 13}, {15, 0, 0}, {15, 1, 15}, {18, 1, 3}, {22, 0, 0},
	}
	tr := queuedTrace(t, work)
	a := &analyzer{t: tr, opt: DefaultOptions(), loop: -1, wholeStep: -1}
	a.opt.SyncSlack = slack
	a.links = buildLinks(tr)
	a.devs = a.findDevices()
	if len(a.devs) != 1 {
		t.Fatalf("%d devices, want 1", len(a.devs))
	}
	d := a.devs[0]
	a.scanDevice(d)
	var queued []int64
	for _, w := range work {
		if w[2] == 0 || w[0]-w[2] > slack {
			queued = append(queued, w[0])
		}
	}
	for from := int64(0); from <= 24; from++ {
		for to := from + 1; to <= 25; to++ {
			want := false
			for _, s := range queued {
				want = want || from <= s && s < to
			}
			if got := a.queuedIn(d, Interval{from, to}); got != want {
				t.Errorf("queuedIn([%d, %d)) = %v, want %v (runs %v)", from, to, got, want, d.queued)
			}
		}
	}
}
