package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/internal/trace/tracefile"
)

// Options bound what a reader may consume and let a caller watch progress.
type Options struct {
	// MaxBytes caps the decompressed input size; 0 means DefaultMaxBytes.
	MaxBytes int64
	// MaxRatio caps the ratio of decompressed to compressed size for
	// gzip input, from the first byte past a 1 MiB allowance; 0 means
	// DefaultMaxRatio. Real traces compress 5-30x, gzip bombs about 1000x.
	MaxRatio int64
	// MaxEvents caps the number of events kept, and the number of
	// pending ones (begins waiting for their end, flow points); 0 means
	// DefaultMaxEvents.
	MaxEvents int
	// MaxTracks caps the tracks (threads, device streams, XPlane lines
	// and planes), each of which costs memory even without events; 0
	// means DefaultMaxTracks.
	MaxTracks int
	// MaxStrings caps the distinct names (the string table, XPlane
	// metadata entries); 0 means DefaultMaxStrings.
	MaxStrings int
	// MaxValueBytes caps the bytes that one JSON value or token may span
	// in Chrome JSON input (an event, a string, a run of white space): the
	// reader holds each whole in memory. 0 means DefaultMaxValueBytes.
	MaxValueBytes int64
	// Reserve, when set, is called as the input is read, before each
	// further ReserveStep bytes after decompression, with the bytes read
	// so far; an error from it stops the reading with that error (a
	// memory budget that a stream of unknown size has outgrown).
	Reserve func(read int64) error
	// Progress, when set, is called now and then with the compressed
	// bytes read so far and the file's size (0 if unknown).
	Progress func(read, total int64)
	// Format forces a format by name instead of sniffing.
	Format string
	// SizeHint is set by Read for the format reader: the input's size
	// after decompression when it is known (uncompressed input of known
	// size), else 0. A reader that must hold the whole input can allocate
	// it at once.
	SizeHint int64
	// ExpectBytes is set by Read for the format reader: the expected
	// size after decompression, for sizing event storage ahead. It is
	// SizeHint for uncompressed input; for a gzip file, the size its
	// trailer records, when that can be trusted (see gzipSize); else 0.
	// Only a hint: the input may turn out longer or shorter.
	ExpectBytes int64
	// Source is set by Read for the format reader when the input is
	// uncompressed and r is an io.ReaderAt positioned at its start (a
	// file): the whole input, SizeHint bytes, for a reader that reads
	// parts of it at once. Reading from r remains valid.
	Source io.ReaderAt
}

// Default limits: generous for real traces, bounded against hostile input.
// Real gzipped traces expand 5-30x; a gzip bomb expands about 1000x. Real
// events are at most kilobytes long.
const (
	DefaultMaxBytes      = 64 << 30
	DefaultMaxRatio      = 200
	DefaultMaxEvents     = 500_000_000
	DefaultMaxValueBytes = 16 << 20
	// Real traces have up to thousands of threads and streams, and up to
	// about a million distinct names.
	DefaultMaxTracks  = 1 << 18
	DefaultMaxStrings = 1 << 23
)

// ErrLimit is wrapped by errors that stop reading because a limit in
// Options was reached.
var ErrLimit = errors.New("limit exceeded")

// Open reads the trace file at path, sniffing its format (gzip is detected by
// its magic bytes and decompressed on the fly).
func Open(path string, opt Options) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, tracefile.FileError(path, err)
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		if st.IsDir() {
			return nil, fmt.Errorf("%s: is a directory, expected a trace file", path)
		}
		size = st.Size()
	}
	t, err := Read(f, size, opt)
	if err != nil {
		if ne := (*NsysReportError)(nil); errors.As(err, &ne) {
			ne.Name = path
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.Path = path
	return t, nil
}

// Read reads a trace from r, whose compressed size is size (0 if unknown).
// Errors do not name a file; Open adds the path.
func Read(r io.Reader, size int64, opt Options) (*Trace, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.MaxRatio <= 0 {
		opt.MaxRatio = DefaultMaxRatio
	}
	if opt.MaxEvents <= 0 {
		opt.MaxEvents = DefaultMaxEvents
	}
	if opt.MaxValueBytes <= 0 {
		opt.MaxValueBytes = DefaultMaxValueBytes
	}
	if opt.MaxTracks <= 0 {
		opt.MaxTracks = DefaultMaxTracks
	}
	if opt.MaxStrings <= 0 {
		opt.MaxStrings = DefaultMaxStrings
	}
	src := readerAt(r) // before anything is read from r
	raw := &countReader{r: r, size: size, progress: opt.Progress}
	br := bufio.NewReaderSize(raw, bufSize(size))
	head, _ := br.Peek(2)
	var in io.Reader = br
	compressed := tracefile.IsGzip(head)
	if compressed {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading gzip header: %w", err)
		}
		zr.Multistream(true)
		in = zr
	}
	opt.SizeHint, opt.ExpectBytes = 0, 0
	opt.Source = nil
	if !compressed && size > 0 && size <= opt.MaxBytes {
		opt.SizeHint, opt.ExpectBytes = size, size
		opt.Source = src
	}
	if compressed && src != nil {
		opt.ExpectBytes = min(gzipSize(src, size), opt.MaxBytes)
	}
	lim := &limitReader{r: in, max: opt.MaxBytes, raw: raw, rawBuf: br, ratio: opt.MaxRatio, compressed: compressed, reserve: opt.Reserve}
	expanded := size
	if compressed {
		expanded = size * 64 // enough for most; a buffer only bounds read sizes
	}
	var dec io.Reader = lim
	// done ends the reading of lim, so that its state can be looked at.
	done := func() {}
	// Inflating ahead pays off on big inputs only: a small one would spend
	// more on the buffers than it saves (uploads, fuzzing).
	if compressed && runtime.GOMAXPROCS(0) > 1 && (size == 0 || size >= aheadMin) {
		ah := newAheadReader(lim, 1<<20, 4)
		defer ah.Close()
		dec, done = ah, func() { ah.Close() }
	}
	dr := bufio.NewReaderSize(dec, bufSize(expanded))
	format, err := sniff(dr, opt.Format)
	if err != nil {
		return nil, err
	}
	t, err := format.Read(dr, opt)
	done()
	if lim.err != nil { // whatever the reader made of it, or if it stopped quietly at the cap
		return nil, lim.err
	}
	if err != nil {
		return nil, err
	}
	t.Format = format.Name
	// A reader that read opt.Source sets Bytes itself.
	t.Bytes = max(t.Bytes, lim.n)
	if opt.Progress != nil {
		read := raw.n
		if opt.Source != nil {
			read = max(read, t.Bytes)
		}
		opt.Progress(read, size)
	}
	return t, nil
}

func sniff(r *bufio.Reader, name string) (Format, error) {
	if name != "" {
		return LookupFormat(name)
	}
	head, err := r.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		// The limit reader has said where and what (a cut or corrupt
		// gzip stream, an I/O error); with enough of a head to sniff,
		// the format's reader meets the error again and may keep what
		// came before it.
		var le *limitError
		if len(head) < 16 || errors.As(err, &le) {
			return Format{}, err
		}
	}
	if len(head) == 0 {
		return Format{}, fmt.Errorf("empty file, expected a trace (%s)", formats.Titles())
	}
	if f, ok := sniffHead(Formats(), head); ok {
		return f, nil
	}
	if err := refused(head); err != nil {
		return Format{}, err
	}
	return Format{}, fmt.Errorf("unrecognised format: %s, expected %s", describeHead(head), formats.Titles())
}

// describeHead says what an unrecognised input starts with: its first
// bytes, quoted when they are text, in hex when they are not, and what it
// looks like when that is plain.
func describeHead(head []byte) string {
	switch {
	case len(bytes.Trim(head, "\x00")) == 0:
		return fmt.Sprintf("starts with %d zero bytes", len(head))
	case len(bytes.TrimSpace(head)) == 0:
		return "only white space"
	}
	h := head
	if len(h) > 16 {
		h = h[:16]
	}
	if enc := utf16Order(head); enc != "" {
		return fmt.Sprintf("is UTF-16 (%s) text, starting with bytes % x; save it as UTF-8", enc, h)
	}
	h = bytes.TrimRight(h, "\x00")
	printable := true
	for _, c := range h {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c >= 0x7f {
			printable = false
			break
		}
	}
	if !printable {
		return fmt.Sprintf("starts with bytes % x", h)
	}
	what := ""
	if t := bytes.ToLower(bytes.TrimSpace(head)); bytes.HasPrefix(t, []byte("<!doctype html")) || bytes.HasPrefix(t, []byte("<html")) {
		what = ", an HTML page (an error or login page saved in place of the trace?)"
	}
	return fmt.Sprintf("starts with %q%s", h, what)
}

// utf16Order returns the byte order of head when it is UTF-16 text
// ("little-endian", "big-endian"), by its byte order mark or, without one,
// by the zero high bytes of ASCII text, else "".
func utf16Order(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}):
		return "little-endian"
	case bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		return "big-endian"
	case len(head) >= 4 && head[0] != 0 && head[1] == 0 && head[2] != 0 && head[3] == 0:
		return "little-endian"
	case len(head) >= 4 && head[0] == 0 && head[1] != 0 && head[2] == 0 && head[3] != 0:
		return "big-endian"
	}
	return ""
}

// gzipSize returns the decompressed size that the trailer of the gzip
// file src (size bytes long) records, or 0 when it cannot be trusted. The
// trailer holds the size modulo 4 GiB, of the last member only; it is
// taken when even a 30x expansion (the most real traces reach) stays
// under 4 GiB, so that the modulus cannot have wrapped, and when it is at
// least the compressed size.
func gzipSize(src io.ReaderAt, size int64) int64 {
	var tail [4]byte
	if size < 18 || size*30 >= 1<<32 { // 18: the smallest gzip member
		return 0
	}
	if _, err := src.ReadAt(tail[:], size-4); err != nil {
		return 0
	}
	n := int64(binary.LittleEndian.Uint32(tail[:]))
	if n < size {
		return 0
	}
	return n
}

// readerAt returns r as an io.ReaderAt when it is one and is at its start,
// so that offsets in it are offsets in the input.
func readerAt(r io.Reader) io.ReaderAt {
	ra, ok := r.(io.ReaderAt)
	if !ok {
		return nil
	}
	s, ok := r.(io.Seeker)
	if !ok {
		return nil
	}
	if pos, err := s.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
		return nil
	}
	return ra
}

// bufSize is the size of a read buffer for n bytes of input (0 when
// unknown): 1 MiB, or less for a small input, so that reading a small
// trace (an upload, a fuzzed input) costs little. Sniffing peeks 512 bytes.
func bufSize(n int64) int {
	const lo, hi = 4 << 10, 1 << 20
	if n <= 0 || n >= hi {
		return hi
	}
	return int(max(n, lo))
}

// countReader counts the compressed bytes read and reports progress.
type countReader struct {
	r        io.Reader
	n, last  int64
	size     int64
	progress func(read, total int64)
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil && c.n-c.last >= 4<<20 {
		c.last = c.n
		c.progress(c.n, c.size)
	}
	return n, err
}

// Limitf returns an error, formatted as by fmt.Sprintf, that wraps
// ErrLimit without saying so in its text: the message already names the
// limit and the flag that raises it. A reader returns such an error when
// its input outgrows a bound in Options (MaxEvents, MaxValueBytes, ...), so
// that callers tell it from a malformed input by errors.Is(err, ErrLimit).
func Limitf(format string, args ...any) error {
	return &limitError{fmt.Sprintf(format, args...)}
}

type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return ErrLimit }

// limitReader stops decompressed input at a size cap and, for gzip, at a
// compression ratio no real trace reaches, so that a gzip bomb is refused
// after a bounded amount of work and memory.
type limitReader struct {
	r          io.Reader
	n, max     int64
	raw        *countReader
	rawBuf     *bufio.Reader // buffers raw for the decompressor
	ratio      int64
	compressed bool
	err        error
	reserve    func(read int64) error
	reserved   int64 // the bytes reserve was last asked for
}

// ReserveStep is how many bytes Options.Reserve is asked for at a time:
// a caller that budgets memory by it reserves this much ahead of what has
// been read.
const ReserveStep = 1 << 20

// RatioGrace is how much more than the ratio allows gzip input may expand
// to: the first kilobytes of a stream (a header, a dictionary) say little
// about its ratio, and 1 MiB is little memory. The ratio holds from the
// first byte beyond it: a 16 KB file can be a bomb too, of something that
// costs more in memory than on the wire. A caller that budgets memory
// bounds gzip input of size bytes at RatioGrace + size*MaxRatio after
// decompression.
const RatioGrace = 1 << 20

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.reserve != nil && l.n >= l.reserved {
		if l.err = l.reserve(l.n); l.err != nil {
			return n, l.err
		}
		l.reserved = l.n + ReserveStep
	}
	if l.n > l.max {
		l.err = &limitError{fmt.Sprintf("input larger than %d bytes after decompression (raise --max-bytes if the trace is genuine)", l.max)}
		return n, l.err
	}
	if l.compressed && l.n > RatioGrace {
		// The compressed bytes the decompressor has consumed: those read
		// ahead into its buffer do not count.
		in := l.raw.n - int64(l.rawBuf.Buffered())
		if in <= 0 || (l.n-RatioGrace)/in > l.ratio {
			l.err = &limitError{fmt.Sprintf("gzip expands more than %dx (%d bytes from %d): not a real trace (real ones expand 5-30x), likely a decompression bomb", l.ratio, l.n, in)}
			return n, l.err
		}
	}
	if err != nil && err != io.EOF {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("gzip stream truncated after %d decompressed bytes: %w", l.n, err)
		} else if !errors.Is(err, ErrLimit) {
			verb := "reading"
			if l.compressed {
				verb = "decompressing"
			}
			err = fmt.Errorf("%s at byte %d: %w", verb, l.n, err)
		}
	}
	return n, err
}
