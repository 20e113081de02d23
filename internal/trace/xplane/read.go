package xplane

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tracegap/tracegap/trace"
)

func init() {
	trace.Register(trace.Format{
		Name:     "xplane",
		Title:    "XPlane protobuf",
		Order:    20,
		Suffixes: []string{".xplane.pb"},
		// XProf converts host.xplane.pb into host.trace.json.gz beside it.
		Primary: true,
		Sniff:   Sniff,
		Read:    Read,
		Need:    Need,
		Count:   Count,
	})
}

// minEvent is the fewest bytes an XEvent takes on the wire: its field's
// tag and a zero length, an event of no fields.
const minEvent = 2

// Need returns an upper bound on the memory that reading and analysing
// plain bytes of XPlane takes: its events (counted by Count, else at most
// one per minEvent bytes), and its bytes once besides (metadata, names,
// the scan of its parts).
func Need(plain, events int64) int64 { return plain + trace.EventsNeed(plain, events, minEvent) }

// Read reads a whole XSpace from r. An XSpace is one message whose planes
// hold their metadata after the lines that refer to it, so the input is
// walked twice: a scan finds its parts and counts each line's events, then
// they are decoded. A file (opt.Source) is read a window at a time in each
// walk; any other input is held in memory while it is decoded. The trace
// keeps none of it.
func Read(r io.Reader, opt trace.Options) (*trace.Trace, error) {
	if opt.Source != nil && opt.SizeHint > 0 && opt.SizeHint < math.MaxInt {
		return decode(wire{src: opt.Source, size: int(opt.SizeHint)}, opt)
	}
	buf, err := readAll(&framed{r: r}, opt.SizeHint)
	if err != nil {
		return nil, fmt.Errorf("reading XSpace: %w", err)
	}
	return Decode(buf, opt)
}

// Decode decodes the XSpace held in buf. Structural damage (a truncated
// file, a length past the end, a wrong wire type) fails with a
// *FormatError naming the byte offset; events that decode but make no sense
// (negative times, aggregated events without a start) are dropped and
// counted in the trace's warnings.
func Decode(buf []byte, opt trace.Options) (*trace.Trace, error) {
	return decode(wire{buf: buf, size: len(buf)}, opt)
}

func decode(w wire, opt trace.Options) (t *trace.Trace, err error) {
	if w.mapped = openMapping(w.src, w.size); w.mapped != nil {
		defer unmapFile(w.mapped)
		defer guardFaults()()
		defer fileChanged(w.src, w.size, &err)
	}
	if opt.MaxEvents <= 0 {
		opt.MaxEvents = trace.DefaultMaxEvents
	}
	w.plane, w.line, w.event = -1, -1, -1
	opt.MaxTracks = cmp.Or(max(opt.MaxTracks, 0), trace.DefaultMaxTracks)
	opt.MaxStrings = cmp.Or(max(opt.MaxStrings, 0), trace.DefaultMaxStrings)
	d := newDecoder(w, opt)
	if err = d.space(); err != nil {
		return nil, err
	}
	t = d.b.Finish()
	t.Bytes = int64(w.size)
	d.progs.finish(t)
	return t, nil
}

// newDecoder returns a decoder of w.
func newDecoder(w wire, opt trace.Options) *decoder {
	d := &decoder{wire: w, b: trace.NewBuilder(), maxEvents: opt.MaxEvents, maxParts: opt.MaxTracks, maxMetas: opt.MaxStrings}
	d.b.SetLimits(opt)
	if opt.Progress != nil && w.src != nil {
		d.progress = d.reportProgress(opt.Progress)
	}
	return d
}

// reportProgress turns window moves into calls of f at most every 4 MB,
// each walk counting for half. A window that moves back (a plane's lines
// are decoded after its metadata, which follows them) reports nothing, so
// the progress shown never goes back.
func (d *decoder) reportProgress(f func(read, total int64)) func(int) {
	last := 0
	return func(off int) {
		done := off / 2
		if d.decoding {
			done = d.size/2 + off/2
		}
		if done-last >= 4<<20 {
			last = done
			f(int64(done), int64(d.size))
		}
	}
}

// readAll reads r to the end. With a size hint it reads into one buffer of
// that size; without, in growing chunks joined once at the end, which
// copies each byte once more instead of the several times that growing a
// single slice would.
func readAll(r io.Reader, hint int64) ([]byte, error) {
	if hint <= 0 || hint >= math.MaxInt {
		return readChunks(r, nil)
	}
	buf := make([]byte, hint+1) // one more, to see the end where expected
	n, err := io.ReadFull(r, buf)
	switch {
	case isEnd(err):
		return buf[:n], nil
	case err != nil:
		return nil, err
	}
	return readChunks(r, buf) // longer than hinted
}

func readChunks(r io.Reader, first []byte) ([]byte, error) {
	chunks := [][]byte{first}
	total := len(first)
	size := 64 << 10
	for {
		c := make([]byte, size)
		n, err := io.ReadFull(r, c)
		chunks = append(chunks, c[:n])
		total += n
		if isEnd(err) {
			break
		}
		if err != nil {
			return nil, err
		}
		if size < 64<<20 {
			size *= 2
		}
	}
	if len(chunks) == 2 && first == nil {
		return chunks[1], nil
	}
	buf := make([]byte, 0, total)
	for _, c := range chunks {
		buf = append(buf, c...)
	}
	return buf, nil
}

// framing follows the top-level fields of an XSpace as its bytes arrive,
// their headers only, for Read to stop reading a stream whose framing is
// already broken where Decode would fail: a device or pipe of zeros or of
// random bytes is not held in memory to its end (or the --max-bytes
// bound) first. It stops on what fails Decode whatever follows, as space
// and skip decide: a bad tag, a known field not length-delimited, a wire
// type XSpace never uses, a varint of more than 64 bits; Decode then
// names the byte.
type framing struct {
	skip uint64 // bytes of the current field's value still to pass
	head []byte // the bytes of a field header so far
	bad  bool
}

// framed is a stream that ends where its framing is found broken.
type framed struct {
	r io.Reader
	framing
}

func (f *framed) Read(p []byte) (int, error) {
	if f.bad {
		return 0, io.EOF
	}
	n, err := f.r.Read(p)
	if f.feed(p[:n]) {
		return n, io.EOF
	}
	return n, err
}

// feed passes the next bytes of the stream and reports whether its
// framing is broken.
func (f *framing) feed(p []byte) bool {
	for len(p) > 0 && !f.bad {
		if f.skip > 0 {
			n := min(f.skip, uint64(len(p)))
			f.skip, p = f.skip-n, p[n:]
			continue
		}
		f.head, p = append(f.head, p[0]), p[1:]
		f.header()
	}
	return f.bad
}

// header decides what the header bytes so far make: more needed, a
// field whose value is to be passed, or broken framing.
func (f *framing) header() {
	v, n := uvarint(f.head, 0, len(f.head))
	if n == -1 {
		return
	}
	num, typ := protowire.DecodeTag(v)
	if _, known := spaceFields[num]; n < 0 || num < protowire.MinValidNumber || num > protowire.MaxValidNumber || known && typ != bytesType {
		f.bad = true
		return
	}
	switch typ {
	case fixed64:
		f.skip = 8
	case fixed32:
		f.skip = 4
	case varintType, bytesType:
		x, m := uvarint(f.head, n, len(f.head))
		if m == -1 {
			return
		}
		if m < 0 {
			f.bad = true
			return
		}
		if typ == bytesType {
			f.skip = x
		}
	default:
		f.bad = true
		return
	}
	f.head = f.head[:0]
}

// isEnd reports whether err from io.ReadFull means the input ended. It
// compares, not unwraps: a cut gzip stream also wraps io.ErrUnexpectedEOF,
// and that must be reported, not taken for the end.
func isEnd(err error) bool {
	return err == io.EOF || err == io.ErrUnexpectedEOF
}

// decoder turns the wire walk into the trace model.
type decoder struct {
	wire
	b         *trace.Builder
	maxEvents int
	// parts counts planes and lines, metas metadata entries: each costs
	// memory while the input is decoded, events or none (an empty line
	// is two bytes on the wire and a few hundred in memory).
	parts, maxParts int
	metas, maxMetas int

	// Per-plane tables, reused from plane to plane.
	stats  idTable[statMeta]
	events idTable[eventMeta]
	// kinds is the kind of every stat id below 128, from stats.
	kinds [128]statKind

	// batch holds the events of the line being decoded, which go to the
	// Builder a batch at a time (see flush): in the Builder's storage
	// when it has room, else in own.
	batch, own []trace.Event

	hostnames []string
	warned    int
	decoding  bool // the lines are being decoded: the scan is over

	progs programs
}

// maxHostnames bounds the host names kept: a trace is of a few hosts.
const maxHostnames = 64

// countPart counts a plane or a line against --max-tracks.
func (d *decoder) countPart() error {
	if d.parts++; d.parts > d.maxParts {
		return trace.Limitf("more than %d planes and lines (raise --max-tracks if the trace is genuine)", d.maxParts)
	}
	return nil
}

// countMeta counts a metadata entry against --max-strings.
func (d *decoder) countMeta() error {
	if d.metas++; d.metas > d.maxMetas {
		return trace.Limitf("more than %d metadata entries (raise --max-strings if the trace is genuine)", d.maxMetas)
	}
	return nil
}

// maxProfilerWarnings bounds how many of the XSpace's own errors and
// warnings are copied into the trace.
const maxProfilerWarnings = 10

// space decodes the top-level XSpace: its planes, the profiler's own errors
// and warnings, and the host names.
func (d *decoder) space() error {
	var planes []span
	end := d.size
	for off := 0; off < end; {
		if err := d.loadHead(off, end); err != nil {
			return err
		}
		num, typ, next, err := d.tag(off, end)
		if err != nil {
			return err
		}
		name, known := spaceFields[num]
		if !known {
			if off, err = d.skip(num, typ, next, end); err != nil {
				return err
			}
			continue
		}
		if err := d.want(off, name, typ, bytesType); err != nil {
			return err
		}
		lo, hi, err := d.bytes(next, end, name)
		if err != nil {
			return err
		}
		if num != 1 {
			if err := d.load(lo, hi); err != nil {
				return err
			}
		}
		switch num {
		case 1:
			if err := d.countPart(); err != nil {
				return err
			}
			planes = append(planes, span{lo, hi})
		case 2, 3:
			d.profilerWarning(name, string(d.bytesAt(lo, hi)))
		case 4:
			if len(d.hostnames) < maxHostnames {
				d.hostnames = append(d.hostnames, string(d.bytesAt(lo, hi)))
			}
		}
		off = hi
	}
	if len(planes) == 0 {
		return &FormatError{Offset: end, Msg: "no planes (field 1): expected an XSpace holding at least one plane"}
	}
	if len(d.hostnames) > 0 {
		d.b.Meta["hostname"] = strings.Join(d.hostnames, ",")
	}
	scans := make([]planeScan, len(planes))
	lines, events := 0, 0
	for i, p := range planes {
		d.plane = i
		var err error
		if scans[i], err = d.scanPlane(p); err != nil {
			return err
		}
		lines += len(scans[i].lines)
		events += scans[i].events
	}
	if err := d.metadataPrograms(scans); err != nil {
		return err
	}
	d.b.GrowRuns(min(events, d.maxEvents)) // a line's events come together
	d.decoding = true
	for i := range scans {
		d.plane = i
		if err := d.readPlane(&scans[i]); err != nil {
			return err
		}
		if err := d.b.Err(); err != nil {
			return err
		}
	}
	d.plane = -1
	d.b.Meta["planes"] = strconv.Itoa(len(planes))
	d.b.Meta["lines"] = strconv.Itoa(lines)
	return nil
}

var spaceFields = map[protowire.Number]string{
	1: "planes (1)",
	2: "errors (2)",
	3: "warnings (3)",
	4: "hostnames (4)",
}

func (d *decoder) profilerWarning(kind, msg string) {
	if d.warned == maxProfilerWarnings {
		d.b.Warn("more profiler errors and warnings not shown")
	}
	d.warned++
	if d.warned <= maxProfilerWarnings {
		d.b.Warn("profiler %s: %s", strings.Fields(kind)[0], msg)
	}
}

// span is a byte range [lo, hi) of the input.
type span struct{ lo, hi int }
