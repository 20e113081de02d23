package job

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// jobTraces turns every rank's spec of j into a trace: straight through
// Build, or written in a format and read back.
func jobTraces(t *testing.T, j tracetest.Job, format string) []*trace.Trace {
	t.Helper()
	var ts []*trace.Trace
	for _, s := range j.Specs() {
		if format == "build" {
			ts = append(ts, tracetest.Build(s))
			continue
		}
		var buf bytes.Buffer
		write := tracetest.WriteChrome
		if format == "xplane" {
			write = tracetest.WriteXPlane
		}
		if err := write(&buf, s); err != nil {
			t.Fatal(err)
		}
		tr, err := trace.Read(&buf, int64(buf.Len()), trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	return ts
}

// inputHost is idle of input and host time only.
func inputHost(input, host int64) analyze.Breakdown {
	var b analyze.Breakdown
	b.Add(analyze.Input, input)
	b.Add(analyze.Host, host)
	return b
}

// TestAnalyzeSlowInput: four ranks, rank 3's input (3 ms) longer than
// its compute (1 ms). Its host sets the pace, input + dispatches =
// 3.15 ms a step; the other ranks' hosts run ahead, so their all-reduce
// starts as soon as their compute ends and waits for rank 3's. The job is
// data-bound, rank 3 is the straggler of every step, and every wait is
// explained by what rank 3's device sat idle in meanwhile: its input, and
// the aten::linear that launches its compute.
func TestAnalyzeSlowInput(t *testing.T) {
	const (
		fast, slow = 200_000, 3_000_000
		dispatch   = 100_000
		collDisp   = 50_000
		compute    = 1_000_000
		transfer   = 200_000
		steps      = 6
		window     = steps - 1 // the first step is warm-up
	)
	job := tracetest.Job{Steps: steps, Input: []int64{fast, fast, fast, slow}, Dispatch: dispatch,
		CollectiveDispatch: collDisp, Compute: compute, Transfer: transfer}
	shifted := job
	shifted.ClockOffset = []int64{0, 5_000_000_123, 77_777, 1_000_000_000_000}
	// In a steady step a fast rank waits the period less its compute and
	// the transfer. Rank 3's device was idle that long since the previous
	// all-reduce ended: in its input until the input's end, then for
	// dispatch in aten::linear.
	period := int64(slow + dispatch + collDisp)
	wait := period - compute - transfer
	waitHost := int64(dispatch)
	waitInput := wait - waitHost

	tests := []struct {
		name, format string
		job          tracetest.Job
	}{
		{"build", "build", job},
		{"build, clocks offset", "build", shifted},
		{"chrome, clocks offset", "chrome", shifted},
		{"xplane, clocks offset", "xplane", shifted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jr, err := analyzeAdvised(jobTraces(t, tt.job, tt.format), analyze.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if o := &jr.Overall; o.Verdict != analyze.DataBound {
				t.Errorf("job verdict %s (%v), want data-bound", o.Verdict, o.Reasons)
			}
			if len(jr.Steps) != window || jr.Collectives != window {
				t.Fatalf("%d steps, %d collectives, want %d of each", len(jr.Steps), jr.Collectives, window)
			}
			wantStep := Collective{
				Straggler: 3, Spread: wait,
				Waits: []int64{wait, wait, wait, 0}, Transfers: []int64{transfer, transfer, transfer, transfer},
				Split: WaitSplit{Idle: inputHost(3*waitInput, 3*waitHost)},
			}
			for _, s := range jr.Steps {
				if s.Straggler != 3 || s.Doing != "input" || s.Wait != 3*wait {
					t.Errorf("%s: straggler %d doing %q imposing %d, want rank 3 in input imposing %d", s.Name, s.Straggler, s.Doing, s.Wait, 3*wait)
				}
				c := s.Collectives[0]
				if c.Name != tracetest.AllReduceKernel || c.Straggler != wantStep.Straggler || c.Spread != wantStep.Spread ||
					!slices.Equal(c.Waits, wantStep.Waits) || !slices.Equal(c.Transfers, wantStep.Transfers) || c.Split != wantStep.Split {
					t.Errorf("%s: collective %+v, want %+v", s.Name, c, wantStep)
				}
			}
			for i, r := range jr.Ranks {
				// The window starts where the warm-up step's work ends,
				// so the first step's extra wait is outside it.
				want := WaitSplit{Idle: inputHost(window*waitInput, window*waitHost)}
				alone, straggles := analyze.Parallel, 0
				if i == 3 {
					want, alone, straggles = WaitSplit{}, analyze.DataBound, window
				}
				if r.Rank != i || r.Offset != 0 || r.Wait != want || r.Transfer != window*transfer ||
					r.Result.Verdict != alone || r.Verdict != analyze.DataBound || r.Straggles != straggles || !pacedAt(r.Result, period) {
					t.Errorf("rank %d: rank %d offset %d wait %+v transfer %d verdict %s alone %s straggles %d step time %d; want offset 0 wait %+v transfer %d verdict data-bound alone %s straggles %d step time %d",
						i, r.Rank, r.Offset, r.Wait, r.Transfer, r.Verdict, r.Result.Verdict, r.Straggles, r.StepTime,
						want, window*transfer, alone, straggles, period)
				}
			}
			if fs := jr.Overall.Findings; len(fs) == 0 || fs[0].ID != "straggler" || fs[0].Severity != "high" || !strings.Contains(fs[0].Message, "Rank 3 ") {
				t.Errorf("first finding %+v, want a high straggler finding naming rank 3", fs)
			}
		})
	}
}

// TestAnalyzeImbalance: ranks with the same input, rank 2 with 300 us
// more compute a step. The others wait exactly that for it, all of it load
// imbalance; no host cause passes its threshold, so the job is parallel
// and a load-imbalance finding says why the ranks wait.
func TestAnalyzeImbalance(t *testing.T) {
	const extra = 300_000
	job := tracetest.Job{Steps: 5, Input: []int64{100_000, 100_000, 100_000}, Dispatch: 20_000,
		CollectiveDispatch: 20_000, Compute: 500_000, ExtraCompute: []int64{0, 0, extra}, Transfer: 50_000}
	jr, err := analyzeAdvised(jobTraces(t, job, "build"), analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if jr.Overall.Verdict != analyze.Parallel {
		t.Errorf("job verdict %s (%v), want parallel", jr.Overall.Verdict, jr.Overall.Reasons)
	}
	for _, s := range jr.Steps {
		c := s.Collectives[0]
		if s.Straggler != 2 || s.Doing != "compute" || !slices.Equal(c.Waits, []int64{extra, extra, 0}) || c.Split != (WaitSplit{Compute: 2 * extra}) {
			t.Errorf("%s: straggler %d doing %q, waits %v split %+v; want rank 2 computing, waits [%d %d 0] all compute",
				s.Name, s.Straggler, s.Doing, c.Waits, c.Split, extra, extra)
		}
	}
	if !slices.ContainsFunc(jr.Overall.Findings, func(f analyze.Finding) bool { return f.ID == "load-imbalance" }) {
		t.Errorf("findings %+v: want load-imbalance", jr.Overall.Findings)
	}
}

// TestAnalyzeRanks: ranks come from Meta, or from the input order when
// not every trace has one; traces that cannot be one job are refused with
// the reason.
func TestAnalyzeRanks(t *testing.T) {
	job := tracetest.Job{Steps: 2, Input: []int64{100_000, 100_000}, Dispatch: 20_000,
		CollectiveDispatch: 20_000, Compute: 500_000, Transfer: 50_000}
	withMeta := func(meta ...map[string]string) []*trace.Trace {
		ts := jobTraces(t, job, "build")
		for i := range ts {
			ts[i].Meta = meta[i]
		}
		return ts
	}
	tests := []struct {
		name   string
		traces []*trace.Trace
		ranks  []int
		errSub string
	}{
		{"reversed", withMeta(map[string]string{"rank": "1", "world_size": "2"}, map[string]string{"rank": "0", "world_size": "2"}), []int{0, 1}, ""},
		{"no rank", withMeta(nil, map[string]string{"rank": "5"}), []int{0, 1}, ""},
		{"one trace", jobTraces(t, job, "build")[:1], nil, "at least 2"},
		{"nil trace", []*trace.Trace{nil, nil}, nil, "trace 0 is nil"},
		{"same rank", withMeta(map[string]string{"rank": "1"}, map[string]string{"rank": "1"}), nil, "both hold rank 1"},
		{"bad rank", withMeta(map[string]string{"rank": "one"}, map[string]string{"rank": "1"}), nil, `rank "one": expected a number`},
		{"two jobs", withMeta(map[string]string{"rank": "0", "world_size": "2"}, map[string]string{"rank": "1", "world_size": "4"}), nil, "world size 4"},
		{"rank past the world", withMeta(map[string]string{"rank": "0", "world_size": "2"}, map[string]string{"rank": "7", "world_size": "2"}), nil, "rank 7 of a world of 2: expected a rank below the world size"},
		{"world past belief", withMeta(map[string]string{"rank": "0", "world_size": "9223372036854775807"}, map[string]string{"rank": "1", "world_size": "9223372036854775807"}), nil, "world size 9223372036854775807: expected 1 to 16777216 ranks"},
		{"world of none", withMeta(map[string]string{"rank": "0", "world_size": "0"}, map[string]string{"rank": "1", "world_size": "0"}), nil, "world size 0: expected 1 to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jr, err := analyzeAdvised(tt.traces, analyze.DefaultOptions())
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("error %v, want one saying %q", err, tt.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, r := range jr.Ranks {
				got = append(got, r.Rank)
			}
			if !slices.Equal(got, tt.ranks) {
				t.Errorf("ranks %v, want %v", got, tt.ranks)
			}
		})
	}
}

func TestApportion(t *testing.T) {
	tests := []struct {
		total   int64
		weights []int64
		want    []int64
	}{
		{6, []int64{1, 2, 3}, []int64{1, 2, 3}},
		{10, []int64{1, 1, 1}, []int64{4, 3, 3}},
		{5, []int64{0, 3, 0, 1}, []int64{0, 4, 0, 1}},
		{1e18, []int64{3e18, 1e18}, []int64{75e16, 25e16}},
		{7, []int64{0, 0}, []int64{0, 0}},
		{0, []int64{2, 2}, []int64{0, 0}},
	}
	for _, tt := range tests {
		if got := apportion(tt.total, tt.weights); !slices.Equal(got, tt.want) {
			t.Errorf("apportion(%d, %v) = %v, want %v", tt.total, tt.weights, got, tt.want)
		}
	}
}

func TestIsCollective(t *testing.T) {
	for name, want := range map[string]bool{
		"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, ncclWorkElem)":      true,
		"ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)": true,
		"rcclGenericKernel":              true,
		"all-reduce.3":                   true,
		"all-gather-start":               true,
		"reduce-scatter.12":              true,
		"all-to-all":                     true,
		"collective-permute-done.2":      true,
		"fusion.all-reduce":              false,
		"volta_sgemm_128x64_nn":          false,
		"Memcpy DtoD (Device -> Device)": false,
	} {
		if got := isCollective(name); got != want {
			t.Errorf("isCollective(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestAnalyzeDLRM: the 8 ranks of a real DLRM step (ProfilerStep#10 in
// the traces, though the files are named step_12) on 8 GPUs. Every rank
// finishes the step within a millisecond of the others but enters it
// between 0 and 7.5 ms later than rank 1; rank 7 enters last and holds
// every rank in the step's first all-to-all (ncclKernel_SendRecv), which
// makes the ranks' step lengths differ: rank 1 waits 7.6 ms there. What
// made rank 7 late happened before the traced step.
func TestAnalyzeDLRM(t *testing.T) {
	ts := dlrmTraces(t)
	jr, err := analyzeAdvised(ts, analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(jr.Ranks) != 8 || jr.WorldSize != 8 || len(jr.Steps) != 1 {
		t.Fatalf("%d ranks of %d, %d steps; want 8 of 8, 1 step", len(jr.Ranks), jr.WorldSize, len(jr.Steps))
	}
	s := jr.Steps[0]
	// Each rank's one step ends at the end of its last device work (the
	// host's step marker runs on past it while the profiler stops).
	wantDur := []int64{14_341_000, 19_787_000, 12_904_000, 19_196_000, 17_879_000, 17_696_000, 12_980_000, 12_396_000}
	if s.Name != "ProfilerStep#10" || !slices.Equal(s.Dur, wantDur) {
		t.Errorf("step %s lengths %v, want ProfilerStep#10 with %v", s.Name, s.Dur, wantDur)
	}
	if s.Straggler != 7 || s.Doing != "late" || len(s.Collectives) != 8 {
		t.Errorf("straggler rank %d doing %q, %d collectives; want rank 7, late, 8", s.Straggler, s.Doing, len(s.Collectives))
	}
	// Rank 1 starts it 7.625 ms before rank 7; the job counts 7.601 ms
	// of that as its wait: the rest falls where its device ran other work.
	first := s.Collectives[0]
	if !strings.HasPrefix(first.Name, "ncclKernel_SendRecv") || first.Straggler != 7 || first.Waits[1] != 7_601_000 || first.Waits[7] != 0 {
		t.Errorf("first collective %s: straggler %d, rank 1 waits %d, rank 7 %d; want a SendRecv, rank 7, 7601000, 0",
			first.Name, first.Straggler, first.Waits[1], first.Waits[7])
	}
	// One host clock: the corrections from collective ends are jitter.
	for _, r := range jr.Ranks {
		if d := r.Offset - (ts[r.Rank].StartNs - ts[1].StartNs) - jr.Ranks[1].Offset; abs(d) > clockJitter {
			t.Errorf("rank %d: clock corrected by %d ns, want less than %d", r.Rank, d, clockJitter)
		}
	}
	if jr.Overall.Verdict != analyze.HostBound || jr.Overall.Confidence != analyze.Low {
		t.Errorf("job %s (%s), want host-bound at low confidence (one step, waits carried in)", jr.Overall.Verdict, jr.Overall.Confidence)
	}
	// The straggler was late for reasons before the trace: the job's own
	// verdict's finding and fix come from the ranks' findings.
	if f := jr.Overall.Findings[0]; f.ID != "dispatch-overhead" || f.Severity != "high" || !strings.Contains(f.Message, "8 of its 8 ranks") || f.Fix == "" {
		t.Errorf("first finding %+v: want the ranks' high dispatch-overhead with its fix", f)
	}
	i := slices.IndexFunc(jr.Overall.Findings, func(f analyze.Finding) bool { return f.ID == "step-spread" })
	if i < 0 || !strings.Contains(jr.Overall.Findings[i].Message, "rank 1 first, rank 7 last") {
		t.Errorf("findings %+v: want step-spread naming rank 1 first and rank 7 last", jr.Overall.Findings)
	}
}

// pacedAt reports whether every step of res but the last runs for period
// (start to next start), and the step time is the mean over the tiled
// window, the last step included.
func pacedAt(res *analyze.Result, period int64) bool {
	for _, s := range res.Steps[:len(res.Steps)-1] {
		if s.Dur != period {
			return false
		}
	}
	st, ok := res.StepTime()
	return ok && st == res.Window.Dur()/int64(len(res.Steps))
}
