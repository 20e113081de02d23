package analyze

import (
	"path/filepath"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
)

// realFigures are what reading and measuring a real trace gives, whatever
// the causes and the verdict: the source, the window, the first device's
// busy and idle time and its gap count, and the idle time the window's
// gaps attribute to some cause. They stand in for golden reports of the
// real traces, which stay outside the repository; a change here is a
// change in a reader, in step detection or in the interval arithmetic.
// The window's TraceEnd is the last host or device event's end: in
// kineto-resnet50-workers4, 22.6 ms after the last device work, the host
// stopping the profiler, left out of the window.
var realFigures = []struct {
	file           string
	format         string
	events, tracks int
	window         Window
	devices        int
	first          string // the first device's id
	busy, idle     int64  // the first device's, over its span
	gaps           int    // the first device's
	windowBusy     int64  // the first device's
	attributed     int64  // the window's, all devices
}{
	{"kineto-resnet50-workers0.pt.trace.json.gz", "chrome", 54322, 6, Window{166483000, 928250000, 5, true, "ProfilerStep", 928917000}, 1, "GPU:0", 653527000, 274446000, 805, 515477000, 235453000},
	{"kineto-resnet50-workers4.pt.trace.json.gz", "chrome", 48894, 6, Window{162594000, 747376000, 5, true, "ProfilerStep", 770008000}, 1, "GPU:0", 669880000, 77260000, 642, 522481000, 51718000},
	{"kineto-resnet50-workers0-array.pt.trace.json.gz", "chrome", 63167, 5, Window{220341000, 1292178000, 5, true, "ProfilerStep", 1292227000}, 1, "GPU:0", 649472000, 642678000, 1928, 508283000, 553150000},
	{"hta-torchrec-a100-rank0.json.gz", "chrome", 67219, 15, Window{379475000, 1240291000, 4, true, "ProfilerStep", 1240310000}, 1, "GPU:0", 438424000, 793037000, 359, 301303000, 543134000},
	{"hta-torchrec-v100-syncs-overlapped.json.gz", "chrome", 68326, 10, Window{182004000, 769873000, 5, true, "ProfilerStep", 769882000}, 1, "GPU:1", 717943000, 27296000, 1, 565822000, 408000},
	{"hta-ddp-cnn-ns-timestamps.pt.trace.json.gz", "chrome", 45422, 7, Window{196493086, 578859370, 4, true, "ProfilerStep", 590344145}, 1, "GPU:0", 472454441, 7574738, 6, 377884646, 0},
	{"hta-cuda-event-sync.json.gz", "chrome", 35, 6, Window{0, 3073000, 1, false, "ProfilerStep", 3154000}, 1, "GPU:0", 51000, 212000, 4, 51000, 3022000},
	{"hta-cpu-only.pt.trace.json.gz", "chrome", 7482, 6, Window{0, 0, 0, false, "", 0}, 0, "", 0, 0, 0, 0, 0},
	{"tracelens-vllm-eager-b200.json.gz", "chrome", 22355, 3, Window{2641664, 87128842, 0, false, "", 87412863}, 1, "GPU:0", 11596482, 72890696, 687, 11596482, 72027464},
	{"tracelens-vllm-graph-replay-mi300.json.gz", "chrome", 18485, 2, Window{151231271, 307697688, 0, false, "", 307697688}, 1, "GPU:2", 156085793, 380624, 0, 156085793, 0},
	{"tracelens-jax-conv-block-until-ready.xplane.pb", "xplane", 3650, 43, Window{1568482, 140039314, 0, false, "", 164909849}, 8, "GPU:0", 3995965, 134474867, 38, 3995965, 134899574},
	{"tracelens-jax-te-fused-attn.xplane.pb", "xplane", 1992, 3, Window{9716165571, 9729122322, 0, false, "", 9732076081}, 1, "GPU:0", 12133127, 823624, 7, 12133127, 709726},
	{"xprof-tpu-inference.xplane.pb", "xplane", 26723, 135, Window{4956159844, 97442236717, 0, false, "", 98153057682}, 4, "TPU:0", 78784927638, 13692155395, 4, 78784927638, 13705256350},
}

// TestRealFigures checks the figures of every real trace that analyses
// (TestRealTraces checks the verdicts).
func TestRealFigures(t *testing.T) {
	dir := realtraces.Dir(t)
	for _, want := range realFigures {
		t.Run(want.file, func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, want.file), trace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := analyzeAdvised(tr, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			s := &res.Source
			if s.Format != want.format || s.Events != want.events || s.Tracks != want.tracks {
				t.Errorf("source %s, %d events on %d tracks; want %s, %d on %d", s.Format, s.Events, s.Tracks, want.format, want.events, want.tracks)
			}
			if res.Window != want.window {
				t.Errorf("window %+v, want %+v", res.Window, want.window)
			}
			if len(res.Steps) != want.window.Steps {
				t.Errorf("%d steps, want the window's %d", len(res.Steps), want.window.Steps)
			}
			if got := res.Idle.Attributed(); got != want.attributed {
				t.Errorf("attributed idle %d ns, want %d", got, want.attributed)
			}
			if len(res.Devices) != want.devices {
				t.Fatalf("%d devices, want %d", len(res.Devices), want.devices)
			}
			if want.devices == 0 {
				return
			}
			d := &res.Devices[0]
			if d.ID != want.first || d.Busy != want.busy || d.Idle != want.idle || d.Gaps != want.gaps || d.WindowBusy != want.windowBusy {
				t.Errorf("first device %s: busy %d, idle %d ns, %d gaps, %d busy in the window; want %s: %d, %d, %d, %d",
					d.ID, d.Busy, d.Idle, d.Gaps, d.WindowBusy, want.first, want.busy, want.idle, want.gaps, want.windowBusy)
			}
		})
	}
}
