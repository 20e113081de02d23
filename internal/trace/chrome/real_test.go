package chrome

import (
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// The figures below were computed once, independently of this reader, by a
// Python script that loads each file with exact decimals and counts the
// X, i/I and paired B/E events, the distinct (pid, tid) pairs among them,
// and per device the union of kernel, memcpy and memset intervals.
var realTraces = []struct {
	file   string
	events int
	tracks int
	busy   map[string]int64 // ns per device
}{
	{"hta-cpu-only.pt.trace.json.gz", 7482, 6, map[string]int64{}},
	{"hta-cuda-event-sync.json.gz", 35, 6, map[string]int64{"GPU:0": 51000}},
	{"hta-ddp-cnn-ns-timestamps.pt.trace.json.gz", 45422, 7, map[string]int64{"GPU:0": 472454441}},
	{"hta-torchrec-a100-rank0.json.gz", 67219, 15, map[string]int64{"GPU:0": 438424000}},
	{"hta-torchrec-v100-syncs-overlapped.json.gz", 68326, 10, map[string]int64{"GPU:1": 717943000}},
	{"kineto-resnet50-workers0-array.pt.trace.json.gz", 63167, 5, map[string]int64{"GPU:0": 649472000}},
	{"kineto-resnet50-workers0.pt.trace.json.gz", 54322, 6, map[string]int64{"GPU:0": 653527000}},
	{"kineto-resnet50-workers4.pt.trace.json.gz", 48894, 6, map[string]int64{"GPU:0": 669880000}},
	{"tracelens-vllm-eager-b200.json.gz", 22355, 3, map[string]int64{"GPU:0": 11596482}},
	{"tracelens-vllm-graph-replay-mi300.json.gz", 18485, 2, map[string]int64{"GPU:2": 156085793}},
	{"param-dlrm-8ranks/worker0_step_12.1694128201545.pt.trace.json.gz", 2462, 9, map[string]int64{"GPU:0": 6590000}},
	{"param-dlrm-8ranks/worker1_step_12.1694128201556.pt.trace.json.gz", 2529, 9, map[string]int64{"GPU:1": 12321000}},
	{"param-dlrm-8ranks/worker2_step_12.1694128201554.pt.trace.json.gz", 2451, 9, map[string]int64{"GPU:2": 4304000}},
	{"param-dlrm-8ranks/worker3_step_12.1694128201557.pt.trace.json.gz", 2554, 9, map[string]int64{"GPU:3": 10708000}},
	{"param-dlrm-8ranks/worker4_step_12.1694128201547.pt.trace.json.gz", 2472, 9, map[string]int64{"GPU:4": 7702000}},
	{"param-dlrm-8ranks/worker5_step_12.1694128201549.pt.trace.json.gz", 2442, 9, map[string]int64{"GPU:5": 7271000}},
	{"param-dlrm-8ranks/worker6_step_12.1694128201553.pt.trace.json.gz", 2453, 9, map[string]int64{"GPU:6": 4359000}},
	{"param-dlrm-8ranks/worker7_step_12.1694128201553.pt.trace.json.gz", 2442, 9, map[string]int64{"GPU:7": 2659000}},
}

func TestRealTraces(t *testing.T) {
	dir := realtraces.Dir(t)
	for _, tc := range realTraces {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, tc.file), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != "chrome" {
				t.Errorf("format %q, want chrome", tr.Format)
			}
			if len(tr.Events) != tc.events || len(tr.Tracks) != tc.tracks {
				t.Errorf("%d events on %d tracks, want %d on %d", len(tr.Events), len(tr.Tracks), tc.events, tc.tracks)
			}
			if tr.Truncated || len(tr.Warnings) > 0 {
				t.Errorf("truncated=%v warnings=%q, want a clean read", tr.Truncated, tr.Warnings)
			}
			busy := busyNs(tr, math.MinInt64, math.MaxInt64)
			if !reflect.DeepEqual(busy, tc.busy) {
				t.Errorf("device busy ns %v, want %v", busy, tc.busy)
			}
			var devs []string
			for d := range tc.busy {
				devs = append(devs, d)
			}
			if got := tr.Devices(); len(got) != len(devs) || len(got) == 1 && got[0] != devs[0] {
				t.Errorf("devices %v, want %v", got, devs)
			}
		})
	}
}

// TestStepBusy checks the GPU busy fraction over the ProfilerStep span of
// the two num_workers=0 ResNet50 captures (figures from the trace README
// and the independent script: 70.363% and 49.923%).
func TestStepBusy(t *testing.T) {
	dir := realtraces.Dir(t)
	for _, tc := range []struct {
		file  string
		steps int
		want  float64 // percent
	}{
		{"kineto-resnet50-workers0.pt.trace.json.gz", 6, 70.363},
		{"kineto-resnet50-workers0-array.pt.trace.json.gz", 6, 49.923},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, tc.file), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			lo, hi, n := int64(math.MaxInt64), int64(math.MinInt64), 0
			for i := range tr.Tracks {
				if tr.Tracks[i].Kind != trace.TrackHost {
					continue
				}
				for _, e := range tr.TrackEvents(i) {
					if e.Has(trace.FlagStep) {
						lo, hi, n = min(lo, e.Start), max(hi, e.End()), n+1
					}
				}
			}
			if n != tc.steps {
				t.Fatalf("%d host steps, want %d", n, tc.steps)
			}
			got := 100 * float64(busyNs(tr, lo, hi)["GPU:0"]) / float64(hi-lo)
			if math.Abs(got-tc.want) > 0.1 {
				t.Errorf("GPU busy %.3f%% of the steps' span, want %.3f%% ± 0.1", got, tc.want)
			}
		})
	}
}
