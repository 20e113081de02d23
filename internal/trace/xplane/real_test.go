package xplane

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// busy is a device's work over its span: the union of its work intervals
// and the time from its first work's start to its last work's end.
type busy struct{ union, span int64 }

func deviceBusy(t *trace.Trace) map[string]busy {
	ivs := map[string][][2]int64{}
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		if tr.Kind != trace.TrackDevice {
			continue
		}
		for _, e := range t.TrackEvents(i) {
			if e.Kind == trace.KindWork {
				ivs[tr.Device] = append(ivs[tr.Device], [2]int64{e.Start, e.End()})
			}
		}
	}
	out := map[string]busy{}
	for dev, iv := range ivs {
		slices.SortFunc(iv, func(a, b [2]int64) int { return int(a[0] - b[0]) })
		var b busy
		lo, end := iv[0][0], iv[0][1]
		curLo, curHi := iv[0][0], iv[0][1]
		for _, x := range iv[1:] {
			end = max(end, x[1])
			if x[0] > curHi {
				b.union += curHi - curLo
				curLo, curHi = x[0], x[1]
			} else {
				curHi = max(curHi, x[1])
			}
		}
		b.union += curHi - curLo
		b.span = end - lo
		out[dev] = b
	}
	return out
}

// The expected figures were counted independently of this reader: planes,
// lines and events with `protoc --decode_raw` (top-level "1 {", "  3 {"
// and "    4 {" blocks), busy time and span by a program decoding with the
// generated xplanepb types.
func TestRealTraces(t *testing.T) {
	dir := realtraces.Dir(t)
	tests := []struct {
		file          string
		planes, lines string
		events        int
		devices       []string
		busy          map[string]busy
		meta          map[string]string
	}{
		{
			file: "tracelens-jax-conv-block-until-ready.xplane.pb", planes: "11", lines: "43", events: 3650,
			devices: []string{"GPU:0", "GPU:1", "GPU:2", "GPU:3", "GPU:4", "GPU:5", "GPU:6", "GPU:7"},
			busy:    map[string]busy{"GPU:0": {3995965, 138470832}, "GPU:7": {3502165, 90563059}}, // 2.9%, 3.9%
			meta:    map[string]string{"hostname": "tw003", "device_vendor": "AMD"},
		},
		{
			file: "tracelens-jax-te-fused-attn.xplane.pb", planes: "12", lines: "3", events: 1992,
			devices: []string{"GPU:0"},
			busy:    map[string]busy{"GPU:0": {12133127, 12956751}}, // 93.6%
			meta:    map[string]string{"hostname": "934987a2fc2f", "profile_start_time_ns": "1779266702889805563"},
		},
		{
			file: "xprof-tpu-inference.xplane.pb", planes: "7", lines: "142", events: 26723,
			devices: []string{"TPU:0", "TPU:1", "TPU:2", "TPU:3"},
			busy:    map[string]busy{"TPU:0": {78784927638, 92477083033}, "TPU:3": {78766281696, 90406370267}}, // 85.2%, 87.1%
			meta:    map[string]string{"device_type": "TPU v6 Lite"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, tt.file), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != "xplane" {
				t.Errorf("format %q, want xplane", tr.Format)
			}
			if tr.Meta["planes"] != tt.planes || tr.Meta["lines"] != tt.lines {
				t.Errorf("planes, lines = %s, %s; want %s, %s", tr.Meta["planes"], tr.Meta["lines"], tt.planes, tt.lines)
			}
			if len(tr.Events) != tt.events || len(tr.Warnings) > 0 {
				t.Errorf("%d events (warnings %q), want %d and none dropped", len(tr.Events), tr.Warnings, tt.events)
			}
			if got := tr.Devices(); !slices.Equal(got, tt.devices) {
				t.Errorf("devices with work %v, want %v", got, tt.devices)
			}
			got := deviceBusy(tr)
			for dev, want := range tt.busy {
				if got[dev] != want {
					t.Errorf("%s busy %d ns over a %d ns span, want %d over %d", dev, got[dev].union, got[dev].span, want.union, want.span)
				}
			}
			for k, v := range tt.meta {
				if tr.Meta[k] != v {
					t.Errorf("Meta[%q] = %q, want %q", k, tr.Meta[k], v)
				}
			}
		})
	}
}

// Derived lines are views: on the TPU trace only "XLA Ops" is work, and
// "XLA Modules", "Async XLA Ops" and "XLA TraceMe" are derived overlays.
func TestRealTPULines(t *testing.T) {
	tr, err := trace.Open(filepath.Join(realtraces.Dir(t), "xprof-tpu-inference.xplane.pb"), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"XLA Ops":       "work",
		"XLA Modules":   "overlay derived",
		"Async XLA Ops": "overlay derived",
		"XLA TraceMe":   "overlay derived",
	}
	seen := 0
	for i := range tr.Tracks {
		tk := &tr.Tracks[i]
		if tk.Device != "TPU:0" {
			continue
		}
		seen++
		got := tr.TrackEvents(i)[0].Kind.String()
		if tk.Derived {
			got += " derived"
		}
		if got != want[tk.Thread] {
			t.Errorf("TPU:0 line %q: %s, want %s", tk.Thread, got, want[tk.Thread])
		}
	}
	if seen != len(want) {
		t.Errorf("%d TPU:0 tracks with events, want %d", seen, len(want))
	}
}

func TestRealCorrupted(t *testing.T) {
	path := filepath.Join(realtraces.Dir(t), "xprof-tpu-inference-corrupted-upstream.xplane.pb")
	_, err := trace.Open(path, trace.Options{})
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("Open = %v, want a *FormatError", err)
	}
	msg := err.Error()
	if fe.Offset != 1 || !strings.Contains(msg, "not a valid XSpace (likely corrupted): at byte 1") ||
		!strings.Contains(msg, "planes (1) is 28501368332271 bytes long") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming byte 1 and the planes field's impossible length", msg)
	}
}

// A gzip-compressed XSpace is sniffed after trace.Read decompresses it.
func TestRealGzip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(realtraces.Dir(t), "tracelens-jax-te-fused-attn.xplane.pb"))
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	tr, err := trace.Read(&z, int64(z.Len()), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != "xplane" || tr.Bytes != int64(len(raw)) || len(tr.Events) != 1992 {
		t.Errorf("gzip: format %q, %d bytes, %d events; want xplane, %d, 1992", tr.Format, tr.Bytes, len(tr.Events), len(raw))
	}
}
