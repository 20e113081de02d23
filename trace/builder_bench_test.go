package trace

import "testing"

// BenchmarkAddTrackFinish adds about four million events, XPlane-like, as
// the XPlane reader does, and finishes them: 16 tracks, one after the
// other, each in order, added 4096 at a time.
func BenchmarkAddTrackFinish(b *testing.B) {
	const tracks, perTrack, batch = 16, 1 << 18, 4096
	src := make([]Event, perTrack)
	for i := range src {
		src[i] = withDur(Event{Start: 1e18 + int64(i)*100, Name: StrID(i % 50)}, int64(i%90))
	}
	for b.Loop() {
		bl := NewBuilder()
		bl.GrowRuns(tracks * perTrack)
		for tr := range int32(tracks) {
			bl.Track(string(rune('a'+tr)), Track{})
			for evs := src; len(evs) > 0; evs = evs[batch:] {
				bl.AddTrack(tr, evs[:batch])
			}
		}
		bl.Finish()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tracks*perTrack), "ns/event")
}
