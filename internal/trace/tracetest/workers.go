package tracetest

import (
	"fmt"
	"strconv"
)

// Names of a worker loader's events and threads (WorkerLoader).
const (
	// WorkerFetch is the frame a DataLoader worker spends a batch in.
	WorkerFetch = "torch/utils/data/_utils/fetch.py(49): fetch"
	// WorkerTID is the thread id of worker 0; worker w is WorkerTID+w.
	WorkerTID = 100
	// TakeDur is the main thread's time to take a ready batch off the
	// workers' queue.
	TakeDur = 20_000
)

// WorkerLoader is a PyTorch DataLoader with Workers worker processes, each
// taking PerBatch ns per batch, feeding a Loop (Loop.Loader).
//
// Worker w loads batches w, w+k, w+2k, ... (k = Workers) in turn, all
// starting at time 0, as PyTorch hands out indices round-robin. At most
// Prefetch*k batches are out at a time (PyTorch's prefetch_factor, default
// 2): batch b is handed out when batch b - Prefetch*k has been taken, so a
// worker starts it at the later of that and the end of its last batch, and
// it is ready PerBatch ns later. Each step the main thread's __next__
// (MultiProcessLoader) waits until its batch is ready and then takes it
// for TakeDur.
//
// With k workers in phase the batches come in bursts of k, one per
// PerBatch: when k*Compute < PerBatch, the first step of a burst waits
// and the others find their batch ready, which is the erratic pattern of a
// loader that cannot keep up; from k >= PerBatch/Compute on the loader
// keeps up and the steps are compute-bound and steady.
type WorkerLoader struct {
	Workers  int
	PerBatch int64
	Prefetch int
	// ShowWorkers gives each worker a thread ("DataLoader worker N")
	// with a WorkerFetch frame per batch.
	ShowWorkers bool
	// Metadata writes num_workers into the trace's metadata.
	Metadata bool
}

// workerSim holds the loader's state while the loop runs.
type workerSim struct {
	wl    WorkerLoader
	free  []int64 // when each worker finishes its last batch
	ready []int64 // when each batch handed out so far is ready
	taken []int64 // when each batch was taken by the main thread
}

// startWorkers sets up the loader and the spec's threads and metadata.
func (sim *loopSim) startWorkers() {
	wl := *sim.l.Loader
	wl.Workers = max(wl.Workers, 1)
	if wl.Prefetch <= 0 {
		wl.Prefetch = 2
	}
	sim.workers = &workerSim{wl: wl, free: make([]int64, wl.Workers)}
	if wl.ShowWorkers {
		for w := range wl.Workers {
			sim.s.Threads = append(sim.s.Threads, Thread{int64(WorkerTID + w), fmt.Sprintf("DataLoader worker %d", w)})
		}
	}
	if wl.Metadata {
		if sim.s.Meta == nil {
			sim.s.Meta = map[string]string{}
		}
		sim.s.Meta["num_workers"] = strconv.Itoa(wl.Workers)
	}
}

// input returns the main thread's input time in step k (from 1): Input
// inline, or with a worker loader the wait for batch k-1 and its take.
func (sim *loopSim) input(k int) int64 {
	ws := sim.workers
	if ws == nil {
		return sim.l.Input
	}
	b := k - 1
	for len(ws.ready) <= b {
		sim.load(len(ws.ready))
	}
	took := max(ws.ready[b], sim.h) + TakeDur
	ws.taken = append(ws.taken, took)
	return took - sim.h
}

// load simulates a worker loading batch b. A batch whose hand-out waits on
// a batch not yet taken is handed out as that batch is taken, which comes
// before b is needed: b's own step takes batches in order.
func (sim *loopSim) load(b int) {
	ws := sim.workers
	w := b % ws.wl.Workers
	start := ws.free[w]
	if prev := b - ws.wl.Prefetch*ws.wl.Workers; prev >= 0 {
		start = max(start, ws.taken[prev])
	}
	end := start + ws.wl.PerBatch
	ws.free[w] = end
	ws.ready = append(ws.ready, end)
	if ws.wl.ShowWorkers {
		sim.add(Event{Role: Python, Name: WorkerFetch, Thread: int64(WorkerTID + w), Start: start, Dur: ws.wl.PerBatch})
	}
}
