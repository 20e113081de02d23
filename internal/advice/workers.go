package advice

import (
	"fmt"

	"github.com/tracegap/tracegap/internal/analyze"
)

// workerFix advises the worker count in the framework's terms where the
// trace gives one, and otherwise returns fallback.
func (a *adviser) workerFix(fallback string) string {
	r := a.r
	if r.Framework == analyze.TensorFlow {
		return fallback // tf.data has no worker count: workerAdvice's tf.data terms
	}
	n, why, ok := r.WorkerEstimate()
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
	if r.WorkersShort() {
		return fmt.Sprintf("Raise %s: %s.%s This is an estimate from one trace; confirm it with a run, or run tracegap sweep over a few counts.", name, why, tune)
	}
	if !ok || r.Loader.Workers == 0 {
		return fallback
	}
	if n <= r.Loader.Workers {
		return fmt.Sprintf("Keep the %d workers (%s): %s. Look elsewhere for the idle.", r.Loader.Workers, r.Loader.From, why)
	}
	return fmt.Sprintf("Use %s; the trace shows %s (%s). Derived as %s.%s This is an estimate from one trace; confirm it with a run, or run tracegap sweep over a few counts.", setting, plural(r.Loader.Workers, "worker"), r.Loader.From, why, tune)
}

// workerSettings is the setting workerFix recommends, as the finding's
// structured fields: none when the workers the trace shows are enough.
func (a *adviser) workerSettings(kind string, load, compute int64) []analyze.Setting {
	r := a.r
	n, why, ok := r.WorkerEstimate()
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
	return a.f.InputName != "" && a.f.InputKind == analyze.LoaderGrainDataset
}
