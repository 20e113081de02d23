package render_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/render"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// moduleRoot walks up from the package directory to go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// goldenTrace is a trace whose reports are kept as golden files: a file in
// the repository (path, relative to the module root), or a generated run
// (spec) that the test writes as file, in the format its name gives, so
// that the readers take part.
type goldenTrace struct {
	name string
	path string
	file string
	spec *tracetest.Spec
}

// ms is a millisecond in nanoseconds.
const ms = int64(1_000_000)

// goldenTraces cover each verdict (the example is a data-bound run), with
// steps or without, one GPU or two, and both formats. The real traces in
// ../shared stay out of the repository and so out of the goldens;
// analyze.TestRealFigures and TestRealReports cover them.
var goldenTraces = []goldenTrace{
	{name: "example", path: "testdata/example.pt.trace.json.gz"},
	// Kernels of 50 us, each behind 200 us of dispatch on the host.
	{name: "host-bound", file: "host-bound.pt.trace.json", spec: tracetest.Loop{
		Steps: 6, Dispatch: ms / 5, Kernels: 10, Compute: ms / 20,
	}.Spec()},
	// JAX: the Python thread blocks until the device is done, then logs
	// for 3 ms before it dispatches the next step; no step markers.
	{name: "jax-sequential", file: "jax-sequential.xplane.pb", spec: tracetest.JAXLoop{
		Steps: 6, Dispatch: 2 * ms, Kernels: 4, Compute: 2 * ms, Block: true, Host: 3 * ms,
	}.Spec()},
	// Worker processes feed two GPUs; each step's sync waits only for the
	// previous step's work, so the host stays a step ahead.
	{name: "parallel", file: "parallel.pt.trace.json", spec: tracetest.Loop{
		Steps: 6, Input: ms / 2, InputName: tracetest.MultiProcessLoader, Dispatch: 1 * ms, Kernels: 4,
		Compute: 5 * ms, Devices: 2, Sync: true, SyncPrevious: true,
	}.Spec()},
}

var (
	resultsMu sync.Mutex
	results   = map[string]*analyze.Result{}
)

// analyzed reads and analyses a trace once per test binary, with the
// default options; the source path is shortened to the file name so that
// golden files do not depend on where the checkout is.
func analyzed(t testing.TB, gt goldenTrace) *analyze.Result {
	t.Helper()
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if r := results[gt.name]; r != nil {
		return r
	}
	path := gt.path
	switch {
	case gt.spec != nil:
		path = writeSpec(t, gt.file, gt.spec)
	case strings.HasPrefix(path, "../shared/traces/"):
		path = realtraces.Path(t, filepath.Base(path)) // skipped where missing, but not under CI
	default:
		path = filepath.Join(moduleRoot(t), path)
	}
	tr, err := trace.Open(path, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := advice.Analyze(tr, analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	res.Source.Path = filepath.Base(path)
	results[gt.name] = res
	return res
}

// writeSpec writes s into a temporary file named name, as XPlane when the
// name ends in .pb and as Chrome JSON otherwise.
func writeSpec(t testing.TB, name string, s *tracetest.Spec) string {
	t.Helper()
	var buf bytes.Buffer
	write := tracetest.WriteChrome
	if strings.HasSuffix(name, ".pb") {
		write = tracetest.WriteXPlane
	}
	if err := write(&buf, s); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// goldenFormats is every format a run is written in, with the ending of
// its golden files: a format added to the table needs its golden files.
var goldenFormats = func() []goldenFormat {
	var out []goldenFormat
	for _, f := range render.Formats(render.OfRuns) {
		out = append(out, goldenFormat{f, strings.TrimPrefix(f.Suffix(), ".")})
	}
	return out
}()

type goldenFormat struct {
	f   render.Format
	ext string
}

func TestGolden(t *testing.T) {
	root := moduleRoot(t)
	for _, tr := range goldenTraces {
		t.Run(tr.name, func(t *testing.T) {
			res := analyzed(t, tr)
			for _, gf := range goldenFormats {
				var buf bytes.Buffer
				if err := render.Write(&buf, res, gf.f, render.Options{}); err != nil {
					t.Fatalf("%s: %v", gf.f, err)
				}
				got := buf.Bytes()
				if gf.f == render.HTML {
					got = elideFixed(got)
				}
				checkGolden(t, filepath.Join(root, "testdata", "golden", tr.name+"."+gf.ext), got)
			}
		})
	}
}

// fixedHTML matches the page's style and script: the template's fixed
// text, the same on every page.
var fixedHTML = regexp.MustCompile(`(?s)(<style>|<script>)\n.*?\n(</style>|</script>)`)

// elideFixed replaces the body of the page's style and script by a line
// that says where they are, so that a golden HTML file holds what the
// report says of its run, and a change to the page's CSS or script shows
// in one golden file, page.html, rather than in all.
func elideFixed(page []byte) []byte {
	return fixedHTML.ReplaceAll(page, []byte("$1\n(see page.html)\n$2"))
}

// TestHTMLFixedText checks that every golden trace's page has the same
// style and script, and holds them to the golden file page.html.
func TestHTMLFixedText(t *testing.T) {
	var first []byte
	for _, gt := range goldenTraces {
		var buf bytes.Buffer
		if err := render.Write(&buf, analyzed(t, gt), render.HTML, render.Options{}); err != nil {
			t.Fatal(err)
		}
		fixed := bytes.Join(fixedHTML.FindAll(buf.Bytes(), -1), []byte("\n"))
		switch {
		case first == nil:
			first = fixed
		case !bytes.Equal(fixed, first):
			t.Errorf("%s: style or script differ from %s's:\n%s", gt.name, goldenTraces[0].name, firstDiff(string(first), string(fixed)))
		}
	}
	checkGolden(t, filepath.Join(moduleRoot(t), "testdata", "golden", "page.html"), append(first, '\n'))
}

// Golden files stay small enough to review: a change to one shows as a
// few changed lines in a diff.
const (
	maxGoldenBytes = 100 << 10
	maxGoldenLine  = 2000
)

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if len(got) > maxGoldenBytes {
		t.Errorf("%s would be %d bytes, over %d: golden files come from small traces", filepath.Base(path), len(got), maxGoldenBytes)
	}
	for i, line := range bytes.Split(got, []byte("\n")) {
		if len(line) > maxGoldenLine {
			t.Errorf("%s: line %d is %d bytes, over %d: a diff of it would not show what changed", filepath.Base(path), i+1, len(line), maxGoldenLine)
			break
		}
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/render -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test ./internal/render -update if the change is intended)\n%s",
			filepath.Base(path), firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + clipLine(w) + "\n  got  " + clipLine(g)
		}
	}
	return "(no line differs)"
}

func clipLine(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// goldenNamed returns the golden trace called name.
func goldenNamed(t testing.TB, name string) goldenTrace {
	t.Helper()
	for _, gt := range goldenTraces {
		if gt.name == name {
			return gt
		}
	}
	t.Fatalf("no golden trace %q", name)
	return goldenTrace{}
}

// TestTextNamesCauseAndFix checks that the text report for a trace with a
// known problem names the problem and its fix in words a person can act on.
func TestTextNamesCauseAndFix(t *testing.T) {
	tests := []struct {
		name    string
		verdict analyze.Verdict
		want    []string
	}{
		{"example", analyze.DataBound, []string{
			"Single-process DataLoader", "per step against", "num_workers",
		}},
		{"jax-sequential", analyze.Sequential, []string{
			"block_until_ready", "off the step",
		}},
		{"host-bound", analyze.HostBound, []string{
			"aten::linear", "CUDA graphs",
		}},
		{"parallel", analyze.Parallel, []string{
			"parallel (high confidence): the 2 GPUs were busy",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := analyzed(t, goldenNamed(t, tt.name))
			var buf bytes.Buffer
			if err := render.Write(&buf, res, render.Text, render.Options{}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if res.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s", res.Verdict, tt.verdict)
			}
			for _, w := range tt.want {
				// The analysis owns the wording; hold it to the facts,
				// not to capitals.
				if !strings.Contains(strings.ToLower(out), strings.ToLower(w)) {
					t.Errorf("text report lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("report:\n%s", out)
			}
		})
	}
}

// BenchmarkWrite renders each format for a real run: the ResNet-50 trace
// with a single-process DataLoader.
func BenchmarkWrite(b *testing.B) {
	res := analyzed(b, goldenTrace{name: "workers0", path: "../shared/traces/kineto-resnet50-workers0.pt.trace.json.gz"})
	for _, gf := range goldenFormats {
		b.Run(gf.ext, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := render.Write(&buf, res, gf.f, render.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}

// TestSchemaDocumented checks that docs/report-v1.md names every field of
// the JSON report.
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "report-v1.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Slice || typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		if typ == reflect.TypeFor[report.BreakdownV1]() {
			documentedKeys(t, doc, path, breakdownKeys(t))
			return
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "" || tag == "-" {
				t.Errorf("%s.%s has no JSON name", path, f.Name)
				continue
			}
			documentedKeys(t, doc, path, []string{tag})
			walk(f.Type, path+"."+tag)
		}
	}
	walk(reflect.TypeFor[report.Report](), "report")
}

// documentedKeys checks that doc names each JSON key of the object at path.
func documentedKeys(t *testing.T, doc []byte, path string, keys []string) {
	t.Helper()
	for _, k := range keys {
		name := "`" + k + "`"
		if strings.HasSuffix(k, "_share") {
			name = "`*_share`" // documented once for all shares
		}
		if !bytes.Contains(doc, []byte(name)) && !bytes.Contains(doc, []byte(k+"` (")) {
			t.Errorf("docs/report-v1.md does not document %s.%s", path, k)
		}
	}
}

// breakdownKeys returns the members of an idle breakdown as JSON writes
// them: one pair per cause, so the list follows the cause table.
func breakdownKeys(t *testing.T) []string {
	t.Helper()
	data, err := json.Marshal(report.BreakdownV1{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(m))
}
