package nsight_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// realFigures are what the reader must make of a real export: events by
// what they are, and facts of the model. The figures were counted with
// the sqlite3 shell on the files, apart from this reader (runtime: rows
// less the older schema's versioned duplicates, the pairs of one
// correlationId on one thread, one inside the other).
type realFigures struct {
	kernels, copies, memsets, overlays, host int
	deviceBusy                               int64 // ns of work, summed
	hostThreads                              int
	copyBytes                                int64 // summed over CopyBytes: copies' and memsets'
	meta                                     map[string]string
	warnings                                 []string
}

func TestRealExports(t *testing.T) {
	dir := filepath.Join(realtraces.Dir(t), "nsight")
	tests := []struct {
		file string
		want realFigures
	}{
		{"nvfuser-matmul-h200.sqlite", realFigures{
			kernels: 19, copies: 1, memsets: 1, overlays: 1, host: 968 + 652,
			deviceBusy: 390428 + 1600 + 1088, hostThreads: 1, copyBytes: 1 + 4,
			meta: map[string]string{"nsys_version": "2024.6.2.25", "nsys_export_schema": "3.16.1", "device.0.name": "NVIDIA H200"},
		}},
		{"pipit-saxpy-mpi-a100-old-schema.sqlite", realFigures{
			kernels: 5, copies: 15, host: 95 - 38 + 22,
			deviceBusy: 88573480 + 284699600, hostThreads: 1, copyBytes: 3932160000,
			meta: map[string]string{"nsys_version": "2022.2.1.31", "nsys_export_schema": "2.9.1", "rank": "0", "device.0.name": "NVIDIA A100-SXM4-40GB"},
		}},
		{"weatherbench-unet-no-kernels.sqlite", realFigures{
			overlays: 1, host: 23 + 698, hostThreads: 4, copyBytes: 4608,
			meta:     map[string]string{"nsys_version": "2025.5.1.121", "nsys_export_schema": "3.23.3"},
			warnings: []string{"the capture holds no kernels or copies, only 1 memset(s) (kept as overlays, not work): it ended before the workload began"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, tt.file), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != "nsight" {
				t.Errorf("format %q, want nsight", tr.Format)
			}
			got := figures(tr)
			want := tt.want
			got.meta, got.warnings = tr.Meta, tr.Warnings
			if d := got.deviceBusy; d != want.deviceBusy {
				t.Errorf("device busy %d ns, want %d", d, want.deviceBusy)
			}
			if got.kernels != want.kernels || got.copies != want.copies || got.memsets != want.memsets || got.overlays != want.overlays || got.host != want.host {
				t.Errorf("kernels %d, copies %d, memsets %d, overlays %d, host %d; want %d, %d, %d, %d, %d",
					got.kernels, got.copies, got.memsets, got.overlays, got.host,
					want.kernels, want.copies, want.memsets, want.overlays, want.host)
			}
			if got.hostThreads != want.hostThreads || got.copyBytes != want.copyBytes {
				t.Errorf("%d host threads, %d copy bytes; want %d, %d", got.hostThreads, got.copyBytes, want.hostThreads, want.copyBytes)
			}
			for k, v := range want.meta {
				if tr.Meta[k] != v {
					t.Errorf("Meta[%q] = %q, want %q", k, tr.Meta[k], v)
				}
			}
			if !slices.Equal(got.warnings, want.warnings) {
				t.Errorf("warnings %q, want %q", got.warnings, want.warnings)
			}
			for _, s := range tr.Strings {
				if versionSuffixed(s) {
					t.Errorf("name %q keeps its API version suffix", s)
				}
			}
			checkInvariants(t, tr)
		})
	}
}

// versionSuffixed reports whether s ends in an API version: "_v3020".
func versionSuffixed(s string) bool {
	i := strings.LastIndex(s, "_v")
	if i < 0 || len(s)-i-2 < 4 {
		return false
	}
	return strings.Trim(s[i+2:], "0123456789") == ""
}

// figures counts a trace's events by what they are.
func figures(tr *trace.Trace) realFigures {
	var f realFigures
	for i := range tr.Tracks {
		k := &tr.Tracks[i]
		evs := tr.TrackEvents(i)
		if k.Kind == trace.TrackHost && len(evs) > 0 {
			f.hostThreads++
		}
		for _, e := range evs {
			switch {
			case e.Kind == trace.KindHost:
				f.host++
			case e.Kind == trace.KindOverlay:
				f.overlays++
			case e.Has(trace.FlagMemcpy):
				f.copies++
			case e.Has(trace.FlagMemset):
				f.memsets++
			default:
				f.kernels++
			}
			if e.Kind == trace.KindWork {
				f.deviceBusy += e.Dur()
			}
		}
	}
	for _, n := range tr.CopyBytes {
		f.copyBytes += n
	}
	return f
}

// TestRealCopies: the old export's copies are 250 MB each, ten from
// pageable host memory to the device and five back, which block.
func TestRealCopies(t *testing.T) {
	tr, err := trace.Open(filepath.Join(realtraces.Dir(t), "nsight", "pipit-saxpy-mpi-a100-old-schema.sqlite"), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, e := range tr.Events {
		if e.Kind != trace.KindWork || !e.Has(trace.FlagMemcpy) {
			continue
		}
		name := tr.Str(e.Name)
		names[name]++
		dtoh := strings.Contains(name, "DtoH")
		if !e.Has(trace.FlagPageable) || e.Has(trace.FlagDtoH) != dtoh {
			t.Errorf("%s: flags %b, want pageable, device-to-host %v", name, e.Flags, dtoh)
		}
		if n := tr.CopyBytes[e.Corr]; n != 262144000 {
			t.Errorf("%s (correlation %d): %d bytes, want 262144000", name, tr.CorrID(e.Corr), n)
		}
	}
	want := map[string]int{"Memcpy HtoD (Pageable -> Device)": 10, "Memcpy DtoH (Device -> Pageable)": 5}
	if !sameCounts(names, want) {
		t.Errorf("copies %v, want %v", names, want)
	}
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
