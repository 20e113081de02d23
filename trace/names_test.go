package trace

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutName cuts at a UTF-8 boundary, to at most the bound, and leaves
// a cut name as it is.
func TestCutName(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		cut      bool
	}{
		{"short", "short", false},
		{"exactly10!", "exactly10!", false},
		{"abcdefghijk", "abcdefg…", true},
		{"abcdeféééé", "abcdef…", true}, // é is 2 bytes: not split
		{"abcdefg…", "abcdefg…", false},
	} {
		got, cut := cutName(tc.in, 10)
		if got != tc.want || cut != tc.cut || !utf8.ValidString(got) {
			t.Errorf("cutName(%q, 10) = %q, %v; want %q, %v", tc.in, got, cut, tc.want, tc.cut)
		}
	}
}

// TestBuilderCutsTracks gives Track a track of 1 MB names, as the XPlane
// reader would: they are cut to MaxTrackName, with one warning.
func TestBuilderCutsTracks(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	b := NewBuilder()
	b.Track("1", Track{Kind: TrackDevice, Device: long, Process: long, Thread: long, Name: long})
	b.Track("2", Track{Kind: TrackHost, Thread: "main", Name: "main"})
	tr := b.Finish()
	k := tr.Tracks[0]
	for _, s := range []string{k.Device, k.Process, k.Thread, k.Name} {
		if len(s) != MaxTrackName || !strings.HasSuffix(s, cutMark) {
			t.Errorf("name of %d bytes, want %d ending in %s", len(s), MaxTrackName, cutMark)
		}
	}
	if tr.Tracks[1].Name != "main" {
		t.Errorf("short name %q changed", tr.Tracks[1].Name)
	}
	want := `cut 4 track names over 4096 bytes, ending them with "…"`
	if len(tr.Warnings) != 1 || tr.Warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", tr.Warnings, want)
	}
}
