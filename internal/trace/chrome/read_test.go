package chrome

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/human"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

func TestParseMicros(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"10", 10_000, true},
		{"1.5", 1_500, true},
		{"1712345678901234.567", 1712345678901234567, true},
		{"1712195495519695.8", 1712195495519695800, true},
		{"63.813", 63_813, true},
		{"0.0005", 1, true},    // rounds on the fourth decimal
		{"0.0004999", 0, true}, // only the fourth decimal decides
		{"2.0009999", 2_001, true},
		{"-1.5", -1_500, true},
		{"1e3", 1_000_000, true},
		{"1.5E-3", 2, true}, // 1.5 ns rounds half away from zero
		{" 7 ", 7_000, true},
		{"", 0, false},
		{"abc", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"NaN", 0, false},
		{"Infinity", 0, false},
		{"1e", 0, false},
		{"1e400", 0, false},
		{"0x10", 0, false},
		{"99999999999999999999", 0, false},
		{"9223372036854775.807", 0, false}, // overflows int64 ns
	} {
		got, ok := parseMicros([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMicros(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestEventKeyWord checks the one-word recognition of member names
// against the scan and switch it stands in for: it must know each kept
// name followed at once by its colon, give it the same meaning, and
// leave everything else, however close, to the scan.
func TestEventKeyWord(t *testing.T) {
	for _, name := range []string{"ph", "ts", "id", "cat", "dur", "pid", "tid", "name", "args"} {
		in := `"` + name + `":1234567`
		k, n := eventKeyWord(binary.LittleEndian.Uint64([]byte(in)))
		if want := eventKey([]byte(name)); k != want || n != len(name)+2 {
			t.Errorf("eventKeyWord(%q) = %d, %d; want %d, %d", in, k, n, want, len(name)+2)
		}
	}
	for _, in := range []string{`"ph" :1,"`, `"phx":1,"`, `"p\u0068":`, `"names":1`, `"nam":1,"`, `"Ph":1,"x`,
		`"tid"}"x"`, `"args" :{`, `"cat\":":`, `"":1,"abc`, `{"ph":"X`} {
		if k, n := eventKeyWord(binary.LittleEndian.Uint64([]byte(in))); n != 0 {
			t.Errorf("eventKeyWord(%q) = %d, %d; want it left to the scan", in, k, n)
		}
	}
}

// TestFastMicros checks the one-pass reading of times against the full
// scan and parse: where it answers, it must agree with them on the value
// and on where the number ends; it must leave alone what they reject or
// round, what runs to the window's end, and times out of range.
func TestFastMicros(t *testing.T) {
	for _, tc := range []struct {
		in   string // a number followed by what ends it
		want bool   // whether the one pass answers
	}{
		{"1610366728298088.0,", true},
		{"16103667,", true},
		{"161036672,", true},
		{"161036672.5,", true},
		{"1610366728298088,", true},
		{"161036672829808,", true},
		{"12345678:", true},
		{"1234567a,", true}, // the scan of the object finds the a
		{"1234567/,", true},
		{"0123456789012345,", false},
		{"1712345678901234.567}", true},
		{"10,", true},
		{"0,", true},
		{"0.5,", true},
		{"63.81,", true},
		{"9.999 ", true},
		{"2305843009213693.951,", true},  // maxTime - 1
		{"2305843009213693.953,", false}, // past maxTime
		{"2305843009213694,", false},
		{"9999999999999999,", false},
		{"12345678901234567,", false},
		{"3.0004,", false}, // rounds on the fourth decimal
		{"1e3,", false},
		{"1.5E-3,", false},
		{"-1.5,", false},
		{"01,", false},
		{"00.5,", false},
		{"1.,", false},
		{"1.e3,", false},
		{"12", false},  // the window ends: more digits may follow
		{"12.", false}, // likewise
		{"abc,", false},
	} {
		b := []byte(tc.in)
		ns, end, ok := fastMicros(b, 0)
		if ok != tc.want {
			t.Errorf("fastMicros(%q) ok = %v, want %v", tc.in, ok, tc.want)
			continue
		}
		if !ok {
			continue
		}
		s := scanner{b: b}
		wantEnd := s.number(0)
		wantNs, wantOK := parseMicros(b[:max(wantEnd, 0)])
		if end != wantEnd || ns != wantNs || !wantOK {
			t.Errorf("fastMicros(%q) = %d, end %d; the full scan and parse give %d (ok %v), end %d", tc.in, ns, end, wantNs, wantOK, wantEnd)
		}
	}
}

// TestExactTimes reads times written in every accepted form and checks the
// absolute nanoseconds.
func TestExactTimes(t *testing.T) {
	for _, tc := range []struct {
		ts, dur         string
		wantTs, wantDur int64
	}{
		{`1.5`, `2`, 1_500, 2_000},
		{`1712345678901234.567`, `63.813`, 1712345678901234567, 63_813},
		{`10`, `0.001`, 10_000, 1},
		{`1e3`, `1E1`, 1_000_000, 10_000},
		{`"1712345678901234.567"`, `"0.5"`, 1712345678901234567, 500},
		{`"12"`, `3.0004`, 12_000, 3_000},
	} {
		in := `[{"ph":"X","name":"k","pid":1,"tid":1,"ts":` + tc.ts + `,"dur":` + tc.dur + `}]`
		tr := mustRead(t, in)
		if len(tr.Events) != 1 {
			t.Fatalf("%s: %d events, want 1", in, len(tr.Events))
		}
		e := tr.Events[0]
		if got := tr.StartNs + e.Start; got != tc.wantTs || e.Dur() != tc.wantDur {
			t.Errorf("ts %s dur %s: got %d+%d ns, want %d+%d", tc.ts, tc.dur, got, e.Dur(), tc.wantTs, tc.wantDur)
		}
	}
}

// TestRealNsTimestamps checks a long-float timestamp of the HTA trace
// captured at nanosecond resolution: "ts": 1712195495519695.812, "dur":
// 53.090 for DivBackward1 must come out exact (a float64 holds that ts only
// to a quarter microsecond: ...695.75).
func TestRealNsTimestamps(t *testing.T) {
	tr, err := trace.Open(realtraces.Dir(t)+"/hta-ddp-cnn-ns-timestamps.pt.trace.json.gz", trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range find(tr, "DivBackward1") {
		if tr.StartNs+e.Start == 1712195495519695812 {
			if e.Dur() != 53_090 {
				t.Errorf("DivBackward1 dur %d ns, want 53090", e.Dur())
			}
			return
		}
	}
	t.Errorf("no DivBackward1 at 1712195495519695812 ns")
}

func TestBeginEnd(t *testing.T) {
	in := `[
{"ph":"B","name":"outer","pid":1,"tid":1,"ts":10},
{"ph":"B","name":"inner","pid":1,"tid":1,"ts":12,"args":{"correlation":5}},
{"ph":"B","name":"other","pid":1,"tid":2,"ts":13},
{"ph":"E","pid":1,"tid":1,"ts":15},
{"ph":"E","pid":1,"tid":2,"ts":16},
{"ph":"E","pid":1,"tid":1,"ts":20},
{"ph":"E","pid":1,"tid":1,"ts":21},
{"ph":"B","name":"open","pid":1,"tid":3,"ts":22},
{"ph":"B","name":"late","pid":1,"tid":4,"ts":30},
{"ph":"E","pid":1,"tid":4,"ts":25}
]`
	tr := mustRead(t, in)
	type ev struct {
		name       string
		start, dur int64
		corr       uint64
	}
	var got []ev
	for _, e := range tr.Events {
		got = append(got, ev{tr.Str(e.Name), e.Start, e.Dur(), tr.CorrID(e.Corr)})
	}
	want := []ev{{"outer", 0, 10_000, 0}, {"inner", 2_000, 3_000, 5}, {"other", 3_000, 3_000, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	wantWarn := []string{
		"dropped 1 event: unmatched E (no open B on its thread)",
		"dropped 1 event: E before its B",
		"dropped 1 event: unmatched B (no E before the end)",
	}
	if !reflect.DeepEqual(tr.Warnings, wantWarn) {
		t.Errorf("warnings %q, want %q", tr.Warnings, wantWarn)
	}
}

// TestFlowsFillCorr: a trace without correlation args still links the
// launch to its kernel through the ac2g flow, whose id is the correlation.
func TestFlowsFillCorr(t *testing.T) {
	in := `{"traceEvents":[
{"ph":"f","id":42,"pid":0,"tid":7,"ts":20,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":10,"dur":5},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":9,"tid":9,"ts":10,"dur":8},
{"ph":"s","id":42,"pid":9,"tid":9,"ts":10,"cat":"ac2g","name":"ac2g"},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":20,"dur":4,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"kernel","name":"relu","pid":0,"tid":7,"ts":30,"dur":4,"args":{"device":0,"stream":7,"correlation":77}},
{"ph":"f","id":43,"pid":0,"tid":7,"ts":30,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"s","id":50,"pid":9,"tid":9,"ts":11,"cat":"fwdbwd","name":"fwdbwd"}
]}`
	tr := mustRead(t, in)
	want := map[string]uint64{"cudaLaunchKernel": 42, "aten::mm": 0, "gemm": 42, "relu": 77}
	for name, corr := range want {
		evs := find(tr, name)
		if len(evs) != 1 || tr.CorrID(evs[0].Corr) != corr {
			t.Errorf("%s: %+v, want one event with Corr %d", name, evs, corr)
		}
	}
}

// TestKineto checks kinds, flags, tracks and names on both Kineto
// generations, with metadata arriving after the events it names.
func TestKineto(t *testing.T) {
	in := `{"schemaVersion":1,"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":100,"tid":100,"ts":0,"dur":100},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":100,"tid":100,"ts":1,"dur":9,"args":{"correlation":1}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":2,"dur":3,"args":{"device":0,"stream":7,"correlation":1}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":6,"dur":1,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy","pid":0,"tid":7,"ts":8,"dur":1,"args":{"device":0,"stream":7,"kind":"DtoH"}},
{"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":0,"tid":7,"ts":9,"dur":1,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#3","pid":0,"tid":7,"ts":2,"dur":50,"args":{"device":0}},
{"ph":"X","cat":"Kernel","name":"sgemm","pid":1,"tid":"stream 3","ts":20,"dur":5,"args":{"device":1}},
{"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":100,"tid":"200","ts":18,"dur":2,"args":{"correlation":9}},
{"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":200},
{"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","ts":0,"dur":200},
{"ph":"C","name":"memory","pid":100,"ts":5,"args":{"bytes":10}},
{"ph":"P","name":"sample","pid":100,"tid":100,"ts":5},
{"name":"thread_name","ph":"M","pid":100,"tid":100,"args":{"name":"thread 100 (python)"}},
{"name":"thread_name","ph":"M","pid":100,"tid":200,"args":{"name":"pt_autograd_0"}},
{"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"python"}}
],"traceName":"run.json","baseTimeNanoseconds":1700000000000000000,
"distributedInfo":{"backend":"nccl","rank":3,"world_size":8,"pg_config":[{"ranks":[0,1]}]},
"deviceProperties":[{"id":0,"name":"NVIDIA A100"},{"id":1,"name":"Tesla V100"}]}`
	tr := mustRead(t, in)
	type tk struct {
		kind         trace.TrackKind
		device, name string
	}
	var tracks []tk
	for _, k := range tr.Tracks {
		tracks = append(tracks, tk{k.Kind, k.Device, k.Name})
	}
	wantTracks := []tk{
		{trace.TrackHost, "", "thread 100 (python)"},
		{trace.TrackDevice, "GPU:0", "GPU:0 stream 7"},
		{trace.TrackDevice, "GPU:1", "GPU:1 stream 3"},
		{trace.TrackHost, "", "thread 200 (pt_autograd_0)"},
		{trace.TrackOther, "", "global"},
		{trace.TrackOther, "", "Spans PyTorch Profiler"},
	}
	if !reflect.DeepEqual(tracks, wantTracks) {
		t.Errorf("tracks\n%v\nwant\n%v", tracks, wantTracks)
	}
	type ev struct {
		kind  trace.Kind
		flags trace.Flag
		corr  uint64
	}
	want := map[string]ev{
		"cudaMemcpyAsync":                  {trace.KindHost, trace.FlagMemcpy, 1},
		"Memcpy DtoH (Device -> Pageable)": {trace.KindWork, trace.FlagMemcpy | trace.FlagPageable | trace.FlagDtoH, 1},
		"Memcpy HtoD (Pageable -> Device)": {trace.KindWork, trace.FlagMemcpy | trace.FlagPageable, 0},
		"Memcpy":                           {trace.KindWork, trace.FlagMemcpy | trace.FlagDtoH, 0},
		"Memset (Device)":                  {trace.KindWork, trace.FlagMemset, 0},
		"sgemm":                            {trace.KindWork, 0, 0},
		"cudaLaunchKernel":                 {trace.KindHost, 0, 9},
		"Record Window End":                {trace.KindHost, trace.FlagInstant, 0},
	}
	for name, w := range want {
		evs := find(tr, name)
		if len(evs) != 1 || (ev{evs[0].Kind, evs[0].Flags, tr.CorrID(evs[0].Corr)}) != w {
			t.Errorf("%s: %+v, want one with %+v", name, evs, w)
		}
	}
	steps := find(tr, "ProfilerStep#3")
	if len(steps) != 2 || steps[0].Kind != trace.KindHost || steps[0].Flags != trace.FlagStep ||
		steps[1].Kind != trace.KindOverlay || steps[1].Flags != 0 {
		t.Errorf("ProfilerStep#3: %+v, want a host step and a device overlay without FlagStep", steps)
	}
	if got := tr.Devices(); !reflect.DeepEqual(got, []string{"GPU:0", "GPU:1"}) {
		t.Errorf("devices %v", got)
	}
	wantMeta := map[string]string{
		"trace_name": "run.json", "base_time_ns": "1700000000000000000",
		"backend": "nccl", "rank": "3", "world_size": "8",
		"device.0.name": "NVIDIA A100", "device.1.name": "Tesla V100",
	}
	if !reflect.DeepEqual(tr.Meta, wantMeta) {
		t.Errorf("meta %v, want %v", tr.Meta, wantMeta)
	}
	wantWarn := []string{"dropped 1 event: counter events (ph C) are not used", `dropped 1 event: unsupported phase 'P'`}
	if !reflect.DeepEqual(tr.Warnings, wantWarn) {
		t.Errorf("warnings %q, want %q", tr.Warnings, wantWarn)
	}
}

func TestXProfJSON(t *testing.T) {
	data, err := os.ReadFile("testdata/xprof-gpu.trace.json")
	if err != nil {
		t.Fatal(err)
	}
	tr := mustRead(t, string(data))
	type tk struct {
		name    string
		kind    trace.TrackKind
		derived bool
		evKind  trace.Kind
		flags   trace.Flag
	}
	var got []tk
	for i, k := range tr.Tracks {
		e := tr.TrackEvents(i)[0]
		got = append(got, tk{k.Name, k.Kind, k.Derived, e.Kind, e.Flags})
	}
	want := []tk{
		{"GPU:0 Stream #12(Compute)", trace.TrackDevice, false, trace.KindWork, 0},
		{"GPU:0 Stream #13(MemcpyD2H)", trace.TrackDevice, false, trace.KindWork, trace.FlagMemcpy | trace.FlagDtoH},
		{"GPU:0 Steps", trace.TrackDevice, true, trace.KindOverlay, trace.FlagStep},
		{"GPU:0 XLA Modules", trace.TrackDevice, true, trace.KindOverlay, 0},
		{"GPU:0 XLA Ops", trace.TrackDevice, true, trace.KindOverlay, 0},
		{"TPU:0 XLA Ops", trace.TrackDevice, false, trace.KindWork, 0},
		{"TPU:0 XLA Modules", trace.TrackDevice, true, trace.KindOverlay, 0},
		{"thread 5 (python3)", trace.TrackHost, false, trace.KindHost, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tracks\n%+v\nwant\n%+v", got, want)
	}
	busy := busyNs(tr, -1<<62, 1<<62)
	if wantBusy := map[string]int64{"GPU:0": 35_250, "TPU:0": 30_000}; !reflect.DeepEqual(busy, wantBusy) {
		t.Errorf("busy %v, want %v", busy, wantBusy)
	}
}

func TestSniff(t *testing.T) {
	for in, want := range map[string]bool{
		`{"traceEvents":[]}`:     true,
		"\xef\xbb\xbf \n[":       true,
		"  \t[{}":                true,
		"":                       false,
		"hello":                  false,
		"123":                    false,
		"\x0a\x05/host":          false,
		"{}":                     true,
		"[\n]":                   true,
		"[1":                     true,
		"\n{":                    true,
		"\n{\b\x01\x12\r/device": false, // an XSpace whose first plane is 123 bytes
		"\n[\x12\t/host:CPU":     false, // ... or 91
		"{\x00":                  false,
		strings.Repeat(" ", 512): true,
		strings.Repeat(" ", 100): false,
	} {
		if got := Sniff([]byte(in)); got != want {
			t.Errorf("Sniff(%q) = %v, want %v", in, got, want)
		}
	}
}

// A small valid trace in object form: cuts at several places must keep
// the events before the cut.
const small = `{"traceEvents":[
{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},
{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1},
{"ph":"X","name":"c","pid":1,"tid":1,"ts":3,"dur":1}
],"traceName":"t"}`

func TestTruncated(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		kept int
	}{
		{"mid first event", small[:strings.Index(small, `"b"`)-30], 0},
		{"after first event", small[:strings.Index(small, `{"ph":"X","name":"b"`)], 1},
		{"mid second event", small[:strings.Index(small, `"b"`)+5], 1},
		{"before closing bracket", small[:strings.Index(small, "]")], 3},
		{"after the array", small[:strings.Index(small, "]")+1], 3},
		{"mid trailing key", small[:len(small)-5], 3},
		{"bare array without bracket", "[" + strings.Join(strings.Split(small, "\n")[1:4], "\n"), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := readString(t, tc.in)
			if tc.kept == 0 {
				if err == nil || !strings.Contains(err.Error(), "truncated at byte") {
					t.Fatalf("err %v, want a truncation error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Events) != tc.kept || !tr.Truncated {
				t.Errorf("%d events, truncated %v; want %d, true", len(tr.Events), tr.Truncated, tc.kept)
			}
			want := "truncated at byte " // then the offset
			if len(tr.Warnings) != 1 || !strings.HasPrefix(tr.Warnings[0], want) ||
				!strings.HasSuffix(tr.Warnings[0], ": kept "+human.Count(tc.kept, "event")) {
				t.Errorf("warnings %q, want one %q...: kept %d events", tr.Warnings, want, tc.kept)
			}
		})
	}
}

// TestTruncatedGzip cuts a gzip stream: the events decompressed before the
// cut are kept.
func TestTruncatedGzip(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(`{"ph":"X","cat":"cpu_op","name":"op` + strings.Repeat("x", i%7) + `","pid":1,"tid":1,"ts":` + strconv.Itoa(i%10) + `,"dur":1}`)
	}
	b.WriteString("]}")
	z := tracetest.Gzip([]byte(b.String()))
	cut := z[:len(z)*2/3]
	tr, err := trace.Read(bytes.NewReader(cut), int64(len(cut)), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Truncated || len(tr.Events) == 0 || len(tr.Events) >= 2000 {
		t.Errorf("%d events, truncated %v; want part of 2000, true", len(tr.Events), tr.Truncated)
	}
	if len(tr.Warnings) != 1 || !strings.HasPrefix(tr.Warnings[0], "truncated at byte ") ||
		!strings.Contains(tr.Warnings[0], "(gzip stream truncated after ") {
		t.Errorf("warnings %q, want one about the cut gzip stream", tr.Warnings)
	}
	// Cut before the first event: nothing usable.
	// The stream is flushed after the white space, so the bytes up to
	// there decompress to it.
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(strings.Repeat(" ", 100_000)))
	zw.Flush()
	cutAt := zb.Len()
	zw.Write([]byte(b.String()))
	zw.Close()
	_, err = trace.Read(bytes.NewReader(zb.Bytes()[:cutAt]), 0, trace.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "truncated at byte ") || !strings.Contains(err.Error(), "before any event (gzip stream truncated") {
		t.Errorf("gzip cut before any event: err %v", err)
	}
	// Cut in the gzip header: nothing usable.
	if _, err := trace.Read(bytes.NewReader(z[:12]), 12, trace.Options{}); err == nil {
		t.Errorf("gzip cut at 12 bytes: no error")
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		err      string // the error must contain this; "" means no error
		warn     string // with no error, the one warning expected
		events   int
	}{
		{"empty", "", "empty file", "", 0},
		{"plain text", "hello, world\n", "unrecognised format", "", 0},
		{"only white space", "  \n ", "unrecognised format", "", 0},
		{"not a trace", `{"a":1}`, "no traceEvents array", "", 0},
		{"traceEvents not an array", `{"traceEvents":{"a":1}}`, "traceEvents at byte 15 is a JSON object, expected an array of events", "", 0},
		{"truncated object", `{"traceEvents":[`, "truncated at byte 16 before any event", "", 0},
		{"garbage inside", `{"traceEvents":[{"ph":"X"}, nope]}`, "invalid JSON at byte 29: invalid character 'o'", "", 0},
		{"array of numbers", `[1,2,3]`, "no usable events: dropped 3 events (first: event is a JSON number, expected an object)", "", 0},
		{"number for a name", `[{"ph":"X","name":5,"pid":1,"tid":1,"ts":1,"dur":1}]`, "name is a JSON number, expected a string", "", 0},
		{"negative dur", `[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":-1},{"ph":"X","name":"b","pid":1,"tid":1,"ts":1,"dur":1}]`, "", "dropped 1 event: negative dur", 1},
		{"NaN dur", `[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":"NaN"},{"ph":"X","name":"b","pid":1,"tid":1,"ts":1,"dur":1}]`, "", "dropped 1 event: invalid dur", 1},
		{"object pid", `[{"ph":"X","name":"a","pid":{},"tid":1,"ts":1,"dur":1},{"ph":"X","name":"b","pid":1,"tid":1,"ts":1,"dur":1}]`, "", "dropped 1 event: pid is a JSON object, expected a number or string", 1},
		{"missing ts", `[{"ph":"X","name":"a","pid":1,"tid":1},{"ph":"i","name":"b","pid":1,"tid":1,"ts":1}]`, "", "dropped 1 event: missing ts", 1},
		{"empty trace", `{"traceEvents":[]}`, "", "", 0},
		{"trailing garbage", `[{"ph":"i","name":"b","pid":1,"tid":1,"ts":1}] x`, "", "ignored trailing data at byte 47 after the trace", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := trace.Read(strings.NewReader(tc.in), int64(len(tc.in)), trace.Options{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			if tc.warn != "" {
				want = []string{tc.warn}
			}
			if len(tr.Events) != tc.events || !reflect.DeepEqual(tr.Warnings, want) {
				t.Errorf("%d events, warnings %q; want %d, %q", len(tr.Events), tr.Warnings, tc.events, want)
			}
		})
	}
}

// TestForcedFormat feeds documents that the sniffer would refuse straight
// to the reader.
func TestForcedFormat(t *testing.T) {
	for in, want := range map[string]string{
		`123`:     "top-level JSON number at byte 0",
		`"trace"`: "top-level JSON string at byte 0",
		`nope`:    "invalid JSON at byte 1",
		`nul`:     "truncated at byte 3 before any event",
	} {
		_, err := readString(t, in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", in, err, want)
		}
	}
}

func TestMaxEvents(t *testing.T) {
	in := `[{"ph":"i","pid":1,"tid":1,"ts":1},{"ph":"i","pid":1,"tid":1,"ts":2},{"ph":"i","pid":1,"tid":1,"ts":3}]`
	_, err := trace.Read(strings.NewReader(in), 0, trace.Options{MaxEvents: 2})
	if !errors.Is(err, trace.ErrLimit) {
		t.Errorf("err %v, want ErrLimit", err)
	}
}

// TestEscapes: escaped names, keys and pids are read as their text.
func TestEscapes(t *testing.T) {
	in := `[{"ph":"X","name":"a\"b\\c\u00e9","p\u0069d":"p\"1","tid":1,"ts":1,"dur":1,"args":{"corr\u0065lation":7}}]`
	tr := mustRead(t, in)
	if len(tr.Events) != 1 {
		t.Fatalf("%d events", len(tr.Events))
	}
	e := tr.Events[0]
	if name := tr.Str(e.Name); name != "a\"b\\cé" || e.Corr != 7 || tr.Tracks[0].Process != `p"1` {
		t.Errorf("name %q corr %d process %q", name, e.Corr, tr.Tracks[0].Process)
	}
}

// TestInvalidPartWay: invalid JSON before the input's end keeps the events
// before it, as a cut does, but marks the trace invalid, not truncated:
// only an input that ends early is truncated.
func TestInvalidPartWay(t *testing.T) {
	in := `{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":5},` +
		`{"ph":"X","name":"b","pid":1,"tid":1,"ts":10,"dur":5}, nope, {"ph":"X","name":"c","pid":1,"tid":1,"ts":20,"dur":5}]}`
	tr, err := readString(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 2 || tr.Truncated || !tr.Invalid {
		t.Errorf("%d events, truncated %t, invalid %t; want 2, false, true", len(tr.Events), tr.Truncated, tr.Invalid)
	}
	if len(tr.Warnings) != 1 || !strings.HasPrefix(tr.Warnings[0], "invalid JSON at byte ") || !strings.HasSuffix(tr.Warnings[0], ": kept 2 events before it") {
		t.Errorf("warnings %q", tr.Warnings)
	}
}
