package chrome

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// benchInput returns the JSON to read: $TRACEGAP_BENCH_JSON when set (for
// example a 190 MB tile made by ../shared/bench/tile-trace), else the
// decompressed ResNet50 workers4 trace (24 MB).
func benchInput(b *testing.B) []byte {
	b.Helper()
	if path := os.Getenv("TRACEGAP_BENCH_JSON"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	f, err := os.Open(filepath.Join(realtraces.Dir(b), "kineto-resnet50-workers4.pt.trace.json.gz"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkRead reads uncompressed Kineto JSON through trace.Read, as the
// command does; MB/s is of the JSON text.
func BenchmarkRead(b *testing.B) { benchRead(b, parallelMin) }

// benchRead reads the bench input through trace.Read, in parallel from
// min bytes on.
func benchRead(b *testing.B, min int64) {
	data := benchInput(b)
	defer func(was int64) { parallelMin = was }(parallelMin)
	parallelMin = min
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tr, err := trace.Read(bytes.NewReader(data), int64(len(data)), trace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(tr.Events) == 0 {
			b.Fatal("no events")
		}
	}
}

// BenchmarkDecoderOnly is the floor under BenchmarkRead: the jsontext
// decoder reading each event as one value and nothing else.
func BenchmarkDecoderOnly(b *testing.B) {
	data := benchInput(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		if _, err := d.ReadToken(); err != nil {
			b.Fatal(err)
		}
		for d.PeekKind() != '}' {
			if _, err := d.ReadValue(); err != nil {
				b.Fatal(err)
			}
			if d.PeekKind() != '[' {
				if err := d.SkipValue(); err != nil {
					b.Fatal(err)
				}
				continue
			}
			d.ReadToken()
			for d.PeekKind() == '{' {
				if _, err := d.ReadValue(); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := d.ReadToken(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkReadParallel is BenchmarkRead with the parallel read used
// whatever the input's size (GOMAXPROCS permitting): run it with -cpu 1,2
// to see the scaling.
func BenchmarkReadParallel(b *testing.B) { benchRead(b, 0) }

// BenchmarkReadSerial is BenchmarkRead with the parallel read turned off:
// against BenchmarkRead at -cpu 2 and more, it measures what the parallel
// read gains (docs/performance.md, "Chrome JSON reader").
func BenchmarkReadSerial(b *testing.B) { benchRead(b, math.MaxInt64) }
