package tracetest

import (
	"reflect"
	"testing"
)

// checkLaunches checks that no event of s starts before the trace and that
// every launch sits inside an op of its thread.
func checkLaunches(t *testing.T, s *Spec) {
	t.Helper()
	for i, e := range s.Events {
		if e.Start < 0 {
			t.Errorf("event %d (%s) starts at %d ns, before the trace", i, e.Name, e.Start)
		}
		if e.Name != "cudaLaunchKernel" {
			continue
		}
		inside := false
		for _, op := range s.Events {
			if op.Role == CPUOp && op.Thread == e.Thread && op.Start <= e.Start && e.Start+e.Dur <= op.Start+op.Dur {
				inside = true
			}
		}
		if !inside {
			t.Errorf("launch %d at [%d, %d) ns is inside no op of thread %d", i, e.Start, e.Start+e.Dur, e.Thread)
		}
	}
}

// TestLoopShortDispatch: an op too short to hold its launches is raised to
// hold them, which is the loop with that Dispatch.
func TestLoopShortDispatch(t *testing.T) {
	tests := []struct {
		name        string
		loop        Loop
		minDispatch int64
	}{
		{"no dispatch", Loop{Steps: 2, Compute: 100_000}, LaunchDur},
		{"shorter than a launch", Loop{Steps: 3, Dispatch: 5_000, Compute: 100_000, Sync: true}, LaunchDur},
		{"two devices, room for one launch", Loop{Steps: 2, Dispatch: 15_000, Compute: 100_000, Devices: 2, Skew: 10_000}, 2 * LaunchDur},
		{"backward on three devices", Loop{Steps: 2, Input: 1_000, Dispatch: 25_000, Kernels: 2, Compute: 100_000, Devices: 3, Backward: true}, 3 * LaunchDur},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.loop.Spec()
			checkLaunches(t, got)
			l := tt.loop
			l.Dispatch = tt.minDispatch
			if want := l.Spec(); !reflect.DeepEqual(got, want) {
				t.Errorf("Dispatch %d gives\n%+v\nwant the loop with Dispatch %d:\n%+v", tt.loop.Dispatch, got.Events, tt.minDispatch, want.Events)
			}
		})
	}
}

// TestJobShortDispatch: likewise for a job's ops.
func TestJobShortDispatch(t *testing.T) {
	j := Job{Steps: 2, Input: []int64{0, 50_000}, Dispatch: 2_000, Compute: 100_000, Transfer: 10_000}
	want := j
	want.Dispatch, want.CollectiveDispatch = LaunchDur, LaunchDur
	got, ws := j.Specs(), want.Specs()
	for r := range got {
		checkLaunches(t, got[r])
		if !reflect.DeepEqual(got[r], ws[r]) {
			t.Errorf("rank %d:\n%+v\nwant the job with ops of LaunchDur:\n%+v", r, got[r].Events, ws[r].Events)
		}
	}
}

// TestLoopPageableCopy: the copy call sits inside the input event, its copy
// runs once the previous step's kernel is done, and the call returns
// PageableCopy after the copy ends. Step 2 of the loop below: loading
// [6, 9) ms, the copy waits for step 1's kernel ([6, 16) ms).
func TestLoopPageableCopy(t *testing.T) {
	const ms = 1_000_000
	s := Loop{Steps: 2, Input: 3 * ms, InputName: "## sparse_data_dist ##", PageableCopy: ms, Dispatch: ms, Compute: 10 * ms}.Spec()
	checkLaunches(t, s)
	var calls, copies, inputs []Event
	for _, e := range s.Events {
		switch e.Name {
		case "cudaMemcpyAsync":
			calls = append(calls, e)
		case "Memcpy DtoH (Device -> Pageable)":
			copies = append(copies, e)
		case "## sparse_data_dist ##":
			inputs = append(inputs, e)
		}
	}
	want := []Event{
		{Role: Annotation, Name: "## sparse_data_dist ##", Thread: MainTID, Start: 6 * ms, Dur: 12 * ms},
		{Role: Runtime, Name: "cudaMemcpyAsync", Thread: MainTID, Start: 9 * ms, Dur: 9 * ms, Corr: 3},
		{Role: Memcpy, Name: "Memcpy DtoH (Device -> Pageable)", Stream: 7, Start: 16 * ms, Dur: ms, Corr: 3, Bytes: PageableCopyBytes},
	}
	if len(calls) != 2 || len(copies) != 2 || len(inputs) != 2 {
		t.Fatalf("%d calls, %d copies, %d input events; want 2 of each", len(calls), len(copies), len(inputs))
	}
	if got := []Event{inputs[1], calls[1], copies[1]}; !reflect.DeepEqual(got, want) {
		t.Errorf("step 2:\n got %+v\nwant %+v", got, want)
	}
}
