package cli

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// writeWorkerRuns writes the worker loader scenario (compute 43 ms per
// step, 150 ms per batch per worker, num_workers in the metadata) for
// each k as Chrome JSON, and returns the paths in the order given.
func writeWorkerRuns(t *testing.T, ks ...int) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, k := range ks {
		l := tracetest.Loop{Steps: 12, Compute: 43_000_000, Loader: &tracetest.WorkerLoader{Workers: k, PerBatch: 150_000_000, Metadata: true}}
		path := filepath.Join(dir, "workers"+strconv.Itoa(k)+".json")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := tracetest.WriteChrome(f, l.Spec()); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// TestSweepGolden: the sweep over k = 8, 4, 2, 1 (labels read from the
// traces' num_workers) puts the runs in order and finds the knee at 4:
// 150 ms per step with one worker (stable, data-bound), 72.1 ms with two
// (erratic), 43.0 ms from four on. The Markdown is a table to paste into
// an issue.
func TestSweepGolden(t *testing.T) {
	paths := writeWorkerRuns(t, 8, 4, 2, 1)
	for _, format := range []string{"text", "markdown"} {
		code, out, errOut := runCmd(append([]string{"sweep", "--format", format}, paths...)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		golden := filepath.Join("testdata", "sweep."+map[string]string{"text": "txt", "markdown": "md"}[format])
		if *update {
			if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%s differs from %s (run with -update to rewrite):\n%s", format, golden, out)
		}
		if !strings.Contains(out, "4 (knee)") {
			t.Errorf("%s: no knee at 4:\n%s", format, out)
		}
	}
}

// TestSweepFormats: JSON names the knee, HTML holds the chart; labels from
// --label, --labels, and their errors.
func TestSweepFormats(t *testing.T) {
	paths := writeWorkerRuns(t, 1, 4)
	code, out, _ := runCmd(append([]string{"sweep", "--format", "json", "--label", "k=1,4"}, paths...)...)
	if code != exitOK || !strings.Contains(out, `"knee": 1`) || !strings.Contains(out, `"setting": "k"`) {
		t.Errorf("json: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(append([]string{"sweep", "--format", "html", "--labels", "one,<four>"}, paths...)...)
	if code != exitOK || !strings.Contains(out, "<svg") || !strings.Contains(out, "&lt;four&gt;") || strings.Contains(out, "<four>") {
		t.Errorf("html: exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{
		{"sweep", paths[0]},
		{"sweep", "--label", "k=1", paths[0], paths[1]},
		{"sweep", "--label", "1,4", paths[0], paths[1]},
		{"sweep", "--label", "k=1,4", "--labels", "a,b", paths[0], paths[1]},
	} {
		if code, _, _ := runCmd(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestSweepResNetWorkers: from num_workers=0 to 4 the input wait per step
// falls from ~47 ms (the inline DataLoader) to ~1 ms.
func TestSweepResNetWorkers(t *testing.T) {
	code, out, errOut := runCmd("sweep", "--format", "markdown", "--label", "num_workers=0,4",
		realtraces.Path(t, workers0), realtraces.Path(t, workers4))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	row := regexp.MustCompile(`(?m)^\| (\d)[^|]*\|(?:[^|]*\|){5} *([\d.]+) ms \|`)
	waits := map[string]float64{}
	for _, m := range row.FindAllStringSubmatch(out, -1) {
		waits[m[1]], _ = strconv.ParseFloat(m[2], 64)
	}
	if w0, w4 := waits["0"], waits["4"]; w0 < 40 || w0 > 60 || w4 < 1 || w4 > 2 {
		t.Errorf("input wait per step %v ms with 0 and 4 workers, want ~40-60 and ~1-2:\n%s", waits, out)
	}
}
