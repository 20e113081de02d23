package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/advice"
	"github.com/tracegap/tracegap/internal/analyze"
	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// TestAnnotateRealTraces annotates every shared trace and reads the result
// back: the original events must all be there, on the same clock, and the
// tracegap process must hold exactly one slice per gap at the gap's start
// and length to the nanosecond, on the track of the gap's device. The
// annotated trace must analyse as the original did.
func TestAnnotateRealTraces(t *testing.T) {
	var paths []string
	for _, c := range realtraces.Sample(t) {
		if !slices.Contains(c.Expect, "error") {
			paths = append(paths, realtraces.Path(t, c.File))
		}
	}
	ranks, _ := filepath.Glob(filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks", "*.json.gz"))
	if testing.Short() {
		ranks = ranks[:min(len(ranks), 1)]
	}
	paths = append(paths, ranks...)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "annotated.json.gz")
			if code, stdout, stderr := tg("annotate", path, "-o", out); code != 0 || stdout != "" || !strings.HasPrefix(stderr, "tracegap: wrote "+out) {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			orig, res := openAnalyzed(t, path)
			ann, annRes := openAnalyzed(t, out)
			if ann.StartNs != orig.StartNs {
				t.Errorf("annotated trace starts at %d ns, the original at %d: not the same clock", ann.StartNs, orig.StartNs)
			}
			// A Chrome input is copied through, so its tracks keep their
			// pids and tids; XPlane lines become Chrome threads, known by
			// their names.
			byID := orig.Format == "chrome"
			if got, want := eventKeys(ann, byID, false), eventKeys(orig, byID, false); !slices.Equal(got, want) {
				t.Errorf("annotated trace has %d events outside tracegap's, the original %d; first difference: %s",
					len(got), len(want), firstDiff(got, want))
			}
			if got, want := gapSlices(t, ann, res), gapKeys(res); !slices.Equal(got, want) {
				t.Errorf("annotated trace has %d gap slices, want one per gap (%d); first difference: %s",
					len(got), len(want), firstDiff(got, want))
			}
			if annRes.Verdict != res.Verdict || len(annRes.Gaps) != len(res.Gaps) {
				t.Errorf("annotated trace analyses as %s with %d gaps, the original as %s with %d",
					annRes.Verdict, len(annRes.Gaps), res.Verdict, len(res.Gaps))
			}
		})
	}
}

func openAnalyzed(t *testing.T, path string) (*trace.Trace, *analyze.Result) {
	t.Helper()
	af := addAnalysisFlags(pflag.NewFlagSet("", pflag.ContinueOnError))
	tr, err := trace.Open(path, af.readOptions())
	if err != nil {
		t.Fatal(err)
	}
	res, err := advice.Analyze(tr, af.options())
	if err != nil {
		t.Fatal(err)
	}
	return tr, res
}

// eventKeys lists the events of t outside the tracegap process (inside
// it, with ours), one sorted string each: where, what and when.
func eventKeys(t *trace.Trace, byID, ours bool) []string {
	var keys []string
	for i := range t.Tracks {
		tr := &t.Tracks[i]
		if isAnnotation(t, i) != ours {
			continue
		}
		where := tr.Kind.String() + " " + tr.Device + " "
		if byID {
			where += tr.Name + " " + tr.Process + "/" + tr.Thread
		} else {
			where += lineName(tr.Name)
		}
		for j, e := range t.TrackEvents(i) {
			if e.Flags&trace.FlagFlow != 0 {
				// Chrome JSON has no XProf flows: the annotated
				// trace keeps the event, not its flow.
				e.Corr, e.Flags = 0, e.Flags&^trace.FlagFlow
			}
			keys = append(keys, fmt.Sprintf("%s|%s|%s|%d|%d|%d|%s|%d", where, t.Str(e.Name), t.Str(t.Cat(tr.Lo+j)), e.Start, e.Dur(), t.CorrID(e.Corr), e.Kind, e.Flags))
		}
	}
	slices.Sort(keys)
	return keys
}

// lineName returns the XPlane line name in the display name the Chrome
// reader gives a host thread, "thread 12 (Host Threads/583)".
func lineName(name string) string {
	if m := chromeThread.FindStringSubmatch(name); m != nil {
		name = m[1]
	}
	// A line written as lanes (its slices overlap) is one line.
	return laneSuffix.ReplaceAllString(name, "")
}

var laneSuffix = regexp.MustCompile(` \(lane \d+\)$`)

var chromeThread = regexp.MustCompile(`^thread \d+ \((.*)\)$`)

// isAnnotation reports whether track i is one of the tracegap process's.
func isAnnotation(t *trace.Trace, i int) bool {
	for j := range t.TrackEvents(i) {
		if strings.HasPrefix(t.Str(t.Cat(t.Tracks[i].Lo+j)), "tracegap.") {
			return true
		}
	}
	return false
}

// gapSlices lists the gap slices of the annotated trace t as gapKeys
// does, the device read from the track's tid (res.Devices[tid-1]).
func gapSlices(t *testing.T, ann *trace.Trace, res *analyze.Result) []string {
	t.Helper()
	var keys []string
	for i := range ann.Tracks {
		for j, e := range ann.TrackEvents(i) {
			if ann.Str(ann.Cat(ann.Tracks[i].Lo+j)) != "tracegap.gap" {
				continue
			}
			tid, err := strconv.Atoi(ann.Tracks[i].Thread)
			if err != nil || tid < 1 || tid > len(res.Devices) {
				t.Fatalf("gap slice on thread %q, expected one per device numbered from 1", ann.Tracks[i].Thread)
			}
			keys = append(keys, fmt.Sprintf("%s %s %d %d", res.Devices[tid-1].ID, ann.Str(e.Name), e.Start, e.Dur()))
		}
	}
	slices.Sort(keys)
	return keys
}

// gapKeys lists res's gaps, sorted: device, cause, start and length.
func gapKeys(res *analyze.Result) []string {
	keys := make([]string, len(res.Gaps))
	for i, g := range res.Gaps {
		keys[i] = fmt.Sprintf("%s %s %d %d", g.Device, g.Cause, g.Start, g.Dur)
	}
	slices.Sort(keys)
	return keys
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q vs %q", a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

func TestAnnotateUsage(t *testing.T) {
	w0 := realtraces.Path(t, workers0)
	out := filepath.Join(t.TempDir(), "a.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{w0}, "tracegap annotate: no output given: expected -o FILE\n"},
		{[]string{"-o", out}, "tracegap annotate: expected one FILE, got 0 arguments (see tracegap annotate --help)\n"},
		{[]string{"-o", out, "missing.json"}, "tracegap: missing.json: no such file or directory\n"},
	} {
		if code, _, stderr := tg(append([]string{"annotate"}, tc.args...)...); code != exitUsage || stderr != tc.want {
			t.Errorf("annotate %q: exit %d, stderr %q, want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed annotate wrote %s", out)
	}
}

// TestArtefactsFolder analyses a folder holding a trace beside
// metrics.json and package.json: the trace is analysed, the other files
// skipped with a warning each, and the exit status is 0.
func TestArtefactsFolder(t *testing.T) {
	dir := t.TempDir()
	trace, err := os.ReadFile(filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"run.json.gz":  string(trace),
		"metrics.json": `{"loss": 0.25, "accuracy": 0.9}`,
		"package.json": `{"name": "trainer", "version": "1.0.0"}`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{"analyze", "check"} {
		code, stdout, stderr := tg(cmd, dir)
		want := fmt.Sprintf("tracegap: warning: skipped %s: holds no Chrome trace-event JSON\n", filepath.Join(dir, "metrics.json")) +
			fmt.Sprintf("tracegap: warning: skipped %s: holds no Chrome trace-event JSON\n", filepath.Join(dir, "package.json"))
		if code == exitUsage || !strings.HasPrefix(stderr, want) || !strings.Contains(stdout, "run.json.gz") {
			t.Errorf("%s on an artefacts folder: exit %d, stdout %q, stderr %q; want the trace analysed and\n%s", cmd, code, stdout, stderr, want)
		}
	}
}

// TestAnnotateOutputFormat: -o's name says what annotate writes: an XPlane
// from an XPlane input (gzipped with .gz), JSON from any; an XPlane asked
// of a Chrome trace, or a name that says neither, is one line and exit 2.
func TestAnnotateOutputFormat(t *testing.T) {
	xp := filepath.Join(realtraces.Dir(t), "tracelens-jax-te-fused-attn.xplane.pb")
	example := filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz")
	dir := t.TempDir()
	for _, tt := range []struct {
		in, out string
		code    int
		stderr  string
	}{
		{xp, "a.xplane.pb.gz", exitOK, "open it in XProf or TensorBoard's profile plugin"},
		{xp, "a.json", exitOK, "open it in https://ui.perfetto.dev"},
		{example, "b.xplane.pb", exitUsage, "asks for an XPlane, which annotate writes from an XPlane input only"},
		{example, "b.html", exitUsage, "expected a name ending in .json or .json.gz"},
		// The name is refused before the input is read.
		{filepath.Join(dir, "missing.json"), "c.html", exitUsage, "-o " + filepath.Join(dir, "c.html") + ": expected a name ending in .json"},
	} {
		out := filepath.Join(dir, tt.out)
		code, _, stderr := tg("annotate", tt.in, "-o", out)
		if code != tt.code || !strings.Contains(stderr, tt.stderr) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s -o %s: exit %d, %q; want %d and one line with %q", filepath.Base(tt.in), tt.out, code, stderr, tt.code, tt.stderr)
		}
		if _, err := os.Stat(out); (err == nil) != (tt.code == exitOK) {
			t.Errorf("%s: written %v, want %v", tt.out, err == nil, tt.code == exitOK)
		}
	}
	f, err := os.Open(filepath.Join(dir, "a.xplane.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.Read(f, -1, trace.Options{})
	if err != nil || tr.Format != "xplane" {
		t.Errorf("the annotated XPlane reads as %v (%v), want an XPlane", tr, err)
	}
}

// TestAnnotatedNoPartialOverlap: annotated JSON, written through or from
// the model, has no thread whose slices overlap without nesting, which a
// viewer drops: the TPU capture's "Async XLA Ops", 480 of whose 600 slices
// overlap so, is written as lanes, and so is a GPU stream whose kernels
// overlap by a few nanoseconds (te-fused-attn's "Stream #2").
func TestAnnotatedNoPartialOverlap(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"xprof-tpu-inference.xplane.pb", "tracelens-jax-te-fused-attn.xplane.pb", "kineto-resnet50-workers4.pt.trace.json.gz"} {
		out := filepath.Join(dir, name+".annotated.json")
		if code, _, stderr := tg("annotate", filepath.Join(realtraces.Dir(t), name), "-o", out); code != 0 {
			t.Fatalf("%s: exit %d, %s", name, code, stderr)
		}
		tr, err := trace.Open(out, trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lanes := 0
		for i := range tr.Tracks {
			if strings.Contains(tr.Tracks[i].Name, " (lane ") {
				lanes++
			}
			var open []int64
			for _, e := range tr.TrackEvents(i) {
				for len(open) > 0 && open[len(open)-1] <= e.Start {
					open = open[:len(open)-1]
				}
				if len(open) > 0 && e.End() > open[len(open)-1] {
					t.Errorf("%s: %s has a slice at %d that overlaps its enclosing one without nesting", name, tr.Tracks[i].Name, e.Start)
					break
				}
				if e.Dur() > 0 {
					open = append(open, e.End())
				}
			}
		}
		if strings.HasSuffix(name, ".xplane.pb") && lanes == 0 {
			t.Errorf("%s: no lanes written: the test shows nothing", name)
		}
	}
}

// TestAnnotateAnnotatedRefused: a trace annotate wrote, Chrome JSON or
// XPlane, is refused as annotate's input with one line, exit 2: annotated
// again it would carry two annotations.
func TestAnnotateAnnotatedRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ in, out string }{
		{filepath.Join("..", "..", "testdata", "example.pt.trace.json.gz"), "example.annotated.json.gz"},
		{filepath.Join(realtraces.Dir(t), "xprof-tpu-inference.xplane.pb"), "tpu.annotated.xplane.pb"},
	} {
		once := filepath.Join(dir, c.out)
		if code, _, stderr := tg("annotate", c.in, "-o", once); code != 0 {
			t.Fatalf("%s: exit %d, %s", c.in, code, stderr)
		}
		code, _, stderr := tg("annotate", once, "-o", filepath.Join(dir, "again-"+c.out))
		want := "tracegap: " + once + ": " + errAnnotatedAlready.Error() + "\n"
		if code != 2 || stderr != want {
			t.Errorf("annotate %s: exit %d, %q; want 2, %q", once, code, stderr, want)
		}
	}
}

// TestAnnotateMakesFolders: annotate's -o creates the folders it needs, as
// XProf's layout (logs/plugins/profile/RUN/HOST.xplane.pb) asks; another
// command's -o into a missing folder says so in words.
func TestAnnotateMakesFolders(t *testing.T) {
	dir := t.TempDir()
	in := writeLoop(t, dir, "run.xplane.pb", tracetest.Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000})
	out := filepath.Join(dir, "logs", "plugins", "profile", "annotated", "host.xplane.pb")
	if code, _, stderr := tg("annotate", in, "-o", out); code != exitOK {
		t.Fatalf("annotate: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
	missing := filepath.Join(dir, "nonexist", "x.json")
	code, _, stderr := tg("analyze", "-o", missing, in)
	want := "tracegap analyze: creating " + missing + ": the folder " + filepath.Dir(missing) + " does not exist: create it first, or give another path\n"
	if code != exitUsage || stderr != want {
		t.Errorf("analyze -o into a missing folder: exit %d, %q; want 2 and %q", code, stderr, want)
	}
}
