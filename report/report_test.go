package report_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/report"
)

// Example decodes a JSON report (`tracegap analyze --format json`), here
// the example trace's golden report.
func Example() {
	b, err := os.ReadFile("../testdata/golden/example.json")
	if err != nil {
		panic(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		panic(err)
	}
	fmt.Println(r.Schema, r.Verdict, r.Figures.StepNs, len(r.Steps))
	for c, key := range report.CauseKeys {
		if ns := r.IdleBreakdown.Ns[c]; ns > 0 {
			fmt.Println(key, ns)
		}
	}
	// Output:
	// tracegap/report/v1 data-bound 63000000 5
	// input 89500000
	// host 500000
}

// TestBreakdownJSON: a breakdown is one flat object, a member per cause
// and figure, that decodes back to itself; a member it does not know is
// an error.
func TestBreakdownJSON(t *testing.T) {
	var b report.BreakdownV1
	for c := range report.CauseKeys {
		b.Ns[c], b.Share[c] = int64(c+1)*1000, float64(c+1)/100
	}
	b.IdleNs, b.IdleShare, b.SyncShare = 28000, 0.28, 0.03
	js, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(js), `{"in_sync_ns":1000,"after_sync_ns":2000,`) || !strings.Contains(string(js), `"stalled_share":0.07,"sync_share":0.03`) {
		t.Errorf("breakdown JSON %s: want the causes' members in CauseKeys order", js)
	}
	var back report.BreakdownV1
	if err := json.Unmarshal(js, &back); err != nil || back != b {
		t.Errorf("decoded %+v (%v), want %+v", back, err, b)
	}
	err = json.Unmarshal([]byte(`{"in_sync_ns":1,"warp_ns":2}`), &back)
	if err == nil || !strings.Contains(err.Error(), `unknown member "warp_ns"`) {
		t.Errorf("an unknown member: %v, want it named", err)
	}
}
