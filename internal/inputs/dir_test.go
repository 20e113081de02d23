package inputs_test

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/inputs"
	"github.com/tracegap/tracegap/trace"
	_ "github.com/tracegap/tracegap/trace/all"
)

// makeTree creates the files (paths relative to root; a trailing slash
// makes an empty directory).
func makeTree(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, fileContent(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fileContent is what makeTree writes to a file: a JSON file named
// metrics.json, package.json or *.tracegap.json holds JSON that is no
// trace, any other JSON an empty trace; other files "x".
func fileContent(p string) []byte {
	base := filepath.Base(p)
	switch {
	case base == "metrics.json" || base == "package.json" || strings.Contains(base, "tracegap"):
		return []byte(`{"loss": 0.25, "name": "resnet"}`)
	case strings.HasSuffix(p, ".json"):
		return []byte(`{"traceEvents":[]}`)
	}
	return []byte("x")
}

func TestExpand(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root,
		// A TensorBoard log directory with three runs.
		"logs/plugins/profile/2024_01_02_03_04_05/host.xplane.pb",
		"logs/plugins/profile/2024_01_02_03_04_05/host.trace.json.gz", // the XPlane's twin
		"logs/plugins/profile/2024_01_02_03_04_05/host.memory_profile.json.gz",
		"logs/plugins/profile/2024_01_02_03_04_05/host.overview_page.pb",
		"logs/plugins/profile/2024_03_01_00_00_00/worker1.xplane.pb.gz",
		"logs/plugins/profile/2024_03_01_00_00_00/worker0.xplane.pb",
		"logs/plugins/profile/2023_12_31_23_59_59/old.trace.json.gz", // no XPlane twin: kept
		"logs/plugins/profile/2024_02_01_00_00_00/",                  // an empty run
		"logs/events.out.tfevents.1700000000.host",
		// A TensorFlow log directory with the profile one level down.
		"tf/train/plugins/profile/2024_05_05_05_05_05/h.xplane.pb",
		"tf/validation/events.out.tfevents.1",
		// A plain directory of traces.
		"plain/worker1.pt.trace.json.gz",
		"plain/worker0.pt.trace.json",
		"plain/notes.txt",
		"plain/.hidden.json",
		"plain/b.json",
		"plain/sub/ignored.json",
		// An artefacts folder: a trace beside files that are not.
		"artefacts/run.json",
		"artefacts/metrics.json",
		"artefacts/package.json",
		"artefacts/run.tracegap.json",
		"artefacts/tracegap.json",
		// Nothing to read.
		"empty/readme.md",
		"single.xplane.pb",
		"notatrace.bin",
	)
	logRuns := []string{
		"logs/plugins/profile/2024_03_01_00_00_00/worker0.xplane.pb",
		"logs/plugins/profile/2024_03_01_00_00_00/worker1.xplane.pb.gz",
		"logs/plugins/profile/2024_01_02_03_04_05/host.xplane.pb",
		"logs/plugins/profile/2023_12_31_23_59_59/old.trace.json.gz",
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"log dir", []string{"logs"}, logRuns},
		{"profile dir", []string{"logs/plugins/profile"}, logRuns},
		{"run dir", []string{"logs/plugins/profile/2024_01_02_03_04_05"}, logRuns[2:3]},
		{"profile one level down", []string{"tf"}, []string{"tf/train/plugins/profile/2024_05_05_05_05_05/h.xplane.pb"}},
		{"plain dir", []string{"plain"}, []string{"plain/b.json", "plain/worker0.pt.trace.json", "plain/worker1.pt.trace.json.gz"}},
		{"files stay, in order", []string{"notatrace.bin", "single.xplane.pb", "-"}, []string{"notatrace.bin", "single.xplane.pb", "-"}},
		{"mixed", []string{"single.xplane.pb", "plain/sub"}, []string{"single.xplane.pb", "plain/sub/ignored.json"}},
		{"artefacts", []string{"artefacts"}, []string{"artefacts/run.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args, want []string
			for _, a := range tt.args {
				args = append(args, join(root, a))
			}
			for _, w := range tt.want {
				want = append(want, join(root, w))
			}
			got, err := inputs.Expand(args)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("Expand(%q) =\n %q\nwant\n %q", tt.args, got, want)
			}
		})
	}
}

// TestExpandSkipping checks that the JSON files of an artefacts folder
// that hold no trace are named, with why, and tracegap's own reports are
// left out silently.
func TestExpandSkipping(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, "a/run.json", "a/metrics.json", "a/package.json", "a/run.tracegap.json", "a/tracegap.json", "a/x.pt.trace.json")
	files, skipped, err := inputs.ExpandSkipping([]string{filepath.Join(root, "a")})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{filepath.Join(root, "a/run.json"), filepath.Join(root, "a/x.pt.trace.json")}
	wantSkipped := []inputs.Skipped{
		{Path: filepath.Join(root, "a/metrics.json"), Reason: "holds no Chrome trace-event JSON"},
		{Path: filepath.Join(root, "a/package.json"), Reason: "holds no Chrome trace-event JSON"},
	}
	if !slices.Equal(files, wantFiles) || !slices.Equal(skipped, wantSkipped) {
		t.Errorf("ExpandSkipping = %q, %q; want %q, %q", files, skipped, wantFiles, wantSkipped)
	}
	// Only a directory of nothing but such files is an error.
	makeTree(t, root, "b/metrics.json")
	if _, _, err := inputs.ExpandSkipping([]string{filepath.Join(root, "b")}); err == nil || !strings.Contains(err.Error(), "no trace files") {
		t.Errorf("a directory holding only metrics.json: %v, want no trace files", err)
	}
}

func join(root, p string) string {
	if p == "-" {
		return p
	}
	return filepath.Join(root, filepath.FromSlash(p))
}

func TestExpandErrors(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, "empty/readme.md", "runs/2024_01_01_00_00_00/")
	// The formats' file names, as TestFormats holds them: "*.xplane.pb
	// (XPlane protobuf)".
	var each []string
	for _, f := range trace.Formats() {
		each = append(each, "*"+strings.Join(f.Suffixes, ", *")+" ("+f.Title+")")
	}
	patterns := strings.Join(each[:len(each)-1], ", ") + " or " + each[len(each)-1]
	for _, tt := range []struct{ arg, msg string }{
		{"empty", "empty: no trace files in this directory, expected " + patterns + " files (gzipped or not), or a TensorBoard log directory with plugins/profile/<run>/"},
		{"runs", "runs: no trace files in this directory"},
		{"missing", "no such file or directory"},
	} {
		_, err := inputs.Expand([]string{filepath.Join(root, tt.arg)})
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Expand(%s) = %v, want an error containing %q", tt.arg, err, tt.msg)
		}
	}
}

// TestExpandAside checks that a directory holding files of a kind aside
// (rank summaries) gives those alone, sorted, even beside traces; one
// without gives its traces; an empty one's error lists the kind.
func TestExpandAside(t *testing.T) {
	root := t.TempDir()
	sums := inputs.Aside{Suffix: ".summary.json.gz", Title: "rank summaries"}
	makeTree(t, root, "s/r1.summary.json.gz", "s/r0.summary.json.gz", "s/r0.pt.trace.json", "t/r0.pt.trace.json", "e/")
	for _, tt := range []struct {
		dir  string
		want []string
	}{
		{"s", []string{"s/r0.summary.json.gz", "s/r1.summary.json.gz"}},
		{"t", []string{"t/r0.pt.trace.json"}},
	} {
		got, err := inputs.Expand([]string{filepath.Join(root, tt.dir)}, sums)
		want := make([]string, len(tt.want))
		for i, p := range tt.want {
			want[i] = join(root, p)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Expand(%s) = %q, %v; want %q", tt.dir, got, err, want)
		}
	}
	_, err := inputs.Expand([]string{filepath.Join(root, "e")}, sums)
	if err == nil || !strings.Contains(err.Error(), "(gzipped or not), *.summary.json.gz (rank summaries), or a TensorBoard") {
		t.Errorf("Expand of an empty directory: %v, want an error listing *.summary.json.gz", err)
	}
}

func TestFileName(t *testing.T) {
	chrome, err := trace.LookupFormat("chrome")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		gz   bool
		want string
	}{
		{"w0", false, "w0.pt.trace.json"},
		{"w0", true, "w0.pt.trace.json.gz"},
		{"run.json", false, "run.json"},
		{"run.trace.json.gz", true, "run.trace.json.gz"},
	} {
		if got := inputs.FileName(tt.name, chrome, tt.gz); got != tt.want {
			t.Errorf("FileName(%q, chrome, gz %v) = %q, want %q", tt.name, tt.gz, got, tt.want)
		}
	}
}

// TestLoneSkippedFileNamed: a directory whose only file named as a trace
// is a FIFO or a symbolic link loop is refused with an error that names
// the file and why it was skipped, in place of the warning.
func TestLoneSkippedFileNamed(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		make      func(path string) error
	}{
		{"fifo", "a FIFO", mkfifo},
		{"loop", "a symbolic link loop", func(path string) error { return os.Symlink(filepath.Base(path), path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			path := filepath.Join(d, "a.pt.trace.json")
			if err := tc.make(path); err != nil {
				t.Skipf("%s: %v", tc.name, err)
			}
			_, _, err := inputs.ExpandSkipping([]string{d})
			if want := d + ": no trace files in this directory (skipped " + path + ": not a regular file (" + tc.why + ")), expected"; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("ExpandSkipping = %v, want an error starting %q", err, want)
			}
		})
	}
}

// TestExpandSkipsNonRegular checks that a directory expands to its regular
// files and links to them only: a FIFO named as a trace (reading it would
// wait for a writer forever) and a broken link are skipped and named.
func TestExpandSkipsNonRegular(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, "d/a.pt.trace.json", "d/r0.summary.json.gz", "real/c.pt.trace.json")
	d := filepath.Join(root, "d")
	if err := mkfifo(filepath.Join(d, "b.pt.trace.json")); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := mkfifo(filepath.Join(d, "r1.summary.json.gz")); err != nil {
		t.Fatal(err)
	}
	for link, dest := range map[string]string{"c.pt.trace.json": "../real/c.pt.trace.json", "dangling.pt.trace.json": "gone.json"} {
		if err := os.Symlink(dest, filepath.Join(d, link)); err != nil {
			t.Fatal(err)
		}
	}
	files, skipped, err := inputs.ExpandSkipping([]string{d}, inputs.Aside{Suffix: ".summary.json.gz", Title: "summaries"})
	if err != nil {
		t.Fatal(err)
	}
	// The summaries win over the traces (a directory of a job's ranks);
	// the FIFO among them is skipped as among the traces.
	wantFiles := []string{filepath.Join(d, "r0.summary.json.gz")}
	wantSkipped := []inputs.Skipped{
		{Path: filepath.Join(d, "b.pt.trace.json"), Reason: "not a regular file (a FIFO)"},
		{Path: filepath.Join(d, "dangling.pt.trace.json"), Reason: "not a regular file (a broken symbolic link)"},
		{Path: filepath.Join(d, "r1.summary.json.gz"), Reason: "not a regular file (a FIFO)"},
	}
	if !slices.Equal(files, wantFiles) || !slices.Equal(skipped, wantSkipped) {
		t.Errorf("ExpandSkipping = %q, %q;\nwant %q, %q", files, skipped, wantFiles, wantSkipped)
	}
	os.Remove(filepath.Join(d, "r0.summary.json.gz"))
	os.Remove(filepath.Join(d, "r1.summary.json.gz"))
	files, err = inputs.Expand([]string{d})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(d, "a.pt.trace.json"), filepath.Join(d, "c.pt.trace.json")}; !slices.Equal(files, want) {
		t.Errorf("Expand = %q, want %q", files, want)
	}
}

// TestExpandPerfettoExport: a JAX run folder written with
// create_perfetto_trace=True holds the XPlane and the Perfetto trace
// exported from it: one run, analysed from the XPlane, the other file
// skipped with the reason. A Perfetto trace alone is a trace.
func TestExpandPerfettoExport(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "plugins", "profile", "2026_11_27_18_00_00")
	makeTree(t, root, "plugins/profile/2026_11_27_18_00_00/host.xplane.pb", "alone/x")
	var gz strings.Builder
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"traceEvents":[]}`))
	zw.Close()
	for _, dir := range []string{run, filepath.Join(root, "alone")} {
		if err := os.WriteFile(filepath.Join(dir, "perfetto_trace.json.gz"), []byte(gz.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, skipped, err := inputs.ExpandSkipping([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(run, "host.xplane.pb")}; !slices.Equal(files, want) || len(skipped) != 1 ||
		skipped[0].Path != filepath.Join(run, "perfetto_trace.json.gz") || !strings.Contains(skipped[0].Reason, "create_perfetto_trace") {
		t.Errorf("ExpandSkipping = %q, %q; want %q and the Perfetto trace skipped", files, skipped, want)
	}
	files, _, err = inputs.ExpandSkipping([]string{filepath.Join(root, "alone")})
	if err != nil || len(files) != 1 {
		t.Errorf("a Perfetto trace alone: %q, %v; want it", files, err)
	}
}
