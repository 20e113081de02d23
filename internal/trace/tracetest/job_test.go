package tracetest

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// slowInputJob is four ranks, rank 3's input three times its compute.
var slowInputJob = Job{
	Steps: 4, Input: []int64{200_000, 200_000, 200_000, 3_000_000},
	Dispatch: 100_000, CollectiveDispatch: 50_000, Compute: 1_000_000, Transfer: 200_000,
	ClockOffset: []int64{0, 5_000_000_123, 77_777, 1_000_000_000_000},
}

// allReduces returns each rank's all-reduce kernels, clock offsets undone.
func allReduces(specs []*Spec, offsets []int64) [][]Event {
	out := make([][]Event, len(specs))
	for r, s := range specs {
		for _, e := range s.Events {
			if e.Role == Kernel && e.Name == AllReduceKernel {
				e.Start -= offsets[r]
				out[r] = append(out[r], e)
			}
		}
	}
	return out
}

// TestJobAllReduce checks the simulation against the model: on every step
// the all-reduces end together, Transfer after the latest start; from the
// second step on, the fast ranks start theirs right after their compute
// and wait for rank 3 exactly (input + dispatches per step) - compute -
// transfer.
func TestJobAllReduce(t *testing.T) {
	j := slowInputJob
	specs := j.Specs()
	if len(specs) != 4 {
		t.Fatalf("%d specs, want 4", len(specs))
	}
	ars := allReduces(specs, j.ClockOffset)
	period := j.Input[3] + j.Dispatch + j.CollectiveDispatch
	for k := 0; k < j.Steps; k++ {
		var latest int64
		for r := range ars {
			if len(ars[r]) != j.Steps {
				t.Fatalf("rank %d: %d all-reduces, want %d", r, len(ars[r]), j.Steps)
			}
			latest = max(latest, ars[r][k].Start)
		}
		if want := int64(k)*period + j.Input[3] + j.Dispatch + j.Compute; latest != want {
			t.Errorf("step %d: latest all-reduce start %d, want %d", k+1, latest, want)
		}
		for r := range ars {
			e := ars[r][k]
			if e.Start+e.Dur != latest+j.Transfer {
				t.Errorf("step %d rank %d: all-reduce ends at %d, want %d", k+1, r, e.Start+e.Dur, latest+j.Transfer)
			}
			if r < 3 && k > 0 {
				if wait, want := latest-e.Start, period-j.Compute-j.Transfer; wait != want {
					t.Errorf("step %d rank %d: waits %d, want %d", k+1, r, wait, want)
				}
			}
		}
	}
}

// TestJobExtraCompute: a rank with more compute starts its all-reduce that
// much later than the others, whose inputs match.
func TestJobExtraCompute(t *testing.T) {
	j := Job{Steps: 2, Input: []int64{100_000, 100_000}, Dispatch: 20_000, CollectiveDispatch: 20_000,
		Compute: 500_000, ExtraCompute: []int64{0, 300_000}, Transfer: 50_000}
	ars := allReduces(j.Specs(), []int64{0, 0})
	for k := range ars[0] {
		if d := ars[1][k].Start - ars[0][k].Start; d != 300_000 {
			t.Errorf("step %d: rank 1 starts %d ns after rank 0, want 300000", k+1, d)
		}
	}
}

// TestJobRankMeta: every rank's trace says its rank and the world size,
// through Build and through the Chrome writer and reader.
func TestJobRankMeta(t *testing.T) {
	for r, s := range slowInputJob.Specs() {
		var buf bytes.Buffer
		if err := WriteChrome(&buf, s); err != nil {
			t.Fatal(err)
		}
		read, err := trace.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for name, tr := range map[string]*trace.Trace{"build": Build(s), "chrome": read} {
			if got := tr.Meta["rank"]; got != strconv.Itoa(r) {
				t.Errorf("%s rank %d: Meta rank %q", name, r, got)
			}
			if got := tr.Meta["world_size"]; got != "4" {
				t.Errorf("%s rank %d: Meta world_size %q, want 4", name, r, got)
			}
		}
		if want := slowInputJob.ClockOffset[r]; Build(s).StartNs != want {
			t.Errorf("rank %d: trace starts at %d, want its clock offset %d", r, Build(s).StartNs, want)
		}
	}
	if m := (&Spec{Rank: 3}).DistributedMeta(); m != nil {
		t.Errorf("a spec without world size gives Meta %v, want none", m)
	}
}
