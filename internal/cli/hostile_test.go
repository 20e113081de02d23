package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
	"github.com/tracegap/tracegap/trace"
)

// hostileFile writes data to a file named name in a fresh directory.
func hostileFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// allocated runs f and returns the bytes it allocated in all: an upper
// bound on the heap it can have held at its peak, read from the runtime's
// own counters (not a clock).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileInputs: each input a few kilobytes or megabytes can make to
// exhaust memory or time is either refused with exit 2 and one line
// naming the flag that raises the bound, or analysed with exit 0 within a
// stated budget of allocation, its report bounded. The bounds are the
// table's; "The hostile-input suite" in docs/performance.md sums them up.
func TestHostileInputs(t *testing.T) {
	bomb, err := tracetest.GzipBomb([]byte(`{"traceEvents":[`), ' ', 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var bombBytes bytes.Buffer
	if _, err := bombBytes.ReadFrom(bomb); err != nil {
		t.Fatal(err)
	}
	// 8 Mi empty XPlane lines: 16 MB on the wire, about 2.4 GB to a
	// reader that keeps a header per line.
	lines := tracetest.EmptyLines(8 << 20)
	tests := []struct {
		name string
		file string
		data []byte
		args []string
		// code 2: want names the flag in the one line on stderr; code
		// 0: want is in the report.
		code     int
		want     string
		maxAlloc uint64
		maxOut   int
	}{
		{"gzip bomb 1 GB", "bomb.json.gz", bombBytes.Bytes(), nil, 2, "likely a decompression bomb", 64 << 20, 0},
		{"empty lines gzipped", "lines.xplane.pb.gz", tracetest.Gzip(lines), nil, 2, "likely a decompression bomb", 64 << 20, 0},
		{"empty lines", "lines.xplane.pb", lines, nil, 2, "raise --max-tracks", 256 << 20, 0},
		{"many threads", "threads.json", tracetest.ManyStreams(3000), []string{"--max-tracks", "1000"}, 2, "raise --max-tracks", 64 << 20, 0},
		{"many names", "names.json", tracetest.ManySteps(3000), []string{"--max-strings", "1000"}, 2, "raise --max-strings", 64 << 20, 0},
		// Were quadratic: per stream per gap, per device per gap.
		{"100k streams on one device", "streams.json", tracetest.ManyStreams(100_000), nil, 0, "GPU", 512 << 20, 64 << 10},
		{"100k devices, HTML", "devices.json", tracetest.ManyDevices(100_000), []string{"--format", "html"}, 0, "all of them with --all-steps", 1 << 30, 1 << 20},
		{"50k steps, JSON", "steps.json", tracetest.ManySteps(50_000), []string{"--format", "json"}, 0, `"omitted"`, 256 << 20, 1 << 20},
		{"50k steps, HTML", "steps.json", tracetest.ManySteps(50_000), []string{"--format", "html"}, 0, "Listed: 1000 of 49999 steps", 256 << 20, 2 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && tt.code == 0 && len(tt.data) > 4<<20 {
				t.Skip("-short: a big input that analyses")
			}
			path := hostileFile(t, tt.file, tt.data)
			var code int
			var stdout, stderr string
			alloc := allocated(func() {
				code, stdout, stderr = tg(append(append([]string{"analyze"}, tt.args...), path)...)
			})
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, stderr)
			}
			t.Logf("allocated %d MB, report %d bytes", alloc>>20, len(stdout))
			if alloc > tt.maxAlloc {
				t.Errorf("allocated %d MB, want at most %d MB", alloc>>20, tt.maxAlloc>>20)
			}
			if tt.code == 2 {
				if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
					t.Errorf("stderr %q: want one line saying %q", stderr, tt.want)
				}
				return
			}
			if !strings.Contains(stdout, tt.want) {
				t.Errorf("report does not say %q", tt.want)
			}
			if len(stdout) > tt.maxOut {
				t.Errorf("report of %d bytes, want at most %d", len(stdout), tt.maxOut)
			}
		})
	}
}

// TestHostileNames: a trace whose loader event and host thread are named
// tracetest.Hostile, in a file whose name carries an OSC, a newline and a
// workflow command, gives text, Markdown, GitHub annotations and TSV in
// which none of it is live.
func TestHostileNames(t *testing.T) {
	var trace bytes.Buffer
	if err := tracetest.WriteChrome(&trace, tracetest.HostileLoop()); err != nil {
		t.Fatal(err)
	}
	path := hostileFile(t, "run\x1b]0;title\a\r\n::error ::file\u202e=x.json", trace.Bytes())
	// live is what no channel may pass through: terminal controls and
	// the bidirectional override.
	live := []string{"\x1b", "\a", "\r", "\x00", "\u202e"}
	outputs := map[string][]string{
		"text":     {"analyze", path},
		"markdown": {"analyze", "--format", "markdown", path},
		"github":   {"check", "--format", "github", path},
		"tsv":      {"gaps", path},
		"error":    {"analyze", "--max-events", "3", path},
	}
	for name, args := range outputs {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr := tg(args...)
			out := stdout + stderr
			if !strings.Contains(out, `\x1b`) {
				t.Errorf("output does not show the name escaped:\n%s", out)
			}
			for _, s := range live {
				if strings.Contains(out, s) {
					t.Errorf("output holds %q", s)
				}
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "::") && !strings.HasPrefix(line, "::error file=") {
					t.Errorf("line starts a workflow command: %q", line)
				}
			}
			switch name {
			case "markdown":
				for _, s := range []string{"[l](", "![](", "@here", "`x`"} {
					if strings.Contains(out, s) {
						t.Errorf("Markdown holds live %q", s)
					}
				}
			case "github":
				if !strings.Contains(stdout, "::error file=") {
					t.Fatalf("no annotation:\n%s", stdout)
				}
				// The properties, up to the "::" that ends them,
				// hold no ':' of the file name's.
				for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
					props, _, _ := strings.Cut(strings.TrimPrefix(line, "::error "), "::")
					if strings.Contains(props, ":") || strings.Contains(props, ",title=tracegap input,") {
						t.Errorf("annotation properties not escaped: %q", props)
					}
				}
			case "tsv":
				rows := strings.Split(strings.TrimSpace(stdout), "\n")
				if len(rows) < 2 {
					t.Fatalf("no gaps:\n%s", stdout)
				}
				for _, row := range rows {
					cells := strings.Split(row, "\t")
					if len(cells) != 7 {
						t.Errorf("row of %d cells, want 7: %q", len(cells), row)
					}
					for _, c := range cells {
						if c != "" && strings.ContainsRune("=+@", rune(c[0])) {
							t.Errorf("cell a spreadsheet would evaluate: %q", c)
						}
					}
				}
			}
		})
	}
}

// TestHostileNamesJSONAndHTML: names holding the characters the JSON and
// HTML escaping leave raw (ESC and CR in HTML; the C1 CSI U+009B, DEL and
// U+2028 in JSON) reach neither output raw, and the JSON still decodes to
// the names as they are.
func TestHostileNamesJSONAndHTML(t *testing.T) {
	const extra = "\u009b31m\x7f\u2028"
	spec := tracetest.HostileLoop()
	for i := range spec.Threads {
		spec.Threads[i].Name += extra
	}
	var tr bytes.Buffer
	if err := tracetest.WriteChrome(&tr, spec); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"good\x1b[31m\r\n" + extra + "a.json", "b" + extra + ".json"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, tr.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	live := []string{"\x1b", "\r", "\u009b", "\x7f", "\u2028", "\u202e"}
	outputs := map[string][]string{
		"analyze json": {"analyze", "--format", "json", paths[0]},
		"gaps json":    {"gaps", "--format", "json", paths[0]},
		"sweep json":   {"sweep", "--format", "json", "--labels", "a" + extra + ",b", paths[0], paths[1]},
		"analyze html": {"analyze", "--format", "html", paths[0]},
		"sweep html":   {"sweep", "--format", "html", "--labels", "good\x1b[31m\r\nx,b", paths[0], paths[1]},
	}
	for name, args := range outputs {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := tg(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, s := range live {
				if strings.Contains(stdout, s) {
					t.Errorf("output holds %q", s)
				}
			}
			if strings.HasSuffix(name, "json") {
				if !strings.Contains(stdout, `\u009b31m\u007f\u2028`) {
					t.Errorf("output does not show the names escaped:\n%.2000s", stdout)
				}
				dec := json.NewDecoder(strings.NewReader(stdout))
				for dec.More() {
					var v any
					if err := dec.Decode(&v); err != nil {
						t.Fatalf("output is not JSON: %v", err)
					}
				}
			} else if !strings.Contains(stdout, `good\x1b[31m\r`) {
				t.Errorf("output does not show the file name escaped:\n%.2000s", stdout)
			}
		})
	}
}

// ciCommands are names that would drive a CI log: GitHub workflow commands
// at the start of a name (and so of a line the name starts), Azure
// Pipelines logging and formatting commands, which act anywhere in a line.
var ciCommands = []string{
	"::error::from a name",
	"  ::add-mask::secret",
	"x ##vso[task.setvariable variable=owned]1",
	"##[group]folded",
	"##VSO[task.complete result=Failed]",
}

// TestCICommandsInert: a trace whose loader event and threads are named
// with CI log commands, in a file itself named as a GitHub command, gives
// text, Markdown, check output (text and GitHub annotations), JUnit and
// JSON in which no line starts with a live GitHub command (our own
// annotations aside) and none holds an Azure one.
func TestCICommandsInert(t *testing.T) {
	for _, format := range []string{"chrome", "xplane"} {
		t.Run(format, func(t *testing.T) {
			spec := tracetest.Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000,
				InputName: tracetest.SingleProcessLoader + " " + strings.Join(ciCommands, " ")}.Spec()
			for i := range spec.Threads {
				spec.Threads[i].Name = ciCommands[i%len(ciCommands)]
			}
			var tr bytes.Buffer
			write, name := tracetest.WriteChrome, "::error::x.trace.json"
			if format == "xplane" {
				write, name = tracetest.WriteXPlane, "::error::x.xplane.pb"
			}
			if err := write(&tr, spec); err != nil {
				t.Fatal(err)
			}
			// Named relative to the working directory, so that the name
			// starts the header line.
			t.Chdir(filepath.Dir(hostileFile(t, name, tr.Bytes())))
			path := name
			junit := filepath.Join(t.TempDir(), "junit.xml")
			outputs := map[string][]string{
				"text":     {"analyze", path},
				"markdown": {"analyze", "--format", "markdown", path},
				"json":     {"analyze", "--format", "json", path},
				"html":     {"analyze", "--format", "html", path},
				"check":    {"check", "--max-input-idle", "0.1%", path},
				"github":   {"check", "--format", "github", "--max-input-idle", "0.1%", "--junit", junit, path},
				"gaps":     {"gaps", path},
				"error":    {"analyze", "--max-events", "3", path},
			}
			for out, args := range outputs {
				_, stdout, stderr := tg(args...)
				text := stdout + stderr
				if out == "github" {
					b, err := os.ReadFile(junit)
					if err != nil {
						t.Fatal(err)
					}
					assertNoCICommand(t, "junit", string(b))
				}
				assertNoCICommand(t, out, text)
			}
		})
	}
}

// assertNoCICommand fails for a line of out that GitHub Actions or Azure
// Pipelines would act on, other than tracegap's own "::error file="
// annotations.
func assertNoCICommand(t *testing.T, name, out string) {
	t.Helper()
	if !strings.Contains(out, "x") {
		t.Errorf("%s: no output", name)
	}
	for _, line := range strings.Split(out, "\n") {
		lead := strings.TrimLeft(line, " \t\r")
		if strings.HasPrefix(lead, "::") && !strings.HasPrefix(lead, "::error file=") {
			t.Errorf("%s: line starts a workflow command: %q", name, line)
		}
		if l := strings.ToLower(line); strings.Contains(l, "##vso[") || strings.Contains(l, "##[") {
			t.Errorf("%s: line holds an Azure command: %q", name, line)
		}
	}
}

// TestEmptyEventsWithinBudget: an XPlane of empty events (two bytes each
// on the wire, tens in memory), plain or gzipped, is refused under
// --max-memory before it is read, by the bound on its events that its
// size gives; within a budget that bound covers, it is read, and what it
// allocates stays within the bound.
func TestEmptyEventsWithinBudget(t *testing.T) {
	const n = 1 << 20
	plain := tracetest.EmptyEvents(n, 0)
	bound := int64(32<<20) + int64(len(plain)) + trace.EventsNeed(0, int64(len(plain))/2, 1)
	for _, tt := range []struct {
		name, file string
		data       []byte
		budget     string
		code       int
	}{
		{"plain, refused", "empty.xplane.pb", plain, "64MiB", 2},
		{"gzipped, refused", "empty.xplane.pb.gz", tracetest.Gzip(tracetest.EmptyEvents(n, 16<<10)), "64MiB", 2},
		{"plain, within the bound", "empty.xplane.pb", plain, fmt.Sprint(bound), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := hostileFile(t, tt.file, tt.data)
			var code int
			var stderr string
			alloc := allocated(func() { code, _, stderr = tg("analyze", "--max-memory", tt.budget, path) })
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			if tt.code == 2 {
				if !strings.Contains(stderr, "raise --max-memory") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("stderr %q: want one line naming --max-memory", stderr)
				}
				if alloc > 8<<20 {
					t.Errorf("refusing allocated %d MiB, want it refused before reading", alloc>>20)
				}
				return
			}
			if alloc > uint64(bound) {
				t.Errorf("reading allocated %d MiB, over its bound of %d MiB", alloc>>20, bound>>20)
			}
		})
	}
}

// TestNegativeLimitsRefused: a negative reading limit is a usage error,
// not "no limit".
func TestNegativeLimitsRefused(t *testing.T) {
	for _, flag := range []string{"--max-events", "--max-bytes", "--max-tracks", "--max-strings", "--max-value"} {
		code, _, stderr := tg("analyze", flag, "-1", "../../testdata/example.pt.trace.json.gz")
		want := "invalid " + flag + " -1: expected a positive limit"
		if flag == "--max-bytes" || flag == "--max-value" { // sizes: "64GiB" or bytes
			want = `invalid argument "-1" for "` + flag + `" flag: invalid size "-1": expected a positive byte count`
		}
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s -1: exit %d, %q; want 2 and %q", flag, code, stderr, want)
		}
	}
}
