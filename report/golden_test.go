package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tracegap/tracegap/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/chrome"
	_ "github.com/tracegap/tracegap/trace/xplane"
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

// goldenTraces are the traces whose reports are kept as golden files: real
// traces with a known verdict (paths relative to the module root).
var goldenTraces = []struct{ name, path string }{
	{"workers0", "../shared/traces/kineto-resnet50-workers0.pt.trace.json.gz"},
	{"jax-conv", "../shared/traces/tracelens-jax-conv-block-until-ready.xplane.pb"},
	{"workers4", "../shared/traces/kineto-resnet50-workers4.pt.trace.json.gz"},
	{"example", "testdata/example.pt.trace.json.gz"},
}

var (
	resultsMu sync.Mutex
	results   = map[string]*analyze.Result{}
)

// analyzed reads and analyses a trace once per test binary, with the
// default options; the source path is shortened to the file name so that
// golden files do not depend on where the checkout is.
func analyzed(t testing.TB, rel string) *analyze.Result {
	t.Helper()
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if r := results[rel]; r != nil {
		return r
	}
	path := filepath.Join(moduleRoot(t), rel)
	if name, ok := strings.CutPrefix(rel, "../shared/traces/"); ok {
		path = realtraces.Path(t, name) // skipped where missing, but not under CI
	}
	tr, err := trace.Open(path, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := analyze.Analyze(tr, analyze.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	res.Source.Path = filepath.Base(rel)
	results[rel] = res
	return res
}

var goldenFormats = []struct {
	f   report.Format
	ext string
}{
	{report.Text, "txt"}, {report.JSON, "json"}, {report.Markdown, "md"}, {report.HTML, "html"},
}

func TestGolden(t *testing.T) {
	root := moduleRoot(t)
	for _, tr := range goldenTraces {
		t.Run(tr.name, func(t *testing.T) {
			res := analyzed(t, tr.path)
			for _, gf := range goldenFormats {
				var buf bytes.Buffer
				if err := report.Write(&buf, res, gf.f, report.Options{}); err != nil {
					t.Fatalf("%s: %v", gf.f, err)
				}
				checkGolden(t, filepath.Join(root, "testdata", "golden", tr.name+"."+gf.ext), buf.Bytes())
			}
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
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
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test ./report -update if the change is intended)\n%s",
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

// TestTextNamesCauseAndFix checks that the text report for a trace with a
// known problem names the problem and its fix in words a person can act on.
func TestTextNamesCauseAndFix(t *testing.T) {
	tests := []struct {
		name, path string
		verdict    analyze.Verdict
		want       []string
	}{
		{"workers0", goldenTraces[0].path, analyze.Sequential, []string{
			"Single-process DataLoader", "per step against", "num_workers", "runs inline",
		}},
		{"jax-conv", goldenTraces[1].path, analyze.Sequential, []string{
			"block_until_ready", "off the step",
		}},
		{"workers4", goldenTraces[2].path, analyze.Parallel, []string{
			"parallel (high confidence): the GPU was busy",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := analyzed(t, tt.path)
			var buf bytes.Buffer
			if err := report.Write(&buf, res, report.Text, report.Options{}); err != nil {
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

// BenchmarkWrite renders each format for the data-bound ResNet-50 trace.
func BenchmarkWrite(b *testing.B) {
	res := analyzed(b, goldenTraces[0].path)
	for _, gf := range goldenFormats {
		b.Run(gf.ext, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := report.Write(&buf, res, gf.f, report.Options{}); err != nil {
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
		if typ == reflect.TypeFor[report.Breakdown]() {
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
	data, err := json.Marshal(report.Breakdown{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(m))
}
