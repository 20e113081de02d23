package analyze

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// fuzzNames are the event names fuzz inputs pick from: blocking calls,
// input, ordinary host work, step markers and copies. An index past the end
// names the step "ProfilerStep#<index - len>".
var fuzzNames = []string{
	"aten::linear",
	"cudaLaunchKernel",
	"aten::item",
	"cudaStreamSynchronize",
	"cudaMemcpyAsync",
	"cudaMemcpy",
	"block_until_ready",
	tracetest.SingleProcessLoader,
	tracetest.MultiProcessLoader,
	"## data_load ##",
	"train_step",
	"autograd::backward",
	"volta_sgemm_128x64_nn",
	"Memcpy DtoH (Device -> Pageable)",
	"Memcpy HtoD (Pinned -> Device)",
	"",
}

// fuzzEventSize is the number of input bytes per event:
//
//	0: role (low 3 bits), thread or stream (next 2), device (next 1)
//	1: name index (see fuzzNames)
//	2-4: start in us, big endian
//	5-6: duration in us, big endian
//	7: correlation id (0: none)
const fuzzEventSize = 8

// fuzzOptions are the option sets the first input byte picks from: the
// defaults and edge values.
var fuzzOptions = []func(*Options){
	func(*Options) {},
	func(o *Options) { o.MinGap, o.SyncSlack = 0, 0 },
	func(o *Options) { o.MinGap = math.MaxInt64 },
	func(o *Options) { o.SyncThreshold, o.InputThreshold, o.HostThreshold = 0, 0, 0 },
	func(o *Options) { o.SyncThreshold, o.InputThreshold, o.HostThreshold, o.TopGaps = 1, 1, 1, 0 },
	func(o *Options) { o.StepRegex = `.*` },
	func(o *Options) { o.StepRegex = `^aten::` },
	func(o *Options) {
		o.SyncPatterns, o.InputPatterns = []string{`linear`}, []string{`Launch`, `^$`}
		o.SyncSlack = math.MaxInt64
	},
}

// decodeSpec turns fuzz input into an option set and a small Spec.
func decodeSpec(data []byte) (Options, *tracetest.Spec) {
	opt := DefaultOptions()
	if len(data) == 0 {
		return opt, &tracetest.Spec{}
	}
	fuzzOptions[int(data[0])%len(fuzzOptions)](&opt)
	s := &tracetest.Spec{Threads: []tracetest.Thread{{TID: 1, Name: "python"}}}
	for b := data[1:]; len(b) >= fuzzEventSize && len(s.Events) < 256; b = b[fuzzEventSize:] {
		e := tracetest.Event{
			Role:  tracetest.Role(b[0] & 7),
			Start: int64(b[2])<<16 | int64(b[3])<<8 | int64(b[4]),
			Dur:   int64(b[5])<<8 | int64(b[6]),
			Corr:  uint64(b[7]),
		}
		e.Start *= usec
		e.Dur *= usec
		if e.Role.Device() {
			e.Stream, e.Device = int(b[0]>>3&3), int(b[0]>>5&1)
		} else {
			e.Thread = int64(b[0] >> 3 & 3)
		}
		if n := int(b[1]); n < len(fuzzNames) {
			e.Name = fuzzNames[n]
		} else {
			e.Name = fmt.Sprintf("ProfilerStep#%d", n-len(fuzzNames))
		}
		s.Events = append(s.Events, e)
	}
	return opt, s
}

// encodeSpec is decodeSpec's inverse for Specs it can express (times in
// whole us, few threads and streams, names from fuzzNames or steps): it
// turns the scenario loops into seeds.
func encodeSpec(opt byte, s *tracetest.Spec) []byte {
	out := []byte{opt}
	for _, e := range s.Events {
		b0 := byte(e.Role)
		if e.Role.Device() {
			b0 |= byte(e.Stream&3)<<3 | byte(e.Device&1)<<5
		} else {
			b0 |= byte(e.Thread&3) << 3
		}
		n := slices.Index(fuzzNames, e.Name)
		var k int
		if _, err := fmt.Sscanf(e.Name, "ProfilerStep#%d", &k); err == nil {
			n = len(fuzzNames) + k
		}
		start, dur := e.Start/usec, e.Dur/usec
		out = append(out, b0, byte(max(n, 0)), byte(start>>16), byte(start>>8), byte(start),
			byte(dur>>8), byte(dur), byte(e.Corr))
	}
	return out
}

// FuzzAnalyze analyses small generated traces with default and edge options
// and checks what must hold of any Result.
func FuzzAnalyze(f *testing.F) {
	for i, sc := range scenarios {
		l := sc.loop
		l.Steps = min(l.Steps, 4)
		f.Add(encodeSpec(byte(i), l.Spec()))
	}
	for i, sc := range idleScenarios {
		f.Add(encodeSpec(byte(len(scenarios)+i), sc.spec))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opt, s := decodeSpec(data)
		res, err := analyzeAdvised(tracetest.Build(s), opt)
		if err != nil {
			t.Fatalf("Analyze: %v", err)
		}
		checkResult(t, res)
		// Build makes the readers' mapping: the same spec written in each
		// format and read back must give the same result.
		for _, w := range writers {
			want := res
			switch w.name {
			case "chrome":
				if crowdedInstant(s) {
					continue
				}
			case "xplane":
				// Where the analysis breaks a tie by track order (two
				// threads' launches sharing a correlation id, step
				// candidates at one instant), XPlane's order rules.
				if want, err = analyzeAdvised(tracetest.Build(xplaneOrder(s)), opt); err != nil {
					t.Fatalf("Analyze in XPlane's order: %v", err)
				}
			}
			var buf bytes.Buffer
			if err := w.write(&buf, s); err != nil {
				t.Fatalf("writing %s: %v", w.name, err)
			}
			tr, err := trace.Read(&buf, int64(buf.Len()), trace.Options{})
			if err != nil {
				t.Fatalf("reading the spec back from %s: %v", w.name, err)
			}
			back, err := analyzeAdvised(tr, opt)
			if err != nil {
				t.Fatalf("Analyze of the %s trace: %v", w.name, err)
			}
			got, want := formatNeutral(back), formatNeutral(want)
			// Copies count by their launch, which a fuzzed trace may
			// share with any host event by correlation id; scenarios
			// compare them (TestFormatsAgree).
			got.Copies, want.Copies = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s gives\n%+v\nBuild gives\n%+v", w.name, got, want)
			}
		}
	})
}

// xplaneOrder returns s with its events in the order in which the XPlane
// reader meets their lines, so that Build, which makes tracks in order of
// first appearance, makes them in the reader's order: the device planes by
// device, each with its streams by number and then the annotations' line,
// and then the host plane with a line per thread by TID.
func xplaneOrder(s *tracetest.Spec) *tracetest.Spec {
	line := func(e *tracetest.Event) [2]int64 {
		switch {
		case e.Role == tracetest.DeviceAnnotation:
			return [2]int64{int64(e.Device), math.MaxInt64}
		case e.Role.Device():
			return [2]int64{int64(e.Device), int64(e.Stream)}
		}
		return [2]int64{math.MaxInt64, e.Thread}
	}
	o := *s
	o.Events = slices.Clone(s.Events)
	slices.SortStableFunc(o.Events, func(x, y tracetest.Event) int {
		a, b := line(&x), line(&y)
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	return &o
}

// crowdedInstant reports whether more than 16 events of s start at one
// instant on one thread or stream. The Chrome reader binds a launch flow
// by looking at most 16 events back from the flow's time (so that flows
// cost no more than that on any input), and may then miss the event that
// already carries the flow's id; Kineto never writes such a pile-up.
func crowdedInstant(s *tracetest.Spec) bool {
	type key struct {
		onDevice    bool
		thread      int64
		dev, stream int
		start       int64
	}
	n := map[key]int{}
	for _, e := range s.Events {
		k := key{onDevice: e.Role.Device(), start: e.Start}
		if k.onDevice {
			k.dev, k.stream = e.Device, e.Stream
		} else {
			k.thread = e.Thread
		}
		if n[k]++; n[k] > 16 {
			return true
		}
	}
	return false
}

// checkResult checks the invariants of a Result.
func checkResult(t *testing.T, r *Result) {
	t.Helper()
	switch r.Verdict {
	case Parallel, Sequential, DataBound, HostBound, Stalled:
	case NoDevice:
		if len(r.Devices) != 0 || len(r.Gaps) != 0 {
			t.Errorf("no-device with %d devices and %d gaps", len(r.Devices), len(r.Gaps))
		}
		return
	default:
		t.Fatalf("verdict %q", r.Verdict)
	}
	switch r.Confidence {
	case High, Medium, Low:
	default:
		t.Errorf("confidence %q", r.Confidence)
	}
	w := Interval{r.Window.Start, r.Window.End}
	if w.End < w.Start {
		t.Fatalf("window %v ends before it starts", w)
	}
	checkBreakdown(t, "run", r.Idle, w.End-w.Start)
	perDevice := map[string]*Breakdown{}
	for _, d := range r.Devices {
		if d.Busy < 0 || d.Idle < 0 || d.Busy+d.Idle != d.End-d.Start {
			t.Errorf("%s: busy %d + idle %d != span %d", d.ID, d.Busy, d.Idle, d.End-d.Start)
		}
		if d.Utilization < 0 || d.Utilization > 1 {
			t.Errorf("%s: utilization %v", d.ID, d.Utilization)
		}
		idle := d.WindowIdle
		checkBreakdown(t, d.ID, idle, w.End-w.Start)
		if got := d.WindowBusy + idle.Attributed() + idle.BelowMinGap; got != w.End-w.Start {
			t.Errorf("%s: window busy %d + idle %d != window %d", d.ID, d.WindowBusy, got-d.WindowBusy, w.End-w.Start)
		}
		perDevice[d.ID] = &Breakdown{}
	}
	for i, g := range r.Gaps {
		checkGap(t, r, &g, w, r.Options.MinGap)
		if i > 0 && g.Start < r.Gaps[i-1].Start {
			t.Errorf("gap %d starts at %d, before gap %d at %d", i, g.Start, i-1, r.Gaps[i-1].Start)
		}
		if g.Step < -1 || g.Step >= len(r.Steps) {
			t.Errorf("gap %d: step %d of %d", i, g.Step, len(r.Steps))
		}
		sum := perDevice[g.Device]
		if sum == nil {
			t.Fatalf("gap %d on unknown device %q", i, g.Device)
		}
		for c := InSync; c < NumCauses; c++ {
			sum.Add(c, g.Split.Of(c))
		}
	}
	for _, d := range r.Devices {
		if got, want := *perDevice[d.ID], d.WindowIdle; got.Attributed() != want.Attributed() || got.Sync() != want.Sync() || got.Of(Input) != want.Of(Input) || got.Of(Host) != want.Of(Host) {
			t.Errorf("%s: gaps sum to %+v, device says %+v", d.ID, got, want)
		}
	}
	if len(r.TopGaps) > r.Options.TopGaps {
		t.Errorf("%d top gaps, want at most %d", len(r.TopGaps), r.Options.TopGaps)
	}
	for i, k := range r.TopGaps {
		if k < 0 || k >= len(r.Gaps) || i > 0 && r.Gaps[k].Dur > r.Gaps[r.TopGaps[i-1]].Dur {
			t.Errorf("top gaps %v out of range or order", r.TopGaps)
			break
		}
	}
	checkSteps(t, r)
	for _, f := range r.Findings {
		if f.ID == "" || f.Message == "" || f.Fix == "" || !slices.Contains([]string{"high", "medium", "info"}, f.Severity) {
			t.Errorf("finding %+v", f)
		}
	}
}

// checkSteps checks that the steps are in time order and that each step's
// busy and idle time fill the time it owns, from its start to the next
// step's (the last: to the window's end), adding up to the window's.
func checkSteps(t *testing.T, r *Result) {
	t.Helper()
	var idle Breakdown
	var busy int64
	for i, s := range r.Steps {
		span := r.Window.End - s.Start
		if i+1 < len(r.Steps) {
			span = r.Steps[i+1].Start - s.Start
		}
		if s.Dur < 0 || span < 0 || i == 0 && s.Start != r.Window.Start {
			t.Errorf("step %d: start %d dur %d, owning %d ns of window %v", i, s.Start, s.Dur, span, r.Window)
		}
		checkBreakdown(t, s.Name, s.Idle, span)
		if got := s.DeviceBusy + s.Idle.Attributed() + s.Idle.BelowMinGap; len(r.Devices) == 1 && got != span {
			t.Errorf("step %d: busy %d + idle %+v = %d, want the %d ns it owns", i, s.DeviceBusy, s.Idle, got, span)
		}
		for c := InSync; c < NumCauses; c++ {
			idle.Add(c, s.Idle.Of(c))
		}
		idle.BelowMinGap += s.Idle.BelowMinGap
		busy += s.DeviceBusy
	}
	if len(r.Steps) > 0 && len(r.Devices) == 1 && (idle != r.Idle || busy != r.Devices[0].WindowBusy) {
		t.Errorf("steps sum to busy %d idle %+v, window has busy %d idle %+v", busy, idle, r.Devices[0].WindowBusy, r.Idle)
	}
}

// checkBreakdown checks that every part of b is a share of dur within
// [0, 1] and that the parts do not add up to more than dur.
func checkBreakdown(t *testing.T, what string, b Breakdown, dur int64) {
	t.Helper()
	parts := []int64{b.Of(InSync), b.Of(AfterSync), b.Of(Input), b.Of(Host), b.Of(Untraced), b.BelowMinGap}
	var sum int64
	for _, p := range parts {
		if p < 0 || p > dur {
			t.Errorf("%s: idle %+v has a part outside [0, %d]", what, b, dur)
		}
		sum += p
	}
	if sum > dur {
		t.Errorf("%s: idle %+v sums to %d, more than %d", what, b, sum, dur)
	}
}

// checkGap checks that g lies inside the window, its split sums to its
// length and its segments tile it in time order.
func checkGap(t *testing.T, res *Result, g *Gap, w Interval, minGap int64) {
	t.Helper()
	if g.Dur < minGap || g.Dur <= 0 || g.Start < w.Start || g.Start+g.Dur > w.End {
		t.Errorf("gap %+v outside window %v or shorter than %d", g, w, minGap)
	}
	if g.Split.Attributed() != g.Dur || g.Split.BelowMinGap != 0 {
		t.Errorf("gap at %d of %d: split %+v", g.Start, g.Dur, g.Split)
	}
	var split Breakdown
	at := g.Start
	for s := range res.Segments(g) {
		if s.Start != at || s.Dur <= 0 {
			t.Errorf("gap at %d of %d: segment %+v, want one starting at %d", g.Start, g.Dur, s, at)
		}
		// A sync segment names its blocking call; a stalled one may, the
		// call the host blocked in while the device was stalled.
		needs := s.Cause == InSync || s.Cause == AfterSync
		if needs && s.Sync == 0 || !needs && s.Cause != Stall && s.Sync != 0 {
			t.Errorf("gap at %d: %s segment names sync %q", g.Start, s.Cause, res.CallName(s.Sync))
		}
		split.Add(s.Cause, s.Dur)
		at = s.Start + s.Dur
	}
	if at != g.Start+g.Dur || split.Attributed() != g.Dur {
		t.Errorf("gap at %d of %d: segments end at %d, split %+v", g.Start, g.Dur, at, split)
	}
	if split != g.Split {
		t.Errorf("gap at %d: segments split %+v, gap says %+v", g.Start, split, g.Split)
	}
	if c := largestCause(&g.Split); g.Cause != c {
		t.Errorf("gap at %d: cause %s, largest share %s", g.Start, g.Cause, c)
	}
}

// TestFuzzEncoding checks that the seeds mean what they were made from:
// every scenario, encoded and decoded, gets its verdict and idle split.
func TestFuzzEncoding(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			opt, s := decodeSpec(encodeSpec(0, sc.loop.Spec()))
			res, err := analyzeAdvised(tracetest.Build(s), opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != sc.verdict || res.Idle != sc.idle {
				t.Errorf("verdict %s idle %+v, want %s %+v", res.Verdict, res.Idle, sc.verdict, sc.idle)
			}
		})
	}
}
