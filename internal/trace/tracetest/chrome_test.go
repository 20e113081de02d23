package tracetest

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// chromeSpecs are the specs the Chrome round trip is checked on.
func chromeSpecs() map[string]*Spec {
	hand := &Spec{
		PID:     4242,
		Threads: []Thread{{1, "python"}, {2, ""}},
		Events: []Event{
			{Role: Annotation, Name: "ProfilerStep#3", Thread: 1, Start: 1_000_000, Dur: 900_000},
			{Role: Python, Name: `train.py(10): step "quoted" \ back`, Thread: 1, Start: 1_000_100, Dur: 800_000},
			{Role: CPUOp, Name: "aten::linear", Thread: 1, Start: 1_001_000, Dur: 50_001},
			{Role: Runtime, Name: "cudaLaunchKernel", Thread: 1, Start: 1_040_000, Dur: 10_000, Corr: 7},
			{Role: Runtime, Name: "cudaMemcpyAsync", Thread: 2, Start: 1_060_000, Dur: 30_000, Corr: 8},
			{Role: Runtime, Name: "cudaStreamSynchronize", Thread: 1, Start: 1_100_000},
			{Role: Kernel, Name: "sgemm_128x64", Device: 0, Stream: 7, Start: 1_055_000, Dur: 123_457, Corr: 7},
			{Role: Memcpy, Name: "Memcpy DtoH (Device -> Pageable)", Device: 0, Stream: 13, Start: 1_070_000, Dur: 20_001, Corr: 8},
			{Role: Memcpy, Name: "Memcpy HtoD (Pageable -> Device)", Device: 1, Stream: 7, Start: 1_010_000, Dur: 5_000},
			{Role: Memset, Name: "Memset (Device)", Device: 1, Stream: 7, Start: 1_020_000, Dur: 1_000},
			{Role: DeviceAnnotation, Name: "ProfilerStep#3", Device: 0, Stream: 7, Start: 1_055_000, Dur: 845_000},
			{Role: Kernel, Name: "late", Device: 1, Stream: 7, Start: 1712345678901234567, Dur: 1},
		},
	}
	return map[string]*Spec{
		"hand":      hand,
		"sync loop": Loop{Steps: 5, Input: 2_000_000, Dispatch: 30_000, Kernels: 4, Compute: 200_000, Sync: true}.Spec(),
		"two devices": Loop{Steps: 4, Input: 100_000, Dispatch: 20_000, Kernels: 3, Compute: 50_000,
			Devices: 2, Skew: 5_000, Backward: true}.Spec(),
	}
}

// TestWriteChromeRoundTrip: a Spec written as Chrome JSON and read back
// through trace.Read gives the trace Build makes of it: the same tracks,
// and on each the same events (name, kind, flags, ns times, Corr).
func TestWriteChromeRoundTrip(t *testing.T) {
	for name, spec := range chromeSpecs() {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteChrome(&buf, spec); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(buf.Bytes()) {
				t.Fatalf("not valid JSON:\n%s", buf.Bytes()[:min(buf.Len(), 2000)])
			}
			got, err := trace.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Format != "chrome" || len(got.Warnings) > 0 {
				t.Errorf("format %q, warnings %q", got.Format, got.Warnings)
			}
			want := Build(spec)
			if g, w := chromeTracks(got), chromeTracks(want); !slices.Equal(g, w) {
				t.Fatalf("tracks\n%q\nwant\n%q", g, w)
			}
			if g, w := chromeEvents(got), chromeEvents(want); !slices.Equal(g, w) {
				for i := range min(len(g), len(w)) {
					if g[i] != w[i] {
						t.Errorf("first difference at event %d:\n got  %+v\n want %+v", i, g[i], w[i])
						break
					}
				}
				t.Fatalf("read back %d events, want %d", len(g), len(w))
			}
		})
	}
}

// chromeTracks lists the tracks as kind, device and name, sorted.
func chromeTracks(t *trace.Trace) []string {
	var out []string
	for _, k := range t.Tracks {
		if k.Hi > k.Lo {
			out = append(out, k.Kind.String()+"|"+k.Device+"|"+k.Name)
		}
	}
	slices.Sort(out)
	return out
}

type chromeEvent struct {
	track, name string
	kind        trace.Kind
	flags       trace.Flag
	start, dur  int64
	corr        uint64
}

// chromeEvents lists the events with absolute times, in a canonical order.
func chromeEvents(t *trace.Trace) []chromeEvent {
	var out []chromeEvent
	for i, k := range t.Tracks {
		for _, e := range t.TrackEvents(i) {
			out = append(out, chromeEvent{k.Name, t.Str(e.Name), e.Kind, e.Flags, t.StartNs + e.Start, e.Dur(), t.CorrID(e.Corr)})
		}
	}
	slices.SortFunc(out, func(a, b chromeEvent) int {
		if c := strings.Compare(a.track, b.track); c != 0 {
			return c
		}
		if a.start != b.start {
			return int(a.start - b.start)
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

func TestWriteChromeFormat(t *testing.T) {
	var buf bytes.Buffer
	spec := &Spec{Events: []Event{
		{Role: Runtime, Name: "cudaLaunchKernel", Thread: 5, Start: 1_500, Dur: 2_001, Corr: 3},
		{Role: Kernel, Name: "k", Device: 2, Stream: 9, Start: 4_000, Dur: 999, Corr: 3},
	}}
	if err := WriteChrome(&buf, spec); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1000,"tid":5,"ts":1.500,"dur":2.001,"args":{"correlation":3}}`,
		`{"ph":"X","cat":"kernel","name":"k","pid":2,"tid":9,"ts":4.000,"dur":0.999,"args":{"device":2,"stream":9,"correlation":3}}`,
		`{"ph":"s","id":3,"pid":1000,"tid":5,"ts":1.500,"cat":"ac2g","name":"ac2g"}`,
		`{"ph":"f","id":3,"pid":2,"tid":9,"ts":4.000,"cat":"ac2g","name":"ac2g","bp":"e"}`,
		`{"name":"process_labels","ph":"M","pid":2,"tid":0,"args":{"labels":"GPU 2"}}`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, buf.String())
		}
	}
	if err := WriteChrome(&buf, &Spec{Events: []Event{{Role: Role(200)}}}); err == nil {
		t.Errorf("unknown role: no error")
	}
}
