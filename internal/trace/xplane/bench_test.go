package xplane

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	pb "github.com/tracegap/tracegap/internal/trace/xplane/xplanepb"
	"github.com/tracegap/tracegap/trace"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Large inputs are made once per test binary and never written to disk.
var (
	synthOnce, tiledOnce sync.Once
	synthBuf, tiledBuf   []byte
)

// synthetic is a ~150 MB XSpace from the test-trace writer: a training
// loop on two GPUs, with host ops, launches carrying correlation ids,
// kernels, syncs and step annotations.
func synthetic(b *testing.B) []byte {
	synthOnce.Do(func() {
		s := tracetest.Loop{Steps: 2000, Input: 500_000, Dispatch: 20_000, Kernels: 400, Compute: 30_000, Devices: 2, Sync: true}.Spec()
		var buf bytes.Buffer
		if err := tracetest.WriteXPlane(&buf, s); err != nil {
			b.Fatal(err)
		}
		synthBuf = buf.Bytes()
	})
	return synthBuf
}

// tiled repeats every line's events of the real TPU trace 200 times, each
// copy after the last, for the stats mix of a real XProf capture (~170 MB).
func tiled(b *testing.B) []byte {
	tiledOnce.Do(func() {
		raw, err := os.ReadFile(filepath.Join(realtraces.Dir(b), "xprof-tpu-inference.xplane.pb"))
		if err != nil {
			b.Fatal(err)
		}
		var space pb.XSpace
		if err := proto.Unmarshal(raw, &space); err != nil {
			b.Fatal(err)
		}
		const copies = 200
		for _, p := range space.Planes {
			for _, l := range p.Lines {
				var end int64
				for _, e := range l.Events {
					end = max(end, e.GetOffsetPs()+e.DurationPs)
				}
				orig := l.Events
				for k := int64(1); k < copies; k++ {
					for _, e := range orig {
						c := proto.Clone(e).(*pb.XEvent)
						c.Data = &pb.XEvent_OffsetPs{OffsetPs: e.GetOffsetPs() + k*end}
						l.Events = append(l.Events, c)
					}
				}
			}
		}
		if tiledBuf, err = proto.Marshal(&space); err != nil {
			b.Fatal(err)
		}
	})
	return tiledBuf
}

func benchRead(b *testing.B, buf []byte) {
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	var events, n int
	cpu0 := cpuTime()
	for b.Loop() {
		tr, err := trace.Read(bytes.NewReader(buf), int64(len(buf)), trace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		events = len(tr.Events)
		n++
	}
	b.ReportMetric(float64(events), "events")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		// Throughput per CPU second, garbage collection included: on a
		// loaded machine the wall clock also counts other processes.
		b.ReportMetric(float64(len(buf))*float64(n)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
}

// BenchmarkRead reads a large synthetic XSpace through trace.Read, as
// reading a file does: sniffing, buffering, copying the input into memory,
// decoding.
func BenchmarkRead(b *testing.B) { benchRead(b, synthetic(b)) }

// BenchmarkReadTiledTPU reads the real TPU trace tiled to a large size.
func BenchmarkReadTiledTPU(b *testing.B) { benchRead(b, tiled(b)) }

// BenchmarkWalk walks the wire format of an XSpace with protowire,
// decoding nothing but tags, varints and lengths and building nothing: the
// ceiling of a reader that looks at every event. "events" goes down to
// the events and skips each whole; "fields" also steps through every field
// of every event and of its stats, as a reader must to find its times and
// correlation id. Compare the MB/s with BenchmarkRead's on the same bytes.
// TRACEGAP_BENCH_XPLANE names a file to walk and read as well
// (scripts/bench.sh makes bench-out/xprof-tpu-x495.xplane.pb).
func BenchmarkWalk(b *testing.B) {
	inputs := []struct {
		name string
		buf  func() []byte
	}{{"tiled", func() []byte { return tiled(b) }}, {"synthetic", func() []byte { return synthetic(b) }}}
	if f := os.Getenv("TRACEGAP_BENCH_XPLANE"); f != "" {
		inputs = append(inputs, struct {
			name string
			buf  func() []byte
		}{"file", func() []byte {
			buf, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			return buf
		}})
	}
	for _, in := range inputs {
		buf := sync.OnceValue(in.buf) // made only for the benchmarks -bench picks
		b.Run(in.name+"/events", func(b *testing.B) { benchWalk(b, buf(), false) })
		b.Run(in.name+"/fields", func(b *testing.B) { benchWalk(b, buf(), true) })
		b.Run(in.name+"/read", func(b *testing.B) { benchRead(b, buf()) })
	}
}

func benchWalk(b *testing.B, buf []byte, fields bool) {
	b.SetBytes(int64(len(buf)))
	var events int
	for b.Loop() {
		events = 0
		for space := buf; len(space) > 0; {
			plane := field(b, &space, 1)
			for len(plane) > 0 {
				line := field(b, &plane, 3)
				for len(line) > 0 {
					ev := field(b, &line, 4)
					if ev == nil {
						continue
					}
					events++
					for fields && len(ev) > 0 {
						for stat := field(b, &ev, 4); len(stat) > 0; {
							field(b, &stat, 0)
						}
					}
				}
			}
		}
	}
	b.ReportMetric(float64(events), "events")
}

// field consumes the next field of *m and returns its bytes if it is
// length-delimited and numbered want, else nil.
func field(b *testing.B, m *[]byte, want protowire.Number) []byte {
	num, typ, n := protowire.ConsumeTag(*m)
	if n < 0 {
		b.Fatal(protowire.ParseError(n))
	}
	*m = (*m)[n:]
	var v []byte
	if typ == protowire.BytesType {
		v, n = protowire.ConsumeBytes(*m)
	} else {
		n = protowire.ConsumeFieldValue(num, typ, *m)
	}
	if n < 0 {
		b.Fatal(protowire.ParseError(n))
	}
	*m = (*m)[n:]
	if num != want {
		return nil
	}
	return v
}
