package xplane

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

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

// checkSame decodes b from memory and through a ReaderAt window, and wants
// the same trace, or the same error, both ways.
func checkSame(t *testing.T, name string, b []byte, opt trace.Options) {
	t.Helper()
	r := decodeBoth(t, b, opt)
	g, w := r[1], r[0]
	if (g.err == nil) != (w.err == nil) || g.err != nil && g.err.Error() != w.err.Error() {
		t.Errorf("%s: error %v through a window, from memory %v", name, g.err, w.err)
		return
	}
	if !reflect.DeepEqual(g.tr, w.tr) {
		t.Errorf("%s: the trace read through a window differs from the one read from memory", name)
	}
}

func TestWindowRealTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every real XPlane trace from memory and through a window; TestOddEvents covers the reader")
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

// TestOddEvents has events the decoder must drop, name or key (drops,
// undefined metadata, step names to make up, correlation ids to key)
// among ordinary ones, and cut input.
func TestOddEvents(t *testing.T) {
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
