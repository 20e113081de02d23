package compare

import (
	"math"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestCompareJAXHostAhead compares a loop of two calls a step whose 4
// grain workers take 160 ms a batch (40 ms a batch against 40 ms of
// compute: every step 40 ms, all busy, the host ahead by up to 4 steps)
// with one that keeps up at 10 ms a step, on GPU and on TPU: the step
// times are the truth on both (on TPU the warm-up step's second call used
// to leak into the window: 41.8 ms), and so the whole comparison is the
// same.
func TestCompareJAXHostAhead(t *testing.T) {
	summarize := func(p tracetest.JAXProgram) Summary { return summarizeXPlane(t, p) }
	var rows [2][]Row
	for k, tpu := range []bool{false, true} {
		base := summarize(tracetest.JAXProgram{Steps: 12, TPU: tpu, Workers: 4, Load: 160 * ms, Calls: 2, Dispatch: ms, Compute: 20 * ms})
		next := summarize(tracetest.JAXProgram{Steps: 12, TPU: tpu, Workers: 4, Load: 30 * ms, Dispatch: ms, Compute: 10 * ms})
		if base.StepTime != 40*ms || base.DeviceBusy != 40*ms || next.StepTime != 10*ms {
			t.Errorf("TPU %v: step times %d (busy %d) and %d ns, want %d (all busy) and %d", tpu, base.StepTime, base.DeviceBusy, next.StepTime, 40*ms, 10*ms)
		}
		rows[k] = Compare(base, next, Options{}).Rows
	}
	if len(rows[0]) == 0 || len(rows[0]) != len(rows[1]) {
		t.Fatalf("%d rows on GPU, %d on TPU", len(rows[0]), len(rows[1]))
	}
	for i := range rows[0] {
		x, y := rows[0][i], rows[1][i]
		if math.IsNaN(x.Ratio) && math.IsNaN(y.Ratio) {
			x.Ratio, y.Ratio = 0, 0
		}
		if x != y {
			t.Errorf("row %d: GPU %+v, TPU %+v", i, rows[0][i], rows[1][i])
		}
	}
}
