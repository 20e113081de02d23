package analyze

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// TestRealTraces checks the verdict on every trace listed in expected.tsv
// and the sets' (realtraces.All) against the experts' (one of them where
// several are listed; "error" means reading or analysing must fail).
func TestRealTraces(t *testing.T) {
	dir := realtraces.Dir(t)
	for _, c := range realtraces.All(t) {
		name, want := c.File, c.Expect
		t.Run(name, func(t *testing.T) {
			tr, err := trace.Open(filepath.Join(dir, name), trace.Options{})
			var res *Result
			if err == nil {
				res, err = analyzeAdvised(tr, DefaultOptions())
			}
			if slices.Contains(want, "error") {
				if err == nil {
					t.Errorf("got verdict %s, want an error", res.Verdict)
				} else if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans several lines: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(want, string(res.Verdict)) {
				t.Errorf("verdict %s (%s), want %s; idle %+v; reasons %q", res.Verdict, res.Confidence, strings.Join(want, "|"), res.Idle, res.Reasons)
			}
			checkForeignAdvice(t, res)
		})
	}
}
