package tracetest

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/xplane"
	"github.com/tracegap/tracegap/trace"
)

// handSpec covers every role, two devices, two streams, links, a step, copies
// in both directions and an instant.
func handSpec() *Spec {
	return &Spec{
		Threads: []Thread{{1, "python"}, {2, "autograd"}},
		Events: []Event{
			{Role: Annotation, Name: "ProfilerStep#3", Thread: 1, Start: 1_000_000, Dur: 900_000},
			{Role: Python, Name: "$train.py:10 step", Thread: 1, Start: 1_000_100, Dur: 800_000},
			{Role: CPUOp, Name: "aten::linear", Thread: 1, Start: 1_001_000, Dur: 50_000},
			{Role: Runtime, Name: "cudaLaunchKernel", Thread: 1, Start: 1_040_000, Dur: 10_000, Corr: 7},
			{Role: Runtime, Name: "cudaMemcpyAsync", Thread: 2, Start: 1_060_000, Dur: 30_000, Corr: 8},
			{Role: Runtime, Name: "cudaStreamSynchronize", Thread: 1, Start: 1_100_000, Dur: 0},
			{Role: Kernel, Name: "sgemm_128x64", Device: 0, Stream: 7, Start: 1_055_000, Dur: 123_457, Corr: 7},
			{Role: Memcpy, Name: "Memcpy DtoH (Device -> Pageable)", Device: 0, Stream: 13, Start: 1_070_000, Dur: 20_001, Corr: 8},
			{Role: Memcpy, Name: "Memcpy HtoD (Pageable -> Device)", Device: 1, Stream: 7, Start: 1_010_000, Dur: 5_000},
			{Role: Memset, Name: "Memset (Device)", Device: 1, Stream: 7, Start: 1_020_000, Dur: 1_000},
			{Role: DeviceAnnotation, Name: "ProfilerStep#3", Device: 0, Stream: 7, Start: 1_055_000, Dur: 845_000},
			{Role: Kernel, Name: "sgemm_128x64", Device: 1, Stream: 7, Start: 2_000_000_000_000, Dur: 1},
		},
	}
}

// eventRecord is what the round trip must preserve of an event.
type eventRecord struct {
	where       string // device id, or "host:" and the thread's line name
	name        string
	kind        trace.Kind
	flags       trace.Flag
	start, dur  int64
	corr        uint64
	derivedLine bool
}

func specRecords(s *Spec) []eventRecord {
	names := map[int64]string{}
	for _, th := range s.Threads {
		names[th.TID] = th.Name
	}
	var recs []eventRecord
	for _, e := range s.Events {
		// The reader drops the "$" JAX's Python tracer marks frames with.
		r := eventRecord{name: strings.TrimPrefix(e.Name, "$"), start: e.Start, dur: e.Dur, corr: e.Corr}
		r.kind, r.flags = roleKind(e.Role, e.Name)
		if e.Dur == 0 {
			r.flags |= trace.FlagInstant
		}
		if e.Role.Device() {
			r.where = fmt.Sprintf("GPU:%d", e.Device)
			r.derivedLine = e.Role == DeviceAnnotation
		} else {
			r.where = "host:" + xplaneThread(e.Thread, names[e.Thread])
		}
		recs = append(recs, r)
	}
	return sortRecords(recs)
}

func traceRecords(t *trace.Trace) []eventRecord {
	var recs []eventRecord
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		where := tr.Device
		if tr.Kind == trace.TrackHost {
			where = "host:" + tr.Thread
		}
		for _, e := range t.TrackEvents(i) {
			recs = append(recs, eventRecord{
				where: where, name: t.Str(e.Name), kind: e.Kind, flags: e.Flags,
				start: t.StartNs + e.Start, dur: e.Dur(), corr: t.CorrID(e.Corr), derivedLine: tr.Derived,
			})
		}
	}
	return sortRecords(recs)
}

func sortRecords(recs []eventRecord) []eventRecord {
	slices.SortFunc(recs, func(a, b eventRecord) int {
		return cmp.Or(strings.Compare(a.where, b.where), cmp.Compare(a.start, b.start),
			strings.Compare(a.name, b.name), cmp.Compare(a.dur, b.dur))
	})
	return recs
}

func TestWriteXPlaneRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		spec *Spec
	}{
		{"hand", handSpec()},
		{"sync loop", Loop{Steps: 5, Input: 2_000_000, Dispatch: 30_000, Kernels: 4, Compute: 200_000, Sync: true}.Spec()},
		{"backward on two devices", Loop{Steps: 4, Input: 100_000, Dispatch: 20_000, Kernels: 3, Compute: 50_000, Devices: 2, Skew: 5_000, Backward: true}.Spec()},
		// Build and the Chrome reader take a step from the name, whatever
		// the role (Kineto of 2021 wrote steps as operators).
		{"steps of every host role", &Spec{Events: []Event{
			{Role: CPUOp, Name: "ProfilerStep#1", Thread: 1, Start: 0, Dur: 100},
			{Role: Python, Name: "ProfilerStep#2", Thread: 1, Start: 100, Dur: 100},
			{Role: Runtime, Name: "ProfilerStep#3", Thread: 2, Start: 200, Dur: 100},
			{Role: Annotation, Name: "ProfilerStep#4", Thread: 2, Start: 300, Dur: 100},
			{Role: Kernel, Name: "ProfilerStep#5", Stream: 7, Start: 300, Dur: 100},
		}}},
		{"device work only", &Spec{Events: []Event{{Role: Kernel, Name: "k", Stream: 7, Start: 50, Dur: 10}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteXPlane(&buf, tt.spec); err != nil {
				t.Fatal(err)
			}
			if !xplane.Sniff(buf.Bytes()[:min(buf.Len(), 512)]) {
				t.Errorf("Sniff does not recognise the written XSpace (starts % x)", buf.Bytes()[:16])
			}
			got, err := xplane.Decode(buf.Bytes(), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Warnings) > 0 {
				t.Errorf("warnings: %q", got.Warnings)
			}
			want := specRecords(tt.spec)
			have := traceRecords(got)
			if len(have) != len(want) {
				t.Fatalf("read back %d events, wrote %d", len(have), len(want))
			}
			for i := range want {
				if have[i] != want[i] {
					t.Errorf("event %d:\n got  %+v\n want %+v", i, have[i], want[i])
				}
			}
		})
	}
}

func TestWriteXPlaneRejects(t *testing.T) {
	for _, e := range []Event{
		{Role: Kernel, Name: "k", Start: -1, Dur: 10},
		{Role: CPUOp, Name: "op", Start: 10, Dur: -5},
		{Role: CPUOp, Name: "op", Start: 0, Dur: 1 << 60},
	} {
		err := WriteXPlane(&bytes.Buffer{}, &Spec{Events: []Event{e}})
		if err == nil {
			t.Errorf("WriteXPlane(%+v) succeeded, want an error", e)
		}
	}
}

// TestWriteXPlaneEmpty: a Spec without events still makes an XSpace that
// trace.Read recognises (its host plane), and reads back as an empty trace.
func TestWriteXPlaneEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteXPlane(&buf, &Spec{Threads: []Thread{{1, "python"}}}); err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), trace.Options{})
	if err != nil {
		t.Fatalf("reading an empty XSpace (% x): %v", buf.Bytes(), err)
	}
	if tr.Format != "xplane" || len(tr.Events) != 0 || len(tr.Tracks) != 0 || len(tr.Warnings) != 0 {
		t.Errorf("format %q, %d events, %d tracks, warnings %q; want an empty xplane trace", tr.Format, len(tr.Events), len(tr.Tracks), tr.Warnings)
	}
}
