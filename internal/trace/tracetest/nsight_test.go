package tracetest

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/nsight"
	"github.com/tracegap/tracegap/trace"
)

// nsightRecords is what the Nsight reader must make of s: every event but
// the device annotations, which an export has no place for; host events
// on "host:<tid>"; instants only where NVTX has marks (host roles other
// than runtime calls).
func nsightRecords(s *Spec) []eventRecord {
	var recs []eventRecord
	for _, e := range s.Events {
		if e.Role == DeviceAnnotation {
			continue
		}
		r := eventRecord{name: e.Name, start: e.Start, dur: e.Dur, corr: e.Corr}
		r.kind, r.flags = roleKind(e.Role, e.Name)
		if e.Dur == 0 && !e.Role.Device() && e.Role != Runtime {
			r.flags |= trace.FlagInstant
		}
		if e.Role.Device() {
			r.where = fmt.Sprintf("GPU:%d", e.Device)
		} else {
			r.where = "host:" + strconv.FormatInt(e.Thread, 10)
		}
		recs = append(recs, r)
	}
	return sortRecords(recs)
}

func TestWriteNsightRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		spec *Spec
	}{
		{"hand", handSpec()},
		{"sync loop", Loop{Steps: 5, Input: 2_000_000, Dispatch: 30_000, Kernels: 4, Compute: 200_000, Sync: true}.Spec()},
		{"backward on two devices", Loop{Steps: 4, Input: 100_000, Dispatch: 20_000, Kernels: 3, Compute: 50_000, Devices: 2, Skew: 5_000, Backward: true}.Spec()},
		{"pageable copy with bytes", Loop{Steps: 3, Input: 3_000_000, InputName: "## sparse_data_dist ##", PageableCopy: 1_000_000, Dispatch: 1_000_000, Compute: 10_000_000}.Spec()},
		{"device work only", &Spec{Events: []Event{{Role: Kernel, Name: "k", Stream: 7, Start: 50, Dur: 10}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteNsight(&buf, tt.spec); err != nil {
				t.Fatal(err)
			}
			if !nsight.Sniff(buf.Bytes()[:min(buf.Len(), 512)]) {
				t.Errorf("Sniff does not recognise the written export (starts % x)", buf.Bytes()[:16])
			}
			got, err := trace.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Format != "nsight" || len(got.Warnings) > 0 {
				t.Errorf("format %q, warnings %q; want nsight, none", got.Format, got.Warnings)
			}
			want := nsightRecords(tt.spec)
			have := traceRecords(got)
			if len(have) != len(want) {
				t.Fatalf("read back %d events, wrote %d", len(have), len(want))
			}
			for i := range want {
				if have[i] != want[i] {
					t.Errorf("event %d:\n got  %+v\n want %+v", i, have[i], want[i])
				}
			}
			for _, e := range tt.spec.Events {
				if e.Role == Memcpy && e.Bytes > 0 && got.CopyBytes[uint32(e.Corr)] != e.Bytes {
					t.Errorf("copy %d: %d bytes read back, wrote %d", e.Corr, got.CopyBytes[uint32(e.Corr)], e.Bytes)
				}
			}
		})
	}
}
