package run

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// counted counts the bytes read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// fuzzInput returns data as an input's bytes: gzipped when gz is set.
func fuzzInput(data []byte, gz bool) []byte {
	if gz {
		return tracetest.Gzip(data)
	}
	return data
}

// FuzzProbeRank feeds arbitrary bytes, gzipped or not, to the rank probe,
// which reads the head of every input of a job: it must never panic or
// hang, read no more of a plain input than its head (a MiB and the
// buffers'), allocate within a bound of that, and name no negative rank
// or world size.
func FuzzProbeRank(f *testing.F) {
	for _, gz := range []bool{false, true} {
		f.Add([]byte(`{"distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8}, "traceEvents": []}`), gz)
		f.Add([]byte(`{"distributedInfo":{"rank":99999999999999999999,"world_size":-1}}`), gz)
		f.Add([]byte(`{"distributedInfo":{"traceEvents":1,"rank":1,"world_size":2}`), gz)
		f.Add([]byte("\x0a\x02\x08\x01"), gz)
	}
	f.Fuzz(func(t *testing.T, data []byte, gz bool) {
		in := &counted{r: bytes.NewReader(fuzzInput(data, gz))}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rank, world, ok := ProbeRankReader(in)
		runtime.ReadMemStats(&after)
		if ok && (rank < 0 || world < 0) {
			t.Fatalf("rank %d of %d", rank, world)
		}
		if most := int64(1<<20 + 64<<10); !gz && in.n > most {
			t.Fatalf("read %d bytes of a plain input, want at most %d", in.n, most)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Fatalf("probing %d bytes allocated %d", len(data), alloc)
		}
	})
}

// FuzzMeasure feeds arbitrary bytes, gzipped or not, to the measure of an
// input's size after decompression and its events, which the memory
// budget admits inputs by: it must never panic or hang, and count no more
// bytes than reading would accept (MaxBytes, and one more).
func FuzzMeasure(f *testing.F) {
	var xplane bytes.Buffer
	if err := tracetest.WriteXPlane(&xplane, tracetest.Loop{Steps: 2, Input: 1000, Dispatch: 100, Kernels: 2, Compute: 1000}.Spec()); err != nil {
		f.Fatal(err)
	}
	for _, gz := range []bool{false, true} {
		f.Add(xplane.Bytes(), gz)
		f.Add([]byte(`{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"k"}]}`), gz)
		f.Add(bytes.Repeat([]byte{0}, 4096), gz)
	}
	const maxBytes = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte, gz bool) {
		in := fuzzInput(data, gz)
		for _, name := range []string{"chrome", "xplane", "nsight"} {
			format, err := trace.LookupFormat(name)
			if err != nil {
				t.Fatal(err)
			}
			plain, events := measure(bytes.NewReader(in), int64(len(in)), gz, format, trace.Options{MaxBytes: maxBytes})
			if plain < 0 || plain > maxBytes+1 || events < -1 {
				t.Fatalf("%s: measured %d bytes, %d events", name, plain, events)
			}
			if !gz && plain != int64(len(in)) && plain != maxBytes+1 {
				t.Fatalf("%s: measured %d bytes of a plain %d-byte input", name, plain, len(in))
			}
		}
	})
}
