package analyze

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/tracegap/tracegap/trace"
)

// Loader is what the trace says of the input pipeline's workers.
type Loader struct {
	// Known is set when the trace says how many workers load: Workers
	// is then that count, 0 for a loader inline on the loop thread.
	Known   bool
	Workers int
	// Source says where the count was read, MetaKey the metadata key
	// when there; From says it in words (package advice writes it:
	// "num_workers in the trace's metadata", "4 worker threads in the
	// trace", "the single-process DataLoader iterator").
	Source  LoaderSource
	MetaKey string
	From    string
	// PerBatch is a worker's median time per batch where the workers'
	// own frames are in the trace; 0 when they are not.
	PerBatch int64
	// Background is set when the loop thread waits on background
	// workers' queue (backgroundLoaderPatterns): workers run, whether or
	// not their count is Known. Its input time is then that wait, not
	// the workers' time per batch.
	Background bool
}

var (
	// workerTrackName names host threads or processes that are loader
	// workers.
	workerTrackName = regexp.MustCompile(`(?i)(data_?loader|pt_data|grain).{0,3}worker`)
	// workerFrame names the frames a loader worker runs a batch in:
	// PyTorch's fetch and worker loop, grain's worker-process prefetch.
	workerFrame = regexp.MustCompile(`_utils/fetch\.py|_worker_loop|process_prefetch`)
)

// LoaderSource is where a trace says how many loader workers there are.
type LoaderSource uint8

// Where a worker count is read (Loader.Source).
const (
	LoaderUnknown      LoaderSource = iota
	LoaderFromMeta                  // a key of the trace's metadata
	LoaderFromThreads               // worker threads in the trace
	LoaderFromIterator              // the single-process DataLoader iterator: none
)

// metaWorkerKeys are the metadata keys that carry a worker count, as a
// script adds them with the profiler's add_metadata_json.
var metaWorkerKeys = []string{"num_workers", "grain_worker_count"}

// findLoader reads the loader's worker count from the trace: its metadata,
// else worker threads (by name or by the frames they run, off the loop
// threads), else the DataLoader iterator's class on the loop threads.
func (a *analyzer) findLoader() Loader {
	l := Loader{Background: a.loaderInBackground()}
	tracks, perBatch := a.workerTracks()
	l.PerBatch = perBatch
	for _, k := range metaWorkerKeys {
		if n, err := strconv.Atoi(a.t.Meta[k]); err == nil && n >= 0 {
			l.Known, l.Workers, l.Source, l.MetaKey = true, n, LoaderFromMeta, k
			return l
		}
	}
	if len(tracks) > 0 {
		l.Known, l.Workers, l.Source = true, len(tracks), LoaderFromThreads
		return l
	}
	// The names are matched once each, and the events looked at only
	// when some name is the iterator's.
	single := newNameTest(func(name string) bool { return LoaderKindOf(name) == LoaderSingleProcess }, a.t)
	if !single.any() {
		return l
	}
	for _, tr := range a.launchingThreads() {
		th := a.thread(tr)
		for i := range th.evs {
			if single.matches(th.evs[i].Name) {
				l.Known, l.Workers, l.Source = true, 0, LoaderFromIterator
				return l
			}
		}
	}
	return l
}

// workerTracks returns the host tracks that are loader workers, and the
// median length of their per-batch frames (0 without).
func (a *analyzer) workerTracks() ([]int, int64) {
	launching := a.launchingThreads()
	var tracks []int
	var frames []int64
	frame := newNameMatcher(workerFrame, a.t)
	// The names are matched once each, and the events looked at only
	// when some name is a worker's frame: most traces have none.
	someFrame := frame.any()
	for i := range a.t.Tracks {
		tr := &a.t.Tracks[i]
		if tr.Kind != trace.TrackHost || slices.Contains(launching, int32(i)) {
			continue
		}
		named := workerTrackName.MatchString(tr.Name)
		var fs []int64
		evs := a.t.TrackEvents(i)
		if !someFrame {
			evs = nil // none is a frame
		}
		for j := range evs {
			if e := &evs[j]; e.Dur() > 0 && frame.matches(e.Name) {
				fs = append(fs, e.Dur())
			}
		}
		if named || len(fs) > 0 {
			tracks = append(tracks, i)
			frames = append(frames, fs...)
		}
	}
	return tracks, median(frames)
}

// WorkerPlan returns the loader workers that would keep up with the
// devices, with the figures and the case of its derivation (advice writes
// the derivation: advice.WorkerEstimate), from what the trace shows: C,
// the device busy time per step; T, the step time; L, the input wait per
// step; k, the workers the trace shows (Result.Loader); P, a worker's time
// per batch. Workers need ceil(P / C) to deliver a batch per C, and get one
// spare, as an inline loader does: ceil(P / C) + 1, never fewer than the k
// already running.
//
//   - P in the trace (the workers' own frames): that P.
//   - k workers, with L not over 5% of C or T not over C by more than 5%:
//     the loader keeps up; k, never more.
//   - k workers waited on: they deliver a batch per T, so each takes
//     P = k * T per batch.
//   - inline (k = 0): P = L.
//
// OK is false without steps or compute, and when workers run (the loop
// waits on their queue) but their count is not in the trace: the case
// then says whether they keep up, rather than give a count that may be
// below the workers already running.
func (r *Result) WorkerPlan() WorkerPlan {
	input, c, okS := r.PerStep()
	t, _ := r.StepTime()
	l := r.Loader
	if !okS || c <= 0 {
		return WorkerPlan{}
	}
	p := WorkerPlan{Input: input, Step: t, Compute: c, PerBatch: l.PerBatch, Workers: l.Workers}
	if !l.Known {
		switch {
		case !l.Background:
			return WorkerPlan{}
		case keepsUp(input, t, c):
			p.Case = WorkersUnknownKeepUp
		default:
			p.Case = WorkersUnknownShort
		}
		return p
	}
	p.OK = true
	switch {
	case l.PerBatch > 0 && l.Workers > 0:
		need := ceilDiv(l.PerBatch, c)
		if need <= l.Workers {
			p.Case, p.N = WorkersPerBatchEnough, l.Workers
			return p
		}
		p.Case, p.N = WorkersPerBatch, need+1
		return p
	case l.Workers > 0:
		p.PerBatch = int64(l.Workers) * t
		need := ceilDiv(p.PerBatch, c)
		if need <= l.Workers || keepsUp(input, t, c) {
			p.Case, p.N = WorkersKeepUp, l.Workers
			return p
		}
		p.Case, p.N = WorkersBehind, need+1
		return p
	}
	p.Case, p.N = WorkersInline, ceilDiv(input, c)+1
	return p
}

// WorkerPlan is the worker count the trace supports (see
// Result.WorkerPlan): N workers when OK, with the case that gave it and
// its figures (ns per step): L, T, C, P (k * T when the workers are
// waited on) and k.
type WorkerPlan struct {
	Case                           WorkerCase
	N                              int
	OK                             bool
	Input, Step, Compute, PerBatch int64
	Workers                        int
}

// WorkerCase is the case of the worker estimate that applies.
type WorkerCase int

const (
	// WorkersNone: no estimate (no steps or compute, or an inline loader
	// of unknown workers).
	WorkersNone WorkerCase = iota
	// WorkersUnknownKeepUp and WorkersUnknownShort: workers run, their
	// count not in the trace, and keep up or fall behind.
	WorkersUnknownKeepUp
	WorkersUnknownShort
	// WorkersPerBatchEnough and WorkersPerBatch: P in the trace, and the k
	// workers are enough or N = ceil(P / C) + 1 are needed.
	WorkersPerBatchEnough
	WorkersPerBatch
	// WorkersKeepUp and WorkersBehind: k workers keep up, or fall behind
	// and N = ceil(k * T / C) + 1 are needed.
	WorkersKeepUp
	WorkersBehind
	// WorkersInline: an inline loader, N = ceil(L / C) + 1.
	WorkersInline
)

// keepsUp reports whether workers keep up by the step figures: the loop
// waits on them for no more than 5% of compute C per step, or steps of T
// are within 5% of C.
func keepsUp(input, t, c int64) bool {
	return float64(input) <= fedShare*float64(c) || float64(t) <= (1+fedShare)*float64(c)
}

// ceilDiv returns ceil(x / y) for y > 0.
func ceilDiv(x, y int64) int {
	return int((x + y - 1) / y)
}
