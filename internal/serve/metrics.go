package serve

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"
)

// durationBuckets are the upper bounds, in seconds, of the analysis-duration
// histogram: real traces take from milliseconds to minutes.
var durationBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// metrics are the service's counters, written in the Prometheus text
// exposition format by hand (a handful of series), followed by the Go
// runtime's and the process's series (go_*, process_*) that every Go
// service exposes, from the Prometheus client library.
type metrics struct {
	runtime *prometheus.Registry

	uploads    atomic.Int64 // uploads stored as new traces
	duplicates atomic.Int64 // uploads whose content was already stored
	rejected   atomic.Int64 // uploads refused (bad input, limits, auth)
	// bytes read from uploaded files as uploaded, whole or cut off: an
	// archive's once, never again as the traces it holds. Only ever
	// added to, as a Prometheus counter must be.
	bytes    atomic.Int64
	inFlight atomic.Int64 // analyses running now
	// Set from the admission when the metrics are written:
	slots  atomic.Int64 // analysis slots taken now
	memory atomic.Int64 // estimated memory of the analyses admitted now
	queued atomic.Int64 // uploads waiting for admission now

	mu        sync.Mutex
	byStatus  map[int]int64 // responses by status code
	buckets   []int64       // analysis durations, cumulative per bucket
	durSum    float64
	durCount  int64
	durFailed int64
}

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &metrics{runtime: reg, byStatus: map[int]int64{}, buckets: make([]int64, len(durationBuckets))}
}

func (m *metrics) status(code int) {
	m.mu.Lock()
	m.byStatus[code]++
	m.mu.Unlock()
}

// analysis records one analysis's duration.
func (m *metrics) analysis(d time.Duration, failed bool) {
	s := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, ub := range durationBuckets {
		if s <= ub {
			m.buckets[i]++
		}
	}
	m.durSum += s
	m.durCount++
	if failed {
		m.durFailed++
	}
}

// meanAnalysis returns the mean analysis duration so far (0 if none).
func (m *metrics) meanAnalysis() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.durCount == 0 {
		return 0
	}
	return time.Duration(m.durSum / float64(m.durCount) * float64(time.Second))
}

// write writes every series in the Prometheus text format (version 0.0.4).
func (m *metrics) write(w io.Writer) {
	counter := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	gauge := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	counter("tracegap_uploads_total", "Uploads stored as new traces.", m.uploads.Load())
	counter("tracegap_upload_duplicates_total", "Uploads whose content was already stored.", m.duplicates.Load())
	counter("tracegap_upload_rejected_total", "Uploads refused: bad input, limits, authentication.", m.rejected.Load())
	counter("tracegap_upload_bytes_total", "Bytes received in uploads, as uploaded.", m.bytes.Load())
	gauge("tracegap_analyses_in_flight", "Analyses running now.", m.inFlight.Load())
	gauge("tracegap_upload_slots_in_use", "Analysis slots taken (bounded by --max-analyses).", m.slots.Load())
	gauge("tracegap_memory_admitted_bytes", "Estimated memory of the analyses admitted (bounded by --max-memory).", m.memory.Load())
	gauge("tracegap_upload_queue_length", "Uploads waiting for a slot or memory (bounded by --max-queue).", m.queued.Load())

	m.mu.Lock()
	defer m.mu.Unlock()
	const h = "tracegap_analysis_duration_seconds"
	fmt.Fprintf(w, "# HELP %s Time to read and analyse one upload.\n# TYPE %s histogram\n", h, h)
	for i, ub := range durationBuckets {
		fmt.Fprintf(w, "%s_bucket{le=%q} %d\n", h, formatFloat(ub), m.buckets[i])
	}
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %s\n%s_count %d\n", h, m.durCount, h, formatFloat(m.durSum), h, m.durCount)
	counter("tracegap_analysis_failures_total", "Analyses that ended in an error.", m.durFailed)

	const r = "tracegap_http_responses_total"
	fmt.Fprintf(w, "# HELP %s HTTP responses by status code.\n# TYPE %s counter\n", r, r)
	codes := make([]int, 0, len(m.byStatus))
	for c := range m.byStatus {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	for _, c := range codes {
		fmt.Fprintf(w, "%s{code=\"%d\"} %d\n", r, c, m.byStatus[c])
	}
	m.writeRuntime(w)
}

// writeRuntime writes the Go runtime's and the process's series. A failed
// gather leaves them out: the service's own series are already written.
func (m *metrics) writeRuntime(w io.Writer) {
	families, err := m.runtime.Gather()
	if err != nil {
		return
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if enc.Encode(f) != nil {
			return
		}
	}
}

func formatFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
