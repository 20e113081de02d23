package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// writeExport writes a generated Nsight Systems export of a data-bound
// loop into dir, named name.
func writeExport(t *testing.T, dir, name string, l tracetest.Loop) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tracetest.WriteNsight(f, l.Spec()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNsightCommands runs every command that reads traces on generated
// Nsight Systems exports: each reads it as it reads the other formats.
func TestNsightCommands(t *testing.T) {
	dir := t.TempDir()
	data := writeExport(t, dir, "data.sqlite", tracetest.Loop{Steps: 6, Input: 20_000_000, Dispatch: 1_000_000, Compute: 10_000_000})
	fast := writeExport(t, dir, "fast.sqlite", tracetest.Loop{Steps: 6, Input: 500_000, InputName: tracetest.MultiProcessLoader, Dispatch: 1_000_000, Compute: 10_000_000})
	code, out, errb := tg("analyze", "--format", "json", data)
	if code != 0 {
		t.Fatalf("analyze: exit %d, %s", code, errb)
	}
	var res struct {
		Verdict string
		Source  struct{ Format string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "data-bound" || res.Source.Format != "nsight" {
		t.Errorf("analyze: verdict %q of format %q, want data-bound of nsight", res.Verdict, res.Source.Format)
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"check", fast}, 0},
		{[]string{"check", data}, 1},
		{[]string{"compare", data, fast}, 0},
		{[]string{"gaps", data}, 0},
		{[]string{"pprof", "-o", filepath.Join(dir, "p.pb.gz"), data}, 0},
		{[]string{"analyze", "--format", "html", "-o", filepath.Join(dir, "r.html"), data}, 0},
		{[]string{"analyze", dir}, 0}, // a directory of exports
	} {
		if code, _, errb := tg(tt.args...); code != tt.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", strings.Join(tt.args, " "), code, tt.code, errb)
		}
	}
}

// TestAnnotateNsight: annotate refuses an export in one line, exit 2.
func TestAnnotateNsight(t *testing.T) {
	path := writeExport(t, t.TempDir(), "run.sqlite", tracetest.Loop{Steps: 3, Input: 1_000_000, Dispatch: 100_000, Compute: 500_000})
	code, out, errb := tg("annotate", path, "-o", filepath.Join(t.TempDir(), "a.json.gz"))
	want := "tracegap: " + path + ": an Nsight Systems export cannot be annotated: "
	if code != 2 || out != "" || !strings.HasPrefix(errb, want) || strings.Count(errb, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line starting %q", code, out, errb, want)
	}
}

// TestNsightReport: the binary Nsight report is refused naming the command
// that makes an export.
func TestNsightReport(t *testing.T) {
	path := realtraces.Path(t, "nsight/apax-jax.nsys-rep")
	code, _, errb := tg("analyze", path)
	if code != 2 || !strings.Contains(errb, "nsys export --type sqlite --output apax-jax.sqlite apax-jax.nsys-rep") || strings.Count(errb, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming nsys export", code, errb)
	}
}

// TestNsightJob: the exports of a job's ranks, given with --job, are
// ordered by the ranks their file names give.
func TestNsightJob(t *testing.T) {
	dir := t.TempDir()
	l := tracetest.Loop{Steps: 4, Input: 1_000_000, Dispatch: 100_000, Compute: 500_000}
	one := writeExport(t, dir, "b.rank1.sqlite", l)
	zero := writeExport(t, dir, "a.rank0.sqlite", l)
	code, out, errb := tg("analyze", "--job", "--format", "json", one, zero)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var job struct {
		Ranks []struct {
			Rank int
			Path string
		}
	}
	if err := json.Unmarshal([]byte(out), &job); err != nil {
		t.Fatal(err)
	}
	if len(job.Ranks) != 2 || job.Ranks[0].Path != zero || job.Ranks[1].Rank != 1 || job.Ranks[1].Path != one {
		t.Errorf("ranks %+v, want 0 %s and 1 %s", job.Ranks, zero, one)
	}
}

// TestNsysReportHint: an Nsight Systems report, given or met in a
// directory, gets the nsys export command for its own file name, its name
// escaped; a directory holding only one says so, one beside traces warns,
// and one beside its own export is left alone.
func TestNsysReportHint(t *testing.T) {
	dir := t.TempDir()
	report := []byte("NVIDIA Nsight Systems Report 2026 ...")
	put := func(name string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, report, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hint := func(stem string) string {
		return "an Nsight Systems report (.nsys-rep), which only nsys reads: make a SQLite export with `nsys export --type sqlite --output " +
			stem + ".sqlite " + stem + ".nsys-rep` and analyse " + stem + ".sqlite"
	}
	loop := tracetest.Loop{Steps: 4, Input: 2_000_000, Dispatch: 20_000, Compute: 500_000}
	only := put("only/apax-jax.nsys-rep")
	mixed := put("mixed/apax-jax.nsys-rep")
	writeLoop(t, filepath.Join(dir, "mixed"), "run.xplane.pb", loop)
	put("exported/report.nsys-rep")
	writeExport(t, filepath.Join(dir, "exported"), "report.sqlite", loop)
	odd := put("odd/a\x1b[31m.nsys-rep")
	tests := []struct {
		arg    string
		code   int
		stderr string
	}{
		{only, exitUsage, "tracegap: " + only + ": " + hint("apax-jax") + "\n"},
		{filepath.Dir(only), exitUsage, "tracegap: " + only + ": " + hint("apax-jax") + "\n"},
		{filepath.Dir(mixed), exitOK, "tracegap: warning: skipped " + mixed + ": " + hint("apax-jax") + "\n"},
		{filepath.Join(dir, "exported"), exitOK, ""},
		{odd, exitUsage, "tracegap: " + safe(odd) + ": an Nsight Systems report (.nsys-rep), which only nsys reads: make a SQLite export with " +
			"`nsys export --type sqlite --output 'a\\x1b[31m.sqlite' 'a\\x1b[31m.nsys-rep'` and analyse a\\x1b[31m.sqlite\n"},
	}
	for _, tt := range tests {
		code, _, stderr := tg("analyze", "--quiet", tt.arg)
		if code != tt.code || stderr != tt.stderr {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tt.arg, code, stderr, tt.code, tt.stderr)
		}
	}
}
