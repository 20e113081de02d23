package job

import (
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/trace"
)

// adviseForTest writes a job's findings. Package advice/jobadvice writes
// them and imports this package, so these tests cannot import it: the
// external test package sets it (advice_hook_test.go).
var adviseForTest func(*Result)

// analyzeAdvised is Analyze with the job's findings written.
func analyzeAdvised(ts []*trace.Trace, opt analyze.Options) (*Result, error) {
	jr, err := Analyze(ts, opt)
	if err == nil && adviseForTest != nil {
		adviseForTest(jr)
	}
	return jr, err
}

// TestAdviceHooked: the job's findings are written in these tests.
func TestAdviceHooked(t *testing.T) {
	if adviseForTest == nil {
		t.Fatal("advice_hook_test.go did not set adviseForTest")
	}
}
