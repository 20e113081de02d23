package xplane

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// setParallel makes every plane decode in chunks of n events with three
// workers (n == 0: serially, in two walks), until the test ends.
func setParallel(t *testing.T, n int) {
	t.Helper()
	chunk, least, w, sample := chunkEvents, parallelMin, workers, sampleBytes
	t.Cleanup(func() { chunkEvents, parallelMin, workers, sampleBytes = chunk, least, w, sample })
	if n == 0 {
		parallelMin, sampleBytes = math.MaxInt, 0
		return
	}
	chunkEvents, parallelMin, workers = n, 0, func() int { return 3 }
}

// setOneWalk makes reads walk the input once, as on one processor,
// estimating each line's events from their first n bytes, until the test
// ends.
func setOneWalk(t *testing.T, n int) {
	t.Helper()
	w, sample := workers, sampleBytes
	t.Cleanup(func() { workers, sampleBytes = w, sample })
	workers, sampleBytes = func() int { return 1 }, n
}

// decodeBoth decodes b from memory and through a ReaderAt window.
func decodeBoth(t *testing.T, b []byte, opt trace.Options) [2]result {
	t.Helper()
	var r [2]result
	r[0].tr, r[0].err = Decode(b, opt)
	r[1].tr, r[1].err = decode(wire{src: bytes.NewReader(b), size: len(b)}, opt)
	return r
}

type result struct {
	tr  *trace.Trace
	err error
}

// checkSame decodes b serially in two walks, in parallel chunks of several
// sizes and in one walk sampling lines by several sizes, and wants the
// same trace, or the same error, every way.
func checkSame(t *testing.T, name string, b []byte, opt trace.Options) {
	t.Helper()
	setParallel(t, 0)
	want := decodeBoth(t, b, opt)
	check := func(how string) {
		t.Helper()
		got := decodeBoth(t, b, opt)
		for i := range got {
			g, w := got[i], want[i]
			if (g.err == nil) != (w.err == nil) || g.err != nil && g.err.Error() != w.err.Error() {
				t.Errorf("%s, %s: error %v, serially %v", name, how, g.err, w.err)
				continue
			}
			if !reflect.DeepEqual(g.tr, w.tr) {
				t.Errorf("%s, %s: the trace differs from a serial read's", name, how)
			}
		}
	}
	for _, n := range []int{1, 2, 5, 1000} {
		setParallel(t, n)
		check(fmt.Sprintf("chunks of %d", n))
	}
	for _, n := range []int{1, 16, 1000, 64 << 10} {
		setOneWalk(t, n)
		check(fmt.Sprintf("one walk sampling %d bytes", n))
	}
}

func TestParallelRealTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every real XPlane trace serially and in parallel; TestParallelChunks covers the split")
	}
	files, err := filepath.Glob(filepath.Join(realtraces.Dir(t), "*.xplane.pb"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no XPlane traces: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, filepath.Base(f), b, trace.Options{})
		checkSame(t, filepath.Base(f)+" under a limit", b, trace.Options{MaxEvents: 1000})
	}
}

// TestParallelOddEvents has events a worker gives up on (drops, undefined
// metadata, step names to make up, correlation ids to key) among ordinary
// ones, and cut input.
func TestParallelOddEvents(t *testing.T) {
	var evs []eventSpec
	for i := range 12 {
		evs = append(evs, eventSpec{name: "op", off: int64(i) * 1000, dur: 500})
	}
	odd := []eventSpec{
		{name: "agg", occurrences: 12, dur: 1_000},
		{name: "neg", off: -1_000, dur: 1_000},
		{name: "orphan", rawMeta: 99, off: 2_000, dur: 1_000},
		{name: "train_step", off: 3_000, dur: 1_000, stats: []statSpec{{name: "step_num", v: int64(7)}}},
		{name: "wide", off: 4_000, dur: 1_000, stats: []statSpec{{name: "correlation_id", v: uint64(1<<40 + 3)}}},
		{name: "wider", off: 4_500, dur: 1_000, stats: []statSpec{{name: "correlation_id", v: uint64(1<<63 + 9)}}},
	}
	for i, e := range odd {
		evs = append(evs[:3*i+1], append([]eventSpec{e}, evs[3*i+1:]...)...)
	}
	space := encode(t, spaceOf(
		planeSpec{name: "/host:CPU", lines: []lineSpec{{id: 1, name: "t", ts: 5_000, events: evs}, {id: 2, name: "u", events: evs[:7]}}},
		planeSpec{name: "/device:GPU:0", lines: []lineSpec{{id: 1, name: "Stream #1", ts: 5_000, events: evs[2:]}}},
	))
	checkSame(t, "odd events", space, trace.Options{})
	for cut := 0; cut < len(space); cut += 7 {
		checkSame(t, "cut", space[:cut], trace.Options{})
	}
	small := smallSpace(t)
	for cut := 0; cut < len(small); cut += 13 {
		checkSame(t, "small cut", small[:cut], trace.Options{})
	}
	for limit := 1; limit < 40; limit += 3 {
		checkSame(t, "small under a limit", small, trace.Options{MaxEvents: limit})
	}
}

func TestParallelChunks(t *testing.T) {
	setParallel(t, 2)
	pl := planeScan{lines: []lineHead{
		{events: span{10, 20}, count: 1},
		{events: span{30, 60}, count: 4, cuts: []int{45}},
		{events: span{60, 60}},
	}}
	var got [][4]int
	for _, c := range chunks(&pl) {
		got = append(got, [4]int{c.line, c.lo, c.hi, c.first})
	}
	want := [][4]int{{0, 10, 20, 0}, {1, 30, 45, 0}, {1, 45, 60, 2}, {2, 60, 60, 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chunks (line, lo, hi, first) %v, want %v", got, want)
	}
}
