// Package trace holds the in-memory model of a profiler trace: tracks (a
// device stream or line, a host thread) and compact, pointer-free events.
//
// Readers for concrete formats register themselves with Register, as
// image/png does with image; importing trace/all registers tracegap's own
// (Chrome trace-event JSON, XPlane, Nsight Systems exports). Open sniffs a
// file's format and dispatches to the registered reader.
//
// Events are many (tens of millions for a gigabyte trace), so an Event holds
// no pointers and no strings: names are indexes into the trace's string
// table, times are int64 nanoseconds from the trace's start. The garbage
// collector never scans the event slice. An Event is 24 bytes, and holds
// only what every source has: its track is implied by where it sits (see
// Track.Lo and Track.Hi), and the category that only Chrome JSON has is
// kept beside the events (Trace.Cats).
package trace

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/trace/trackname"
)

// StrID indexes Trace.Strings. StrID 0 is always the empty string.
type StrID uint32

// Kind says what an event is to the analysis.
type Kind uint8

const (
	// KindHost is host activity: an operator, a runtime or driver call,
	// Python, a user annotation.
	KindHost Kind = iota
	// KindWork is device work: a kernel, a copy, a memset, an XLA op.
	KindWork
	// KindOverlay sits on a device track but is not work: the device mirror
	// of a step annotation, a sync marker, an event on a derived XPlane line.
	KindOverlay
)

func (k Kind) String() string {
	switch k {
	case KindHost:
		return "host"
	case KindWork:
		return "work"
	case KindOverlay:
		return "overlay"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Flag carries the few per-event facts the analysis needs beyond the name.
type Flag uint8

const (
	// FlagInstant marks an instant event (phase i/I), which has no duration.
	FlagInstant Flag = 1 << iota
	// FlagMemcpy marks device copy work (on a device track) or, on a host
	// track, a runtime call that issues a copy.
	FlagMemcpy
	// FlagMemset marks device memset work.
	FlagMemset
	// FlagPageable marks a copy from or to pageable host memory, which
	// blocks the calling host thread even when issued asynchronously.
	FlagPageable
	// FlagDtoH marks a device-to-host copy, which blocks the host until
	// the data is there.
	FlagDtoH
	// FlagStep marks a training-step marker: ProfilerStep#N, an event on
	// an XPlane "Steps" line, a step_num annotation.
	FlagStep
	// FlagFlowOut and FlagFlowIn mark an event whose Corr is not a
	// launch's correlation id but one end of a flow, as XProf links work
	// across threads with producer/consumer stats: FlagFlowOut on the event
	// that hands work over (a host DoEnqueueProgram, a dispatch's Execute),
	// FlagFlowIn on the one that takes it up (a program's run on a TPU's
	// "XLA Modules" line, the execute thread's scheduled call). The two
	// ends share Corr, which is then a 32-bit key of the flow's kind and
	// id (not a correlation id: CorrID does not apply).
	FlagFlowOut
	FlagFlowIn
)

// FlagFlow is either end of a flow.
const FlagFlow = FlagFlowOut | FlagFlowIn

// Event is one interval (or instant) on one track. Start and the duration
// are in nanoseconds; Start is relative to Trace.StartNs.
//
// An Event does not name its track: a trace's events are grouped by track,
// so the track of Events[i] is the one whose [Lo, Hi) holds i
// (Trace.TrackOf), and readers pass the track beside the event
// (Builder.Add). Size matters: a big trace holds tens of millions of
// events, and each byte of an Event is tens of megabytes of memory to
// fault in and to read in every pass of the analysis (bytes an event are
// a budget: "Budgets at a glance" in docs/performance.md); TestEventSize
// pins it at 24. So the duration takes 48 bits (Dur, SetDur: up to
// MaxDur, 78 hours) and the correlation id 32 (Builder.Corr).
type Event struct {
	Start int64
	Name  StrID
	// Corr links a host launch call to the device work it produced
	// (Kineto "correlation", XPlane "correlation_id"); 0 when absent. It
	// is the id itself below WideCorr and a key for a larger one (see
	// Builder.Corr and Trace.CorrID), so that equal ids have equal Corr.
	Corr uint32
	// dur and durHi are the duration's low 32 and next 16 bits.
	dur   uint32
	durHi uint16
	Kind  Kind
	Flags Flag
}

// MaxDur is the longest duration an Event holds, 2^48-1 ns (78 hours):
// SetDur cuts a longer one to it, and readers warn of the cut
// (Builder.SetDur). No profiler capture lasts that long.
const MaxDur = 1<<48 - 1

// WideCorr is the first correlation id that an Event keeps as a key
// rather than as itself (see Builder.Corr): a reader may set Event.Corr
// to an id below it and call Builder.Corr only for wider ones.
const WideCorr = 1 << 31

// Dur returns the event's duration.
func (e *Event) Dur() int64 { return int64(e.durHi)<<32 | int64(e.dur) }

// SetDur sets the event's duration to d, cut to [0, MaxDur].
func (e *Event) SetDur(d int64) {
	d = min(max(d, 0), MaxDur)
	e.dur, e.durHi = uint32(d), uint16(d>>32)
}

// End returns the event's end time.
func (e *Event) End() int64 { return e.Start + e.Dur() }

// Has reports whether all of f are set.
func (e *Event) Has(f Flag) bool { return e.Flags&f == f }

// HostFlags returns the flags a host event's name gives it, whatever the
// format: a copy call (cudaMemcpyAsync, hipMemcpy), a PyTorch step marker
// (ProfilerStep#N). A reader sets them on its host events so that the
// analysis sees copies and steps alike in every format.
func HostFlags(name string) Flag {
	var f Flag
	if strings.Contains(name, "Memcpy") {
		f |= FlagMemcpy
	}
	if strings.HasPrefix(name, "ProfilerStep#") {
		f |= FlagStep
	}
	return f
}

// TrackKind says whether a track is on the host or on a device.
type TrackKind uint8

const (
	// TrackHost is a host thread.
	TrackHost TrackKind = iota
	// TrackDevice is a device stream (CUDA/HIP) or line (XPlane).
	TrackDevice
	// TrackOther is anything else kept as context: profiler spans,
	// metadata planes, derived views.
	TrackOther
)

func (k TrackKind) String() string {
	switch k {
	case TrackHost:
		return "host"
	case TrackDevice:
		return "device"
	case TrackOther:
		return "other"
	}
	return "trackkind(" + strconv.Itoa(int(k)) + ")"
}

// Track is one timeline: a host thread, a device stream or an XPlane line.
type Track struct {
	Kind TrackKind
	// Device is the device a device track belongs to, as "GPU:0" or
	// "TPU:3"; empty on host tracks.
	Device string
	// Process and Thread identify the track in its source format: the
	// Chrome pid and tid, the XPlane plane and line names.
	Process string
	Thread  string
	// Name is a display name: "GPU:0 stream 7", "thread 1234 (python)".
	Name string
	// Derived marks a view computed from other tracks (XPlane "Steps",
	// "XLA Modules", ...): its events are overlays, never work.
	Derived bool
	// Lo and Hi delimit the track's events in Trace.Events: the track's
	// events are Events[Lo:Hi], sorted by start. The tracks follow each
	// other in order: each track's Lo is the previous track's Hi (0 for
	// the first), so an empty track has Lo == Hi where it would start.
	Lo, Hi int
}

// Trace is a whole profile in memory.
type Trace struct {
	// Path is the file the trace was read from (may be empty).
	Path string
	// Format names the reader that produced the trace ("chrome", "xplane").
	Format string
	// Bytes is the size of the input after decompression.
	Bytes int64
	// StartNs is the absolute time, in the source's clock, that event
	// times are relative to.
	StartNs int64

	// Strings is the string table; StrID indexes it.
	Strings []string
	Tracks  []Track
	// Events are grouped by track, in track order (see Track.Lo and
	// Track.Hi), and sorted by start within a track; among events with
	// equal start the longer comes first, so a parent precedes its
	// children.
	Events []Event
	// Cats holds the events' categories, Cats[i] that of Events[i], when
	// the source has them (Chrome JSON's "cat"); nil otherwise (XPlane).
	// The Chrome reader classifies device work by category, and an
	// annotated trace written from the model writes them back. They are
	// kept beside the events rather than in them so that a source without
	// categories pays nothing for them.
	Cats []StrID

	// CopyBytes is a side table of copy sizes: the bytes each device copy
	// (or memset) moved, Kineto's args.bytes, by its Event.Corr, which
	// the copy and the host call that issued it share. It stays outside Event so
	// that events stay pointer-free and small; nil when the source says no
	// size.
	CopyBytes map[uint32]int64
	// WideCorrs holds the correlation ids of WideCorr and above, in the
	// order the reader met them: Event.Corr is WideCorr plus the index
	// of its id here (see CorrID).
	WideCorrs []uint64
	// Programs are the compiled programs whose ops the source ties to
	// lines of the user's code (XPlane's HLO protos), and ProgramRuns
	// when each ran on which device track, sorted by track and start;
	// both nil when the source says nothing of them.
	Programs    []Program
	ProgramRuns []ProgramRun

	// Meta holds top-level facts that the source carries:
	// "rank", "world_size", "trace_name", "base_time_ns", device names.
	Meta map[string]string
	// Warnings say what was dropped or repaired while reading.
	Warnings []string
	// Truncated is set when the input ended early and only the part
	// before the cut was kept.
	Truncated bool
	// Invalid is set when the input held invalid data before its end
	// (invalid JSON part-way) and only the part before it was kept: the
	// input is damaged, not cut short.
	Invalid bool
}

// CorrID returns the correlation id of an event's Corr, c: c itself, or
// the id it stands for when it is a key (see Builder.Corr).
func (t *Trace) CorrID(c uint32) uint64 {
	if c >= WideCorr {
		if k := int(c - WideCorr); k < len(t.WideCorrs) {
			return t.WideCorrs[k]
		}
	}
	return uint64(c)
}

// Str returns the string for id.
func (t *Trace) Str(id StrID) string {
	if int(id) < len(t.Strings) {
		return t.Strings[id]
	}
	return ""
}

// TrackEvents returns the events of track i, sorted by start.
func (t *Trace) TrackEvents(i int) []Event {
	tr := &t.Tracks[i]
	return t.Events[tr.Lo:tr.Hi]
}

// TrackOf returns the index of the track that holds Events[i]: a binary
// search of the tracks, which follow each other in order (see Track.Lo).
// A caller that asks about many events of few tracks should keep the last
// answer's range and ask only for an event outside it.
func (t *Trace) TrackOf(i int) int {
	// The first track whose events end after i: empty tracks before it
	// end at or before i, and every track after it ends after i too.
	return sort.Search(len(t.Tracks), func(k int) bool { return t.Tracks[k].Hi > i })
}

// Cat returns the category of Events[i], 0 (the empty string) when the
// source has no categories.
func (t *Trace) Cat(i int) StrID {
	if t.Cats == nil {
		return 0
	}
	return t.Cats[i]
}

// Devices returns the distinct device ids that have at least one work
// event, sorted ("GPU:0" < "GPU:1" < "GPU:10" < "TPU:0").
func (t *Trace) Devices() []string {
	seen := map[string]bool{}
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		if tr.Kind != TrackDevice || seen[tr.Device] {
			continue
		}
		for _, e := range t.Events[tr.Lo:tr.Hi] {
			if e.Kind == KindWork {
				seen[tr.Device] = true
				break
			}
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, trackname.CompareDevice)
	return ids
}
