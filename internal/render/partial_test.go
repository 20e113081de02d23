package render_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// TestPartialReachesReport: a trace cut short reads as truncated, its
// analysis is graded down and says why, and the text report says so and
// lists the reader's warnings.
func TestPartialReachesReport(t *testing.T) {
	var buf bytes.Buffer
	spec := tracetest.Loop{Steps: 8, Input: 100_000, Dispatch: 20_000, Kernels: 3, Compute: 200_000}.Spec()
	if err := tracetest.WriteChrome(&buf, spec); err != nil {
		t.Fatal(err)
	}
	cut := buf.Bytes()[:buf.Len()*3/4]
	tr, err := trace.Read(bytes.NewReader(cut), int64(len(cut)), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Truncated || len(tr.Warnings) == 0 {
		t.Fatalf("truncated %v, warnings %q: want a truncated trace saying so", tr.Truncated, tr.Warnings)
	}
	res, err := advice.Analyze(tr, analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.Confidence == analyze.High || !slices.Contains(res.Reasons, "the trace was cut short and only its first part was read") {
		t.Errorf("confidence %s, reasons %q: want it lowered for the cut", res.Confidence, res.Reasons)
	}
	var out bytes.Buffer
	if err := render.Write(&out, res, render.Text, render.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]string{"truncated: only the part before the cut was read"}, tr.Warnings...) {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, out.String())
		}
	}
}
