package advice

import (
	"fmt"
	"math"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// loaderKind is what the findings say of a kind of input pipeline
// (analyze.LoaderKindOf names them): how its fix adds workers.
type loaderKind struct {
	name string
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
	settings func(n string) []analyze.Setting
}

// loaderKinds are the kinds of input pipeline with advice of their own.
var loaderKinds = []loaderKind{
	{name: analyze.LoaderSingleProcess, queued: true,
		note: " Without workers, loading never overlaps compute.", advice: singleProcessAdvice,
		settings: func(n string) []analyze.Setting {
			return []analyze.Setting{{Name: "DataLoader.num_workers", Value: n}, {Name: "DataLoader.pin_memory", Value: "True"}}
		}},
	{name: analyze.LoaderMultiProcess, queued: true, advice: multiProcessAdvice},
	{name: analyze.LoaderTFData, advice: func(_, _ int64) string {
		return "Parallelise the tf.data pipeline: map(num_parallel_calls=tf.data.AUTOTUNE), prefetch(tf.data.AUTOTUNE), cache or preprocess offline."
	}},
	{name: analyze.LoaderGrain, advice: grainLoaderAdvice, settings: func(n string) []analyze.Setting { return []analyze.Setting{{Name: "grain.worker_count", Value: n}} }},
	{name: analyze.LoaderGrainDataset, advice: grainDatasetAdvice, settings: func(n string) []analyze.Setting {
		return []analyze.Setting{{Name: "grain.mp_prefetch.num_workers", Value: n}}
	}},
}

// loaderOf returns the row of kind, a row of no advice for the kinds
// without one.
func loaderOf(kind string) loaderKind {
	for _, k := range loaderKinds {
		if k.name == kind {
			return k
		}
	}
	return loaderKind{name: kind}
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
func workerSetting(kind string, load, compute int64) []analyze.Setting {
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
