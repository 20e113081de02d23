package analyze

import (
	"testing"

	"github.com/tracegap/tracegap/trace"
)

// adviseForTest writes a result's findings. Package advice writes them and
// imports this package, so these tests cannot import it: the external
// test package sets it (advice_hook_test.go), so that the tests here check
// a trace's findings beside its figures, as a report shows them.
var adviseForTest func(*Result)

// analyzeAdvised is Analyze with the findings written.
func analyzeAdvised(t *trace.Trace, opt Options) (*Result, error) {
	r, err := Analyze(t, opt)
	if err == nil {
		advised(r)
	}
	return r, err
}

// advised writes r's findings and returns r.
func advised(r *Result) *Result {
	if adviseForTest != nil {
		adviseForTest(r)
	}
	return r
}

// TestAdviceHooked: the findings are written in these tests.
func TestAdviceHooked(t *testing.T) {
	if adviseForTest == nil {
		t.Fatal("advice_hook_test.go did not set adviseForTest")
	}
}
