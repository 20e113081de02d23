package advice

import (
	"fmt"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/human"
)

// workerFix advises the worker count in the framework's terms where the
// trace gives one, and otherwise returns fallback.
func (a *adviser) workerFix(fallback string) string {
	r := a.r
	if r.Framework == analyze.TensorFlow {
		return fallback // tf.data has no worker count: workerAdvice's tf.data terms
	}
	n, why, ok := WorkerEstimate(r)
	name, setting := "DataLoader's num_workers", fmt.Sprintf("DataLoader(num_workers=%d, prefetch_factor=2 or more)", n)
	switch {
	case r.Framework == analyze.JAX && a.datasetAPI():
		name, setting = "the pipeline's worker processes, ds.mp_prefetch(grain.MultiprocessingOptions(num_workers=k))", fmt.Sprintf("ds.mp_prefetch(grain.MultiprocessingOptions(num_workers=%d))", n)
	case r.Framework == analyze.JAX:
		name, setting = "grain_worker_count", fmt.Sprintf("grain_worker_count=%d (with %s of 2 or more)", n, grainBufferKnob)
	}
	tune := ""
	if r.Framework == analyze.JAX {
		tune = " " + grainAutoTune
	}
	if r.WorkerPlan().Case == analyze.WorkersUnknownShort {
		return fmt.Sprintf("Raise %s: %s.%s This is an estimate from one trace; confirm it with a run, or run tracegap sweep over a few counts.", name, why, tune)
	}
	if !ok || r.Loader.Workers == 0 {
		return fallback
	}
	if n <= r.Loader.Workers {
		return fmt.Sprintf("Keep the %d workers (%s): %s. Look elsewhere for the idle.", r.Loader.Workers, r.Loader.From, why)
	}
	return fmt.Sprintf("Use %s; the trace shows %s (%s). Derived as %s.%s This is an estimate from one trace; confirm it with a run, or run tracegap sweep over a few counts.", setting, human.Count(r.Loader.Workers, "worker"), r.Loader.From, why, tune)
}

// workerSettings is the setting workerFix recommends, as the finding's
// structured fields: none when the workers the trace shows are enough.
func (a *adviser) workerSettings(kind string, load, compute int64) []analyze.Setting {
	r := a.r
	n, why, ok := WorkerEstimate(r)
	switch {
	case !ok && why != "":
		return nil // workers of unknown count: no count to set
	case !ok || r.Loader.Workers == 0 || r.Framework == analyze.TensorFlow:
		return workerSetting(kind, load, compute)
	case n <= r.Loader.Workers:
		return nil
	case r.Framework == analyze.JAX && a.datasetAPI():
		return []analyze.Setting{{Name: "grain.mp_prefetch.num_workers", Value: fmt.Sprint(n)}}
	case r.Framework == analyze.JAX:
		return []analyze.Setting{{Name: "grain.worker_count", Value: fmt.Sprint(n)}}
	}
	return []analyze.Setting{{Name: "DataLoader.num_workers", Value: fmt.Sprint(n)}}
}

// datasetAPI reports whether the loop loads with grain's Dataset API (its
// input is named so: analyze.LoaderKindOf).
func (a *adviser) datasetAPI() bool {
	return a.f.InputName != "" && analyze.LoaderKindOf(a.f.InputName) == analyze.LoaderGrainDataset
}

// WorkerEstimate returns the loader workers that would keep up with the
// devices (analyze.Result.WorkerPlan), and its derivation in words; ok is
// false where the plan gives no count, the derivation then saying why
// when the trace tells.
func WorkerEstimate(r *analyze.Result) (n int, derivation string, ok bool) {
	p := r.WorkerPlan()
	return p.N, derive(&p), p.OK
}

// derive says how p's count follows from its figures.
func derive(p *analyze.WorkerPlan) string {
	C, T, L, P := human.Duration(p.Compute), human.Duration(p.Step), human.Duration(p.Input), human.Duration(p.PerBatch)
	switch p.Case {
	case analyze.WorkersUnknownKeepUp:
		return fmt.Sprintf("workers run (the loop takes batches from their queue), their count not in the trace; steps of T = %s against C = %s of compute, the loop waiting %s per step: the loader keeps up", T, C, L)
	case analyze.WorkersUnknownShort:
		return fmt.Sprintf("workers already run (the loop waits on their queue) but the trace does not say how many: with k workers now, each takes about k * T = k * %s per batch, so about ceil(k * %s / %s) + 1 would keep up, more than k", T, T, C)
	case analyze.WorkersPerBatchEnough:
		return fmt.Sprintf("a worker takes P = %s per batch, so %d deliver one per %s against C = %s of compute: the loader keeps up, more workers would not help",
			P, p.Workers, human.Duration(p.PerBatch/int64(p.Workers)), C)
	case analyze.WorkersPerBatch:
		return fmt.Sprintf("ceil(P / C) + 1 = ceil(%s / %s) + 1 = %d, where P is a worker's time per batch and C the compute per step, plus one spare", P, C, p.N)
	case analyze.WorkersKeepUp:
		return fmt.Sprintf("steps of T = %s against C = %s of compute, the loop waiting %s per step on %d workers: the loader keeps up, more workers would not help", T, C, L, p.Workers)
	case analyze.WorkersBehind:
		return fmt.Sprintf("with k = %d workers a batch comes every step of T = %s, so a worker takes about P = k * T = %s per batch; ceil(P / C) + 1 = ceil(%s / %s) + 1 = %d, plus one spare",
			p.Workers, T, P, P, C, p.N)
	case analyze.WorkersInline:
		return fmt.Sprintf("ceil(L / C) + 1 = ceil(%s / %s) + 1 = %d: loading side by side at the pace of compute, plus one spare", L, C, p.N)
	}
	return ""
}

// loaderFrom says where the trace says how many loader workers there are.
func loaderFrom(l analyze.Loader) string {
	switch l.Source {
	case analyze.LoaderFromMeta:
		return l.MetaKey + " in the trace's metadata"
	case analyze.LoaderFromThreads:
		return human.Count(l.Workers, "worker thread") + " in the trace"
	case analyze.LoaderFromIterator:
		return "the single-process DataLoader iterator"
	}
	return ""
}
