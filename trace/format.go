package trace

import (
	"fmt"
	"io"
	"slices"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/trace/formats"
)

// Format describes a trace format that a reader can read. Everything the
// rest of the program knows about a format (how to tell it, how to read
// it, what its files are called, where a rank is written) is here, so that
// a format is added by registering it once.
type Format struct {
	// Name is the format's short name ("chrome", "xplane"): the value of
	// Options.Format and Trace.Format.
	Name string
	// Title names the format for people, in messages that say what input
	// was expected ("Chrome trace-event JSON").
	Title string
	// Order places the format among the others: sniffing tries formats in
	// ascending Order (then by Name), and Formats lists them so. Sniffers
	// are meant to be exclusive; the order makes the outcome independent
	// of the order in which packages happen to register.
	Order int
	// Suffixes are the file names that a directory expands to, without
	// their ".gz" forms, which are matched too (".pt.trace.json"). The
	// first is given to a file named without any (FileName).
	Suffixes []string
	// Primary marks a format whose files are the originals that files of
	// other formats beside them were converted from: where a directory
	// holds both for one stem, only the primary ones are kept (XProf
	// writes host.trace.json.gz beside host.xplane.pb).
	Primary bool
	// Sniff reports whether head, the first bytes of the (decompressed)
	// input, look like this format. It must not rely on more than 512 bytes.
	Sniff func(head []byte) bool
	// Holds, when set, reports whether head, up to the first 64 KiB of a
	// (decompressed) file named only by a generic suffix (".json"), holds
	// this format's content rather than other data of the same syntax: a
	// directory skips such a file when it does not (Expand).
	Holds func(head []byte) bool
	// Read reads a whole trace from r.
	Read func(r io.Reader, opt Options) (*Trace, error)
	// ProbeRank, when set, reads the rank and world size of a distributed
	// job that the trace names near its start, from r (decompressed, at the
	// start of the input), reading no more of r than that takes.
	ProbeRank func(r io.Reader) (rank, world int, ok bool)
	// Need, when set, returns an upper bound on the memory that reading
	// and analysing plain bytes (decompressed) of this format takes,
	// whatever they hold, events of them counted by Count, or, when
	// events is -1, as many as plain divided by the smallest event the
	// format can encode (see EventsNeed). A memory budget admits an input
	// by it (internal/run). Nil: plain four times over.
	Need func(plain, events int64) int64
	// Count, when set, counts the events the decompressed input r holds,
	// at least as many as Read keeps, cheaply and keeping nothing; it
	// reads r to its end. ok is false when it cannot tell.
	Count func(r io.Reader) (events int64, ok bool)
	// Hidden formats are read like the others but left out of the names
	// and titles that messages list: formats that tests register.
	Hidden bool
}

// eventCost is the most memory one event takes at the peak of reading
// and analysing a trace of the smallest events a format encodes: 28 bytes
// measured on XPlane (empty events), 27 on Chrome JSON ({"ph":"X","ts":1}),
// with room to spare for what the analysis keeps (docs/inputs.md).
const eventCost = 40

// EventsNeed returns the memory that events events take at most, or
// when events is -1 (not counted), the events of plain bytes whose
// smallest event is minEvent bytes on the wire. A reader's Format.Need
// adds it to what the reader holds besides its events, as the shipped
// readers do.
func EventsNeed(plain, events, minEvent int64) int64 {
	if events < 0 {
		events = plain / minEvent
	}
	return events * eventCost
}

// SniffFormat returns the registered format whose sniffer recognises
// head, the first bytes of a (decompressed) input, as Read would.
func SniffFormat(head []byte) (Format, bool) { return sniffHead(Formats(), head) }

// registry holds the registered formats (formats.Registered), in
// sniffing order.
type registry struct{ r *formats.Registry }

var registered = registry{&formats.Registered}

// Register makes a format known to Open, Read and Formats. Readers call
// it from init. It panics if the format lacks a name, a sniffer or a
// reader, or if its name is taken.
func Register(f Format) { registered.register(f) }

func (r registry) register(f Format) {
	if f.Name == "" || f.Sniff == nil || f.Read == nil {
		panic(fmt.Sprintf("trace: Register of format %q without a name, Sniff or Read", f.Name))
	}
	f.Suffixes = slices.Clone(f.Suffixes)
	e := formats.Entry{Name: f.Name, Title: f.Title, Order: f.Order, Suffixes: f.Suffixes, Hidden: f.Hidden, Format: f}
	if !r.r.Add(e) {
		panic(fmt.Sprintf("trace: Register called twice for format %q", f.Name))
	}
}

func (r registry) list() []Format {
	es := r.r.List()
	fs := make([]Format, len(es))
	for i, e := range es {
		fs[i] = e.Format.(Format)
	}
	return fs
}

// Formats returns the registered formats in sniffing order.
func Formats() []Format { return registered.list() }

// LookupFormat returns the registered format called name. Its error says
// which names are known.
func LookupFormat(name string) (Format, error) {
	for _, f := range Formats() {
		if f.Name == name {
			return f, nil
		}
	}
	return Format{}, fmt.Errorf("unknown format %q, expected %s", name, human.OrList(formats.Names()))
}

// sniffHead returns the first of fs that claims head.
func sniffHead(fs []Format, head []byte) (Format, bool) {
	for _, f := range fs {
		if f.Sniff(head) {
			return f, true
		}
	}
	return Format{}, false
}
