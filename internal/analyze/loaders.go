package analyze

import (
	"fmt"
	"github.com/tracegap/tracegap/internal/human"
	"math"
	"strings"
)

// The kinds of input pipeline that findings name, where code tells them
// apart; loaderKinds holds what each is.
const (
	singleProcessLoader = "single-process DataLoader"
	multiProcessLoader  = "multi-process DataLoader"
	tfDataLoader        = "tf.data pipeline"
	grainLoader         = "grain loader"
	// grainDataset is the loader kind of grain's Dataset API.
	grainDataset = "grain Dataset pipeline"
	// anyLoader is the kind of an input pipeline no row recognises.
	anyLoader = "input pipeline"
)

// loaderKind is a kind of input pipeline: its name in findings, the input
// event names that show it, and how its fix adds workers.
type loaderKind struct {
	name  string
	match func(name string) bool
	// queued is set where the input time is the wait on the loader's
	// own workers, or on none: a loader fast enough for compute still
	// needs workers, not just overlap (workerAdvice).
	queued bool
	// note ends the finding's message.
	note string
	// advice says how to hide load per step behind compute per step
	// (both positive, load over compute unless queued); nil: the general
	// advice.
	advice func(load, compute int64) string
	// settings are the settings of n workers; nil: none.
	settings func(n string) []Setting
}

// loaderKinds are the kinds of input pipeline, most specific first:
// describeLoader names a pipeline by the first that matches.
var loaderKinds = []loaderKind{
	{name: singleProcessLoader, match: contains("_SingleProcessDataLoaderIter"), queued: true,
		note: " Without workers, loading never overlaps compute.", advice: singleProcessAdvice,
		settings: func(n string) []Setting {
			return []Setting{{"DataLoader.num_workers", n}, {"DataLoader.pin_memory", "True"}}
		}},
	{name: multiProcessLoader, match: contains("_MultiProcessingDataLoaderIter"), queued: true, advice: multiProcessAdvice},
	{name: "DataPipe", match: contains("DataPipe")},
	{name: tfDataLoader, match: func(name string) bool {
		return strings.Contains(name, "IteratorGetNext") || strings.HasPrefix(name, "Iterator::")
	}, advice: func(_, _ int64) string {
		return "Parallelise the tf.data pipeline: map(num_parallel_calls=tf.data.AUTOTUNE), prefetch(tf.data.AUTOTUNE), cache or preprocess offline."
	}},
	{name: grainLoader, match: func(name string) bool {
		return strings.Contains(name, "grain") || strings.HasPrefix(name, "data_loader.py:") || strings.Contains(name, "process_prefetch")
	}, advice: grainLoaderAdvice, settings: func(n string) []Setting { return []Setting{{"grain.worker_count", n}} }},
	{name: grainDataset, match: func(name string) bool {
		return strings.HasPrefix(name, "prefetch.py:") || strings.Contains(name, "DatasetIterator.") || strings.HasPrefix(name, "Prefetch.") ||
			grainModuleFrame().MatchString(name)
	}, advice: grainDatasetAdvice, settings: func(n string) []Setting { return []Setting{{"grain.mp_prefetch.num_workers", n}} }},
	{name: "MaxText input pipeline", match: func(name string) bool { return strings.HasPrefix(name, "multihost_dataloading.py:") }},
}

// contains returns a test for names holding s.
func contains(s string) func(string) bool {
	return func(name string) bool { return strings.Contains(name, s) }
}

// loaderOf returns the row of kind, a row of no advice for anyLoader.
func loaderOf(kind string) loaderKind {
	for _, k := range loaderKinds {
		if k.name == kind {
			return k
		}
	}
	return loaderKind{name: kind}
}

// describeLoader names the kind of input pipeline a name shows, for
// findings.
func describeLoader(name string) string {
	for _, k := range loaderKinds {
		if k.match(name) {
			return k.name
		}
	}
	return anyLoader
}

// workerAdvice estimates the loader workers that would hide input of load
// per step behind compute per step.
func workerAdvice(kind string, load, compute int64) string {
	const confirm = " This is an estimate from one trace; confirm it with a run."
	if compute <= 0 {
		return "Add loader workers and prefetching, or preprocess the data offline." + confirm
	}
	k := loaderOf(kind)
	if load <= compute && !k.queued {
		// (With workers, load is the wait on their queue, not their speed.)
		// Fast enough: the fix is overlap, never more workers.
		return fmt.Sprintf("Loading (%s per step) is already faster than compute (%s): run it in the background so that it overlaps compute (a worker or a prefetching thread, prefetch to the device) instead of adding workers.%s",
			human.Duration(load), human.Duration(compute), confirm)
	}
	if k.advice != nil {
		return k.advice(load, compute) + confirm
	}
	return "Overlap input with compute: more loader workers, prefetching, or offline preprocessing." + confirm
}

// workerSetting is the worker count slowInput recommends, as a setting;
// nil when it recommends none.
func workerSetting(kind string, load, compute int64) []Setting {
	k := loaderOf(kind)
	if compute <= 0 || load <= compute && !k.queued || k.settings == nil {
		return nil
	}
	return k.settings(fmt.Sprint(workersFor(load, compute)))
}

func singleProcessAdvice(load, compute int64) string {
	n := workersFor(load, compute)
	keep := "one worker loading in the background keeps"
	if n > 2 {
		keep = fmt.Sprintf("%d workers loading side by side keep", n-1)
	}
	return fmt.Sprintf("Load in background workers: DataLoader(num_workers=%d, pin_memory=True, persistent_workers=True). Derived as ceil(load / compute) + 1 = ceil(%s / %s) + 1 = %d: %s up with compute, plus one spare.",
		n, human.Duration(load), human.Duration(compute), n, keep)
}

func multiProcessAdvice(load, compute int64) string {
	c := float64(compute)
	return fmt.Sprintf("Add DataLoader workers and raise prefetch_factor. The trace does not say how many workers there are; with k workers now, about ceil(k * (compute + wait) / compute) = ceil(k * (%s + %s) / %s) would keep up (from k = 4: %d).",
		human.Duration(compute), human.Duration(load), human.Duration(compute), int(math.Ceil(4*(c+float64(load))/c)))
}

func grainLoaderAdvice(load, compute int64) string {
	n := workersFor(load, compute)
	return fmt.Sprintf("Load in grain worker processes and prefetch to the device: grain_worker_count=%d (derived as ceil(load / compute) + 1 = ceil(%s / %s) + 1, with %s of 2 or more); with workers already running, raise the count until the loop stops waiting on their queue. %s",
		n, human.Duration(load), human.Duration(compute), grainBufferKnob, grainAutoTune)
}

func grainDatasetAdvice(load, compute int64) string {
	n := workersFor(load, compute)
	return fmt.Sprintf("Run the grain pipeline in worker processes rather than on the loop thread: ds.mp_prefetch(grain.MultiprocessingOptions(num_workers=%d)) (derived as ceil(load / compute) + 1 = ceil(%s / %s) + 1); a thread (grain.experimental.ThreadPrefetchIterDataset) overlaps only work that releases the GIL. %s",
		n, human.Duration(load), human.Duration(compute), grainAutoTune)
}
