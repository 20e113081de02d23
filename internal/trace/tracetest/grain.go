package tracetest

// GrainAPI is how a generated JAX program (JAXProgram) loads its batches
// with grain.
type GrainAPI uint8

const (
	// GrainDataLoader is grain's DataLoader: GrainNext, and
	// GrainWorkerNext with worker processes.
	GrainDataLoader GrainAPI = iota
	// GrainDataset is grain's Dataset API run inline on the loop thread
	// (to_iter_dataset with num_threads=0, then .map(decode).batch(n)):
	// GrainBatchNext > GrainMapNext for Load ns, inside them the prefetch
	// iterator's GrainPrefetchNext for the first quarter of the load and
	// then the user's map function (GrainDecode). With Workers > 0,
	// a ThreadPrefetchIterDataset instead: one thread (GrainThreadTID) fills
	// the queue (GrainProducer for the whole run, GrainMapNext for each
	// batch, Load ns back to back), and the loop waits in
	// GrainThreadNext; Workers must then be 1.
	GrainDataset
)

// Frames of grain's Dataset API as JAX's Python tracer records them (file
// basename, line, function; the reader drops the "$"), from
// grain/_src/python/dataset/transformations: batch.py's
// _BatchDatasetIterator.__next__, map.py's _MapDatasetIterator.__next__,
// prefetch.py's PrefetchDatasetIterator.__next__ and the module function
// its prefetch thread runs.
const (
	GrainBatchNext    = "$batch.py:300 __next__"
	GrainMapNext      = "$map.py:307 __next__"
	GrainPrefetchNext = "$prefetch.py:242 __next__"
	// GrainThreadNext is ThreadPrefetchDatasetIterator.__next__, where
	// the loop waits on its thread's queue.
	GrainThreadNext = "$prefetch.py:629 __next__"
	GrainProducer   = "$prefetch.py:510 _put_iterator_elements_in_buffer"
	// GrainDecode is the user's map function.
	GrainDecode = "$input_pipeline.py:31 decode"
	// GrainThreadTID is the thread of a ThreadPrefetchIterDataset.
	GrainThreadTID = 20
)

// grainLoad adds, through python, the frames of an inline load of grain's
// Dataset API from start to end.
func grainLoad(python func(name string, start, dur int64), start, end int64) {
	dur := end - start
	python(GrainBatchNext, start, dur)
	python(GrainMapNext, start, dur)
	python(GrainPrefetchNext, start, dur/4)
	python(GrainDecode, start+dur/4, dur-dur/4)
}

// grainProducer returns the frames of a ThreadPrefetchIterDataset's thread
// making steps batches of load ns each, back to back from time 0.
func grainProducer(steps int, load int64) []Event {
	evs := []Event{{Role: Python, Name: GrainProducer, Thread: GrainThreadTID, Dur: int64(steps) * load}}
	for i := range steps {
		evs = append(evs, Event{Role: Python, Name: GrainMapNext, Thread: GrainThreadTID, Start: int64(i) * load, Dur: load})
	}
	return evs
}
