package serve

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// TestUploadNsight stores and analyses an uploaded Nsight Systems export,
// and refuses the binary report with the command that exports it.
func TestUploadNsight(t *testing.T) {
	var data bytes.Buffer
	if err := tracetest.WriteNsight(&data, tracetest.Loop{Steps: 6, Input: 30 * ms, Dispatch: 1 * ms, Compute: 20 * ms}.Spec()); err != nil {
		t.Fatal(err)
	}
	an := NewAnalyzer(&run.Engine{Analysis: analyze.DefaultOptions()}, render.Options{})
	ts := start(t, Config{Analyze: an})
	a := ts.mustUpload(t, "run.sqlite", data.Bytes())
	var rep struct {
		Verdict string
		Source  struct{ Format string }
	}
	if err := json.Unmarshal(a.Report, &rep); err != nil {
		t.Fatalf("report %s: %v", a.Report, err)
	}
	if rep.Verdict != "data-bound" || rep.Source.Format != "nsight" {
		t.Errorf("verdict %q of format %q, want data-bound of nsight", rep.Verdict, rep.Source.Format)
	}
	r := ts.upload(t, "report1.nsys-rep", []byte("NVIDIA Tegra Profiler Report 2026@1@1@204-2611371766666v0.\n"), nil)
	if msg := r.errorText(t); r.code != 422 || !bytes.Contains([]byte(msg), []byte("nsys export --type sqlite")) {
		t.Errorf("upload of a .nsys-rep = %d %q, want 422 naming nsys export", r.code, msg)
	}
}
