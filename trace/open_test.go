package trace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/chrome"
	"github.com/tracegap/tracegap/internal/trace/nsight"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/internal/trace/xplane"
	"github.com/tracegap/tracegap/trace"
)

// fuzzOptions keep fuzzed reads small: the caps are part of what is
// fuzzed.
var fuzzOptions = trace.Options{MaxEvents: 1 << 12, MaxValueBytes: 1 << 12, MaxBytes: 1 << 20}

// FuzzOpen feeds arbitrary bytes to trace.Read, which sniffs the format,
// decompresses gzip and dispatches to a reader. It must never panic or
// hang; it returns a trace that keeps the model's invariants or an error,
// never both; and the same bytes gzipped read the same. The seeds in
// testdata/fuzz/FuzzOpen hold the first events of real traces of both
// formats, their gzip forms and damaged inputs.
func FuzzOpen(f *testing.F) {
	f.Add([]byte(small))
	f.Add([]byte("[" + event("1", "2") + "," + event("\"3.5\"", "1")))
	f.Add([]byte("\x0a\x12\x12\x0d/device:GPU:0\x1a\x80\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := trace.Read(bytes.NewReader(data), int64(len(data)), fuzzOptions)
		if err != nil {
			if tr != nil {
				t.Fatalf("error %v with a trace", err)
			}
			if strings.ContainsAny(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		} else {
			checkInvariants(t, tr)
		}
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return // already gzip: gzipping it again changes what it is
		}
		gz := gzipBytes(t, string(data))
		ztr, zerr := trace.Read(bytes.NewReader(gz), int64(len(gz)), fuzzOptions)
		if !sameRead(tr, err, ztr, zerr) {
			t.Fatalf("plain and gzipped reads differ:\nplain: %s\ngzip:  %s", describeRead(tr, err), describeRead(ztr, zerr))
		}
	})
}

// sameRead reports whether two reads of the same content agree: the same
// error, or traces with the same events, tracks, warnings and cut.
func sameRead(a *trace.Trace, aerr error, b *trace.Trace, berr error) bool {
	if aerr != nil || berr != nil {
		return aerr != nil && berr != nil && aerr.Error() == berr.Error()
	}
	return a.Format == b.Format && a.Bytes == b.Bytes && a.Truncated == b.Truncated &&
		slices.Equal(a.Events, b.Events) && slices.Equal(a.Strings, b.Strings) &&
		slices.Equal(a.Tracks, b.Tracks) && slices.Equal(a.Warnings, b.Warnings)
}

func describeRead(tr *trace.Trace, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return strings.Join(append([]string{tr.Format}, tr.Warnings...), "; ")
}

// checkInvariants checks what every reader promises about a trace: tracks
// cover the events one after the other, in order, times are non-negative
// and sorted within a track, ids index the string table, categories are
// none or one an event, device tracks name a device and only device
// tracks hold work.
func checkInvariants(t *testing.T, tr *trace.Trace) {
	t.Helper()
	if tr.Cats != nil && len(tr.Cats) != len(tr.Events) {
		t.Fatalf("%d categories for %d events", len(tr.Cats), len(tr.Events))
	}
	next := 0
	for i, k := range tr.Tracks {
		if k.Hi < k.Lo || k.Hi > len(tr.Events) || k.Lo != next {
			t.Fatalf("track %d spans [%d, %d) after %d of %d events", i, k.Lo, k.Hi, next, len(tr.Events))
		}
		next = k.Hi
		if k.Kind == trace.TrackDevice && k.Device == "" {
			t.Errorf("device track %d without a device", i)
		}
		evs := tr.TrackEvents(i)
		for j, e := range evs {
			switch {
			case tr.TrackOf(k.Lo+j) != i, e.Start < 0, e.Dur() < 0, e.End() < e.Start,
				int(e.Name) >= len(tr.Strings), int(tr.Cat(k.Lo+j)) >= len(tr.Strings):
				t.Fatalf("track %d event %d: %+v", i, j, e)
			case e.Kind == trace.KindWork && k.Kind != trace.TrackDevice:
				t.Fatalf("track %d (%v) event %d is work", i, k.Kind, j)
			case j > 0 && evs[j-1].Start > e.Start:
				t.Fatalf("track %d events %d and %d out of order", i, j-1, j)
			}
		}
	}
	if next != len(tr.Events) {
		t.Fatalf("tracks cover %d of %d events", next, len(tr.Events))
	}
}

// FuzzSniff checks the format sniffers on arbitrary heads: no panic, no
// head claimed by two formats, and trace.Read refuses as unrecognised
// exactly the inputs that no format claims, other than those it refuses
// by name (trace.Refused).
func FuzzSniff(f *testing.F) {
	f.Add([]byte(`{"traceEvents":[]}`))
	f.Add([]byte("\n{\x12\x0d/device:GPU:0"))
	f.Add([]byte("[\n"))
	f.Add([]byte("SQLite format 3\x00\x10\x00"))
	f.Add([]byte("NVIDIA Tegra Profiler Report 2026"))
	f.Fuzz(func(t *testing.T, data []byte) {
		head := data[:min(len(data), 512)]
		isChrome, isXPlane, isNsight := chrome.Sniff(head), xplane.Sniff(head), nsight.Sniff(head)
		if n := btoi(isChrome) + btoi(isXPlane) + btoi(isNsight); n > 1 {
			t.Fatalf("%d formats claim %q", n, head)
		}
		if len(data) == 0 || len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			return
		}
		_, err := trace.Read(bytes.NewReader(data), int64(len(data)), fuzzOptions)
		unrecognised := err != nil && strings.HasPrefix(err.Error(), "unrecognised format: ")
		claimed := isChrome || isXPlane || isNsight
		if what := trace.Refused(head); what != nil && !claimed {
			if err == nil || err.Error() != what.Error() {
				t.Fatalf("a refused input (%s), but Read says %v", what, err)
			}
			return
		}
		if unrecognised == claimed {
			t.Fatalf("chrome %v, xplane %v, nsight %v, but Read says %v", isChrome, isXPlane, isNsight, err)
		}
	})
}

// TestTenMillionEvents reads ten million events of one name, streamed, with
// the default limits: the trace keeps them all and, beyond the events
// themselves, memory does not grow with their number.
func TestTenMillionEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 310 MB of JSON")
	}
	const n = 10_000_000
	in, _ := stream("[", `{"ph":"i","name":"same","ts":1},`, n-1, `{"ph":"i","name":"same","ts":1}]`)(t)
	tr, err := trace.Read(in, 0, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if len(tr.Events) != n || len(tr.Tracks) != 1 || len(tr.Strings) != 2 {
		t.Fatalf("%d events on %d tracks with %d strings, want %d on 1 with 2", len(tr.Events), len(tr.Tracks), len(tr.Strings), n)
	}
	// The events, and a little more: nothing per event is kept beside them.
	if limit := uint64(n) * uint64(unsafe.Sizeof(trace.Event{})) * 5 / 4; ms.HeapAlloc > limit {
		t.Errorf("heap holds %d MB after the read, want at most %d MB", ms.HeapAlloc>>20, limit>>20)
	}
	runtime.KeepAlive(tr)
}

// TestRatioGuardSparesRealTraces reads the real gzipped traces with the
// ratio cap at 40x, a fifth of the default: real traces expand 5-30x, so
// the guard refuses bombs (about 1000x) and nothing real.
func TestRatioGuardSparesRealTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every real gzipped trace; the bomb tests check the guard itself")
	}
	dir := realtraces.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.json.gz"))
	if len(files) == 0 {
		t.Skip("no gzipped real traces")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr, err := trace.Open(path, trace.Options{MaxRatio: 40})
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if ratio := tr.Bytes / st.Size(); ratio > 30 {
				t.Errorf("expands %dx, past the 5-30x the guard's default assumes", ratio)
			}
		})
	}
}

// TestBombRefused: gzip bombs are refused, the size cap and the ratio cap
// each on their own, with the error saying which and wrapping ErrLimit.
func TestBombRefused(t *testing.T) {
	tests := []struct {
		name string
		opt  trace.Options
		want string
	}{
		{"ratio", trace.Options{}, "gzip expands more than 200x ("},
		{"size", trace.Options{MaxBytes: 4 << 20, MaxRatio: 1 << 20}, "input larger than 4194304 bytes after decompression (raise --max-bytes if the trace is genuine)"},
		{"ratio set", trace.Options{MaxRatio: 2000, MaxBytes: 64 << 20, MaxValueBytes: 1 << 30}, "input larger than 67108864 bytes after decompression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tracetest.GzipBomb([]byte(head), ' ', 10e9)
			if err != nil {
				t.Fatal(err)
			}
			_, err = trace.Read(r, 0, tt.opt)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, trace.ErrLimit) {
				t.Errorf("error %v, want one starting %q and wrapping ErrLimit", err, tt.want)
			}
		})
	}
}

// TestGzipBomb checks the test bomb itself: a valid gzip file of the
// promised content.
func TestGzipBomb(t *testing.T) {
	const size = 5<<20 + 12345
	r, err := tracetest.GzipBomb([]byte("prefix"), 'x', size)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr) // checks the trailer's CRC and size
	if err != nil {
		t.Fatal(err)
	}
	want := "prefix" + strings.Repeat("x", size-6)
	if string(out) != want || len(gz) > size/500 {
		t.Errorf("%d bytes expand to %d, want at most %d expanding to %d", len(gz), len(out), size/500, size)
	}
}

// TestLongEvents reads an event longer than an Event holds (trace.MaxDur,
// 78 hours) from each format: it is kept, cut to MaxDur, and the trace
// says so, the same way in both.
func TestLongEvents(t *testing.T) {
	const long = 100 * 3600 * 1_000_000_000 // 100 hours
	s := &tracetest.Spec{Threads: []tracetest.Thread{{TID: 1, Name: "main"}}, Events: []tracetest.Event{
		{Role: tracetest.CPUOp, Name: "train", Thread: 1, Start: 1_000_000, Dur: long},
		{Role: tracetest.CPUOp, Name: "step", Thread: 1, Start: 2_000_000, Dur: 5_000},
	}}
	writers := map[string]func(io.Writer, *tracetest.Spec) error{"chrome": tracetest.WriteChrome, "xplane": tracetest.WriteXPlane}
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := write(&buf, s); err != nil {
				t.Fatal(err)
			}
			tr, err := trace.Read(&buf, int64(buf.Len()), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			durs := map[string]int64{}
			for _, e := range tr.Events {
				durs[tr.Str(e.Name)] = e.Dur()
			}
			if durs["train"] != trace.MaxDur || durs["step"] != 5_000 {
				t.Errorf("durations %v, want train cut to %d and step 5000", durs, int64(trace.MaxDur))
			}
			want := "cut 1 events lasting longer than 78 hours, the most an event holds, to 78 hours"
			if !slices.Contains(tr.Warnings, want) {
				t.Errorf("warnings %q, want %q", tr.Warnings, want)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
