package tracetest

import (
	"reflect"
	"testing"
)

// TestJAXLoop checks two steps of a JAX loop against their timeline worked
// out by hand: the second kernel of a step waits for the first, the block
// ends with the device's work, and the next step's dispatch waits for the
// logging after it.
func TestJAXLoop(t *testing.T) {
	got := JAXLoop{Steps: 2, Dispatch: 100_000, Kernels: 2, Compute: 50_000, Block: true, Host: 30_000}.Spec()
	host := func(r Role, name string, tid int64, start, dur int64) Event {
		return Event{Role: r, Name: name, Thread: tid, Start: start, Dur: dur}
	}
	launch := func(start int64, corr uint64) Event {
		return Event{Role: Runtime, Name: "cuLaunchKernel", Thread: RuntimeTID, Start: start, Dur: LaunchDur, Corr: corr}
	}
	kernel := func(start int64, corr uint64) Event {
		return Event{Role: Kernel, Name: "fusion_convolution", Stream: 7, Start: start, Dur: 50_000, Corr: corr}
	}
	want := []Event{
		host(CPUOp, JAXDispatch, MainTID, 0, 100_000),
		host(CPUOp, JAXExecute, RuntimeTID, 100_000, 20_000),
		launch(100_000, 1), kernel(110_000, 1),
		launch(110_000, 2), kernel(160_000, 2),
		host(Python, JAXBlock, MainTID, 100_000, 110_000),
		host(Python, "log_metrics", MainTID, 210_000, 30_000),
		host(CPUOp, JAXDispatch, MainTID, 240_000, 100_000),
		host(CPUOp, JAXExecute, RuntimeTID, 340_000, 20_000),
		launch(340_000, 3), kernel(350_000, 3),
		launch(350_000, 4), kernel(400_000, 4),
		host(Python, JAXBlock, MainTID, 340_000, 110_000),
		host(Python, "log_metrics", MainTID, 450_000, 30_000),
	}
	if !reflect.DeepEqual(got.Events, want) {
		t.Errorf("events\n%+v\nwant\n%+v", got.Events, want)
	}
}

// TestJAXProgramWorkers checks the loop's waits on one grain worker of
// 20 ms a batch: batch 0 is ready at 20 ms and taken by 20.1; the step's
// call returns at 21.1, when the loop waits for batch 1, ready at 40 ms.
func TestJAXProgramWorkers(t *testing.T) {
	const ms = 1_000_000
	s := JAXProgram{Steps: 2, Workers: 1, Load: 20 * ms, Dispatch: ms, Compute: 10 * ms}.Spec()
	var got []Event
	for _, e := range s.Events {
		if e.Name == GrainNext || e.Name == GrainWorkerNext {
			got = append(got, e)
		}
	}
	frame := func(name string, start, dur int64) Event {
		return Event{Role: Python, Name: name, Thread: MainTID, Start: start, Dur: dur}
	}
	want := []Event{
		frame(GrainNext, 0, 20*ms+GrainTake), frame(GrainWorkerNext, 0, 20*ms+GrainTake),
		frame(GrainNext, 21*ms+GrainTake, 19*ms), frame(GrainWorkerNext, 21*ms+GrainTake, 19*ms),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("grain frames\n%+v\nwant\n%+v", got, want)
	}
}
