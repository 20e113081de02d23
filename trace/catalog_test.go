package trace_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// badInput is one entry of the catalogue: an input and exactly what
// reading it gives, an error or a trace with its warnings.
type badInput struct {
	name string
	in   func(t *testing.T) (r io.Reader, size int64)
	opt  trace.Options

	// err is the exact error; errRE, when set instead, matches it whole
	// (for figures that depend on how far a decompressor got).
	err   string
	errRE string
	limit bool // the error wraps trace.ErrLimit

	// Without an error: the trace's warnings, exactly, whether it is
	// marked truncated and how many events it kept.
	warnings  []string
	truncated bool
	events    int

	// maxAlloc bounds the bytes the read may allocate in all (0: not
	// checked): hostile input must be refused in bounded memory.
	maxAlloc uint64
}

// text is an input held in memory.
func text(s string) func(*testing.T) (io.Reader, int64) {
	return func(*testing.T) (io.Reader, int64) { return strings.NewReader(s), int64(len(s)) }
}

// gzipped is s compressed, cut to the first n bytes when n >= 0.
func gzipped(s string, n int) func(*testing.T) (io.Reader, int64) {
	return func(t *testing.T) (io.Reader, int64) {
		b := gzipBytes(t, s)
		if n >= 0 {
			b = b[:n]
		}
		return bytes.NewReader(b), int64(len(b))
	}
}

func gzipBytes(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := io.WriteString(zw, s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// stream is prefix, item repeated n times, then suffix, made as it is
// read: gigabyte inputs cost no memory.
func stream(prefix, item string, n int64, suffix string) func(*testing.T) (io.Reader, int64) {
	return func(*testing.T) (io.Reader, int64) {
		return io.MultiReader(strings.NewReader(prefix), &repeater{item: []byte(item), n: n}, strings.NewReader(suffix)), 0
	}
}

type repeater struct {
	item []byte
	n    int64 // copies left
	off  int   // bytes of the current copy already given
}

func (r *repeater) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 && r.n > 0 {
		k := copy(p, r.item[r.off:])
		p, total, r.off = p[k:], total+k, r.off+k
		if r.off == len(r.item) {
			r.off, r.n = 0, r.n-1
		}
	}
	if total == 0 {
		return 0, io.EOF
	}
	return total, nil
}

// bomb is a 10 GB gzip bomb of prefix and fill, about 10 MB compressed,
// made as it is read.
func bomb(prefix string, fill byte) func(*testing.T) (io.Reader, int64) {
	return func(t *testing.T) (io.Reader, int64) {
		r, err := tracetest.GzipBomb([]byte(prefix), fill, 10e9)
		if err != nil {
			t.Fatal(err)
		}
		return r, 0
	}
}

// Pieces of the small Chrome trace that the truncation cases cut.
const (
	head      = `{"traceEvents":[`
	hostEvent = `{"ph":"X","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":7,"Input Dims":[[2,2],[2,2]]}}`
	kernel    = `{"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":12,"dur":3,"args":{"device":0,"stream":7,"correlation":7}}`
	small     = head + hostEvent + "," + kernel + "]}"
)

// cutAt returns the Chrome trace small cut just before the first
// occurrence of mark at or after from.
func cutAt(mark string, from int) string {
	return small[:from+strings.Index(small[from:], mark)]
}

// event is a complete Chrome event on thread 1 with the given ts and dur
// members (raw JSON).
func event(ts, dur string) string {
	return `{"ph":"X","name":"e","pid":1,"tid":1,"ts":` + ts + `,"dur":` + dur + `}`
}

func catalogue() []badInput {
	hostEnd := len(head) + len(hostEvent) + 1 // after the comma
	inArgs := cutAt(`"stream"`, hostEnd)
	inString := cutAt(`emm"`, hostEnd)
	deep := `[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":`
	same := `{"ph":"X","name":"same","pid":1,"tid":1,"ts":1,"dur":1},`
	begin := `{"ph":"B","name":"b","pid":1,"tid":1,"ts":1},`
	cutSpace, cutSpaceErr := cutXSpace()
	titles := formats.Titles() // what TestFormats holds
	return []badInput{
		{name: "empty file", in: text(""),
			err: "empty file, expected a trace (" + titles + ")"},
		{name: "only white space", in: text(" \n\t\r\n  "),
			err: "unrecognised format: only white space, expected " + titles},
		{name: "a page of white space", in: text(strings.Repeat(" \n", 600)),
			err: "no JSON value (empty or only white space), expected a JSON object or array of trace events"},
		{name: "plain text", in: text("step 1 loss 0.25\nstep 2 loss 0.24\n"),
			err: `unrecognised format: starts with "step 1 loss 0.25", expected ` + titles},
		{name: "HTML error page saved as .json", in: text("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>\n"),
			err: `unrecognised format: starts with "<!DOCTYPE html>\n", an HTML page (an error or login page saved in place of the trace?), expected ` + titles},
		{name: "binary garbage", in: text("\x7fELF\x02\x01\x01\x00\x00\x00"),
			err: "unrecognised format: starts with bytes 7f 45 4c 46 02 01 01, expected " + titles},
		{name: "Nsight Systems report", in: text("NVIDIA Tegra Profiler Report 2026@1@1@204-2611371766666v0.\n\x0bLocal (CLI)"),
			err: "an Nsight Systems report (.nsys-rep), which only nsys reads: make a SQLite export with `nsys export --type sqlite --output report.sqlite report.nsys-rep` and analyse report.sqlite"},
		{name: "nsys-jax archive", in: text(zipHead("kernels.parquet")),
			err: "an nsys-jax archive (a zip of parquet tables), which tracegap does not read: export the Nsight Systems report inside or beside it with `nsys export --type sqlite --output X.sqlite report.nsys-rep` and analyse X.sqlite"},
		{name: "zip archive", in: text(zipHead("trace.json")),
			err: "a zip archive: unpack it and pass the trace inside"},
		{name: "PyTorch memory snapshot", in: text("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x08segments"),
			err: "a Python pickle (such as a PyTorch memory snapshot from torch.cuda.memory._dump_snapshot), not a profiler trace"},
		{name: "UTF-16 with a byte order mark", in: text("\xff\xfe{\x00\"\x00t\x00r\x00a\x00c\x00e\x00E\x00"),
			err: "unrecognised format: is UTF-16 (little-endian) text, starting with bytes ff fe 7b 00 22 00 74 00 72 00 61 00 63 00 65 00; save it as UTF-8, expected " + titles},
		{name: "UTF-16 big-endian without one", in: text("\x00[\x00{\x00\"\x00p\x00h\x00\""),
			err: "unrecognised format: is UTF-16 (big-endian) text, starting with bytes 00 5b 00 7b 00 22 00 70 00 68 00 22; save it as UTF-8, expected " + titles},
		{name: "JSON number at top level", in: text("42\n"),
			err: `unrecognised format: starts with "42\n", expected ` + titles},
		{name: "JSON string at top level", in: text(`"traceEvents"`),
			err: `unrecognised format: starts with "\"traceEvents\"", expected ` + titles},
		{name: "JSON number at top level, format forced", in: text("42"), opt: trace.Options{Format: "chrome"},
			err: "top-level JSON number at byte 0, expected an object with traceEvents or an array of events"},
		{name: "array of numbers", in: text("[1, 2, 3]"),
			err: "no usable events: dropped 3 events (first: event is a JSON number, expected an object)"},
		{name: "empty array", in: text("[]")},
		{name: "object without traceEvents", in: text(`{"displayTimeUnit":"ns"}`),
			err: "no traceEvents array in the top-level object: not a Chrome trace"},
		{name: "traceEvents an object", in: text(`{"traceEvents":{"ph":"X"}}`),
			err: "traceEvents at byte 15 is a JSON object, expected an array of events"},
		{name: "traceEvents a string", in: text(`{"schemaVersion":1, "traceEvents":"none"}`),
			err: "traceEvents at byte 34 is a JSON string, expected an array of events"},

		// Truncation at each structural position.
		{name: "cut inside the first event", in: text(small[:40]),
			err: "truncated at byte 40 before any event"},
		{name: "cut after a comma", in: text(small[:hostEnd]),
			warnings: []string{fmt.Sprintf("truncated at byte %d: kept 1 event", hostEnd)}, truncated: true, events: 1},
		{name: "cut inside a string", in: text(inString),
			warnings: []string{fmt.Sprintf("truncated at byte %d: kept 1 event", len(inString))}, truncated: true, events: 1},
		{name: "cut inside args", in: text(inArgs),
			warnings: []string{fmt.Sprintf("truncated at byte %d: kept 1 event", len(inArgs))}, truncated: true, events: 1},
		{name: "cut before the closing bracket", in: text(small[:len(small)-2]),
			warnings: []string{fmt.Sprintf("truncated at byte %d: kept 2 events", len(small)-2)}, truncated: true, events: 2},
		{name: "bare array without its closing bracket", in: text("[" + hostEvent + "," + kernel),
			warnings: []string{fmt.Sprintf("truncated at byte %d: kept 2 events", 1+len(hostEvent)+1+len(kernel))}, truncated: true, events: 2},
		{name: "trailing garbage", in: text(small + "\n<EOF>"),
			warnings: []string{fmt.Sprintf("ignored trailing data at byte %d after the trace", len(small)+1)}, events: 2},

		// Damaged gzip.
		{name: "truncated gzip stream", in: gzippedCut(small, hostEnd+20),
			warnings:  []string{fmt.Sprintf("truncated at byte %d (gzip stream truncated after %d decompressed bytes: unexpected EOF): kept 1 event", hostEnd+20, hostEnd+20)},
			truncated: true, events: 1},
		{name: "gzip cut in its trailer", in: gzipped(small, len(gzipBytesNoT(small))-3),
			warnings: []string{fmt.Sprintf("after the end of the trace at byte %d: gzip stream truncated after %d decompressed bytes: unexpected EOF", len(small), len(small))},
			events:   2},
		{name: "gzip magic then garbage", in: text("\x1f\x8b garbage follows the magic"),
			err: "reading gzip header: gzip: invalid header"},
		{name: "gzip header then garbage", in: text("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff"),
			err: "decompressing at byte 0: flate: corrupt input before offset 1"},

		// XSpace damage, found by sniffing a plane's name.
		{name: "XSpace cut short", in: text(string(cutSpace)), err: cutSpaceErr},
		{name: "XSpace with a line past the end", in: text("\x0a\x12\x12\x0d/device:GPU:0\x1a\x80\x01"),
			err: "not a valid XSpace (likely corrupted): at byte 18 (planes[0]): XPlane.lines (3) is 128 bytes long, but only 0 bytes remain in the 20-byte input"},
		{name: "XSpace with a varint for a message", in: text("\x0a\x11\x12\x0d/device:GPU:0\x18\x07"),
			err: "not a valid XSpace (likely corrupted): at byte 17 (planes[0]): field XPlane.lines (3) has wire type varint, expected length-delimited"},
		{name: "XSpace with negative and overflowing times", in: xspaceTimes(),
			warnings: []string{"dropped 2 events: negative or overflowing XEvent time"}, events: 1},

		// Times and durations.
		{name: "bad ts and dur values", in: text("[" + strings.Join([]string{
			event("10", "1"), event(`"NaN"`, "1"), event(`"Infinity"`, "1"), event("1e300", "1"), event("1e400", "1"),
			event("-5", "1"), event("10", "-1"), event("10", `"NaN"`), event("10", "1e300")}, ",") + "]"),
			warnings: []string{"dropped 4 events: invalid ts", "dropped 1 event: negative dur", "dropped 2 events: invalid dur"}, events: 2},
		{name: "kernels 63 years apart", in: text(`[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":1,"args":{"device":0,"stream":7}},` +
			`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":2e15,"dur":1,"args":{"device":0,"stream":7}}]`), events: 2},
		{name: "bare NaN literal", in: text("[" + event("10", "1") + "," + event("NaN", "1") + "]"),
			warnings: []string{fmt.Sprintf("invalid JSON at byte %d (invalid character 'N' at start of value): kept 1 event before it", 1+len(event("10", "1"))+1+len(`{"ph":"X","name":"e","pid":1,"tid":1,"ts":`))},
			events:   1}, // invalid part-way (Trace.Invalid), not truncated
		{name: "B without E and E without B", in: text(`[{"ph":"B","name":"open","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":2,"ts":3},` + event("2", "1") + "]"),
			warnings: []string{"dropped 1 event: unmatched E (no open B on its thread)", "dropped 1 event: unmatched B (no E before the end)"}, events: 1},
		{name: "E before its B", in: text(`[{"ph":"B","name":"b","pid":1,"tid":1,"ts":5},{"ph":"E","pid":1,"tid":1,"ts":4},` + event("2", "1") + "]"),
			warnings: []string{"dropped 1 event: E before its B"}, events: 1},

		// Resource limits.
		{name: "10 million events of one name", in: stream("[", same, 10_000_000, "]"), opt: trace.Options{MaxEvents: 100_000},
			err:   fmt.Sprintf("more than 100000 events at byte %d (raise --max-events if the trace is genuine)", 1+100_001*len(same)-1),
			limit: true, maxAlloc: 50 << 20},
		{name: "10 million B events without E", in: stream("[", begin, 10_000_000, "]"), opt: trace.Options{MaxEvents: 100_000},
			err:   fmt.Sprintf("more than 100000 events at byte %d (raise --max-events if the trace is genuine)", 1+100_001*len(begin)-1),
			limit: true, maxAlloc: 50 << 20},
		{name: "XPlane of more empty events than --max-events", in: text(string(tracetest.EmptyEvents(1000, 0))), opt: trace.Options{MaxEvents: 100},
			err:   "more than 100 events, in the XLine whose events start at byte 21 (raise --max-events if the trace is genuine)",
			limit: true},
		{name: "a 100 MB string", in: stream(`[{"ph":"X","name":"`, "a", 100e6, `","pid":1,"tid":1,"ts":1,"dur":1}]`),
			err:   "JSON value or white space from byte 1 runs past 16777216 bytes, longer than any trace event (raise --max-value if the trace is genuine)",
			limit: true, maxAlloc: 100 << 20},
		{name: "a gigabyte of white space in the event array", in: stream(head, " ", 1e9, "]}"),
			err:   "JSON value or white space from byte 16 runs past 16777216 bytes, longer than any trace event (raise --max-value if the trace is genuine)",
			limit: true, maxAlloc: 100 << 20},
		{name: "args nested 10,000 levels deep", in: stream(deep, `{"a":`, 10_000, "1"+strings.Repeat("}", 10_000)+"}]"),
			// The array and the event are levels 1 and 2: the 9999th
			// object of args would be level 10001.
			err:   fmt.Sprintf("JSON nested more than 10000 levels deep at byte %d, deeper than any trace", len(deep)+9998*5),
			limit: true, maxAlloc: 100 << 20},
		{name: "larger than --max-bytes", in: stream("[", same, 100_000, "]"), opt: trace.Options{MaxBytes: 1 << 20},
			err:   "input larger than 1048576 bytes after decompression (raise --max-bytes if the trace is genuine)",
			limit: true},
		{name: "gzip bomb of zeros", in: bomb("", 0),
			err: "unrecognised format: starts with 512 zero bytes, expected " + titles, maxAlloc: 100 << 20},
		{name: "gzip bomb of zeros read as XPlane", in: bomb("", 0), opt: trace.Options{Format: "xplane"},
			errRE: `^gzip expands more than 200x \(\d+ bytes from \d+\): not a real trace \(real ones expand 5-30x\), likely a decompression bomb$`,
			limit: true, maxAlloc: 100 << 20},
		{name: "gzip bomb of white space in a trace", in: bomb(head, ' '),
			errRE: `^gzip expands more than 200x \(\d+ bytes from \d+\): not a real trace \(real ones expand 5-30x\), likely a decompression bomb$`,
			limit: true, maxAlloc: 100 << 20},

		// Order and repetition are not errors.
		{name: "events out of order", in: text("[" + event("30", "1") + "," + event("10", "1") + "," + event("20", "1") + "]"), events: 3},
		{name: "duplicate step numbers", in: text(`[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":10},` +
			`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":10,"dur":10}]`), events: 2},
	}
}

// gzippedCut is s gzipped and cut where its first n decompressed bytes
// end: the decompressor gives exactly those, then fails.
func gzippedCut(s string, n int) func(*testing.T) (io.Reader, int64) {
	return func(t *testing.T) (io.Reader, int64) {
		// Two members: the first holds the n bytes, so a cut right after
		// it leaves them whole and the gzip reader fails in the next
		// member's header.
		b := slices.Concat(gzipBytes(t, s[:n]), gzipBytes(t, s[n:])[:5])
		return bytes.NewReader(b), int64(len(b))
	}
}

// gzipBytesNoT is gzipBytes for use outside a test, when building the
// catalogue; compressing a string cannot fail.
func gzipBytesNoT(s string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, s)
	zw.Close()
	return buf.Bytes()
}

// cutXSpace is a valid one-plane XSpace cut in half, so that its plane's
// length runs past the end, and the error that reading it gives.
func cutXSpace() ([]byte, string) {
	b, err := proto.Marshal(&pb.XSpace{Planes: []*pb.XPlane{gpuPlane(10, 5, 10)}})
	if err != nil {
		return nil, err.Error()
	}
	plane, n := protowire.ConsumeVarint(b[1:])
	cut := b[:len(b)/2]
	return cut, fmt.Sprintf("not a valid XSpace (likely corrupted): at byte 1: planes (1) is %d bytes long, but only %d bytes remain in the %d-byte input",
		plane, len(cut)-1-n, len(cut))
}

// xspaceTimes is an XSpace with a good kernel, one of negative duration
// and one on a line so late that its start overflows.
func xspaceTimes() func(*testing.T) (io.Reader, int64) {
	return func(t *testing.T) (io.Reader, int64) {
		p := gpuPlane(1_000_000, 2_000_000, 1)
		p.Lines[0].Events = append(p.Lines[0].Events,
			&pb.XEvent{MetadataId: 1, Data: &pb.XEvent_OffsetPs{OffsetPs: 5_000_000}, DurationPs: -1_000_000})
		p.Lines = append(p.Lines, &pb.XLine{Id: 8, Name: "Stream #8(Compute)", TimestampNs: math.MaxInt64 - 10,
			Events: []*pb.XEvent{{MetadataId: 1, Data: &pb.XEvent_OffsetPs{OffsetPs: 1_000_000}, DurationPs: 1000}}})
		b := marshal(t, &pb.XSpace{Planes: []*pb.XPlane{p}})
		return bytes.NewReader(b), int64(len(b))
	}
}

// gpuPlane is a GPU plane with one stream line holding n kernels.
func gpuPlane(offsetPs, durPs int64, n int) *pb.XPlane {
	line := &pb.XLine{Id: 7, Name: "Stream #7(Compute)", TimestampNs: 1_000_000}
	for i := range n {
		line.Events = append(line.Events, &pb.XEvent{MetadataId: 1, Data: &pb.XEvent_OffsetPs{OffsetPs: offsetPs * int64(i+1)}, DurationPs: durPs})
	}
	return &pb.XPlane{Id: 1, Name: "/device:GPU:0", Lines: []*pb.XLine{line},
		EventMetadata: map[int64]*pb.XEventMetadata{1: {Id: 1, Name: "gemm_kernel"}}}
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCatalogue reads every input of the catalogue and checks the exact
// outcome, and that a trace read from bad input keeps every promise of a
// trace (analyze.TestReaderWarningsCarried takes such a trace on).
func TestCatalogue(t *testing.T) {
	for _, c := range catalogue() {
		t.Run(c.name, func(t *testing.T) {
			r, size := c.in(t)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			tr, err := trace.Read(r, size, c.opt)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; c.maxAlloc > 0 && alloc > c.maxAlloc {
				t.Errorf("allocated %d MB, want at most %d MB", alloc>>20, c.maxAlloc>>20)
			}
			if c.err != "" || c.errRE != "" {
				checkError(t, tr, err, c)
				return
			}
			if err != nil {
				t.Fatalf("error %q, want a trace", err)
			}
			if !slices.Equal(tr.Warnings, c.warnings) {
				t.Errorf("warnings\n%q\nwant\n%q", tr.Warnings, c.warnings)
			}
			if tr.Truncated != c.truncated || len(tr.Events) != c.events {
				t.Errorf("truncated %v with %d events, want %v with %d", tr.Truncated, len(tr.Events), c.truncated, c.events)
			}
			checkInvariants(t, tr)
		})
	}
}

func checkError(t *testing.T, tr *trace.Trace, err error, c badInput) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("read %d events with warnings %q, want error %q%s", len(tr.Events), tr.Warnings, c.err, c.errRE)
	case tr != nil:
		t.Errorf("a trace with the error %q", err)
	case c.err != "" && err.Error() != c.err:
		t.Errorf("error\n%s\nwant\n%s", err, c.err)
	case c.errRE != "" && !regexp.MustCompile(c.errRE).MatchString(err.Error()):
		t.Errorf("error\n%s\nwant a match of\n%s", err, c.errRE)
	}
	if got := errors.Is(err, trace.ErrLimit); got != c.limit {
		t.Errorf("errors.Is(err, ErrLimit) = %v, want %v", got, c.limit)
	}
}

// TestTruncatedEverywhere cuts the small trace at every byte: before the
// first event ends the read fails saying where, after it the events before
// the cut are kept and the trace says it was truncated at that byte.
func TestTruncatedEverywhere(t *testing.T) {
	ends := []int{len(head) + len(hostEvent), len(head) + len(hostEvent) + 1 + len(kernel)}
	for n := 1; n < len(small); n++ {
		in := small[:n]
		tr, err := trace.Read(strings.NewReader(in), int64(n), trace.Options{})
		kept := 0
		for _, end := range ends {
			if n >= end {
				kept++
			}
		}
		if kept == 0 {
			if want := fmt.Sprintf("truncated at byte %d before any event", n); err == nil || err.Error() != want {
				t.Errorf("cut at %d (%q): error %v, want %q", n, in, err, want)
			}
			continue
		}
		if err != nil {
			t.Errorf("cut at %d (%q): %v", n, in, err)
			continue
		}
		want := []string{fmt.Sprintf("truncated at byte %d: kept %s", n, human.Count(kept, "event"))}
		if !tr.Truncated || len(tr.Events) != kept || !slices.Equal(tr.Warnings, want) {
			t.Errorf("cut at %d (%q): truncated %v, %d events, warnings %q; want %d events, %q", n, in, tr.Truncated, len(tr.Events), tr.Warnings, kept, want)
		}
	}
}

// zipHead is the start of a zip archive whose first file is called name:
// its local file header, all zero but the name's length.
func zipHead(name string) string {
	h := make([]byte, 30)
	copy(h, "PK\x03\x04")
	binary.LittleEndian.PutUint16(h[26:], uint16(len(name)))
	return string(h) + name
}
