package trace

import (
	"fmt"
	"unicode/utf8"
)

// MaxTrackName and MaxEventName bound the names a trace's tracks and
// events take into the model, in bytes. Thread, process and device names
// in real profiles are tens of bytes (the longest in the test traces is
// 56), and a track's name is copied into every gap, step and report line
// that names it: a 4 MB thread name made `tracegap gaps` write gigabytes.
// Event names are interned once, but are longer in real profiles: mangled
// C++ template kernels and XLA fusions run to a few KB (1.8 KB in the test
// traces, tens of KB seen in the wild), and a Python frame carries its
// file path. Longer names are cut to the bound, ending with cutMark, and
// Finish warns once.
const (
	MaxTrackName = 4 << 10
	MaxEventName = 64 << 10
)

// cutMark ends a name that was cut.
const cutMark = "…"

// cutName returns s cut to at most max bytes, ending in cutMark, at a
// UTF-8 boundary, and whether it was cut. A name so cut is not cut again.
func cutName(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := max - len(cutMark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + cutMark, true
}

// TrackName returns s, a thread, process or device name, cut to
// MaxTrackName; a reader passes names that reach a track through it, and
// Track passes a Track's own.
func (b *Builder) TrackName(s string) string {
	s, cut := cutName(s, MaxTrackName)
	if cut {
		b.cutTracks++
	}
	return s
}

// InternFrom interns the string id of o, another builder's table (a piece
// read in parallel), into b, counting it as cut if o cut it.
func (b *Builder) InternFrom(o *Builder, id StrID) StrID {
	k := b.Intern(o.strings[id])
	if o.cutEvents[id] {
		b.markCut(k)
	}
	return k
}

// markCut counts the event name id as cut.
func (b *Builder) markCut(id StrID) {
	if b.cutEvents == nil {
		b.cutEvents = map[StrID]bool{}
	}
	b.cutEvents[id] = true
}

// cutWarning returns the warning for the names cut, or "".
func (b *Builder) cutWarning() string {
	switch t, e := b.cutTracks, len(b.cutEvents); {
	case t > 0 && e > 0:
		return fmt.Sprintf("cut %d track names over %d bytes and %d event names over %d bytes, ending them with %q", t, MaxTrackName, e, MaxEventName, cutMark)
	case t > 0:
		return fmt.Sprintf("cut %d track names over %d bytes, ending them with %q", t, MaxTrackName, cutMark)
	case e > 0:
		return fmt.Sprintf("cut %d event names over %d bytes, ending them with %q", e, MaxEventName, cutMark)
	}
	return ""
}
