package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// annotatedSkip is the warning for a directory's annotated copy of a trace.
func annotatedSkip(path string) string {
	return "tracegap: warning: skipped " + path + ": an annotated copy of a trace (tracegap annotate), derived from another trace: not read as one more run or rank\n"
}

// TestAnnotatedCopiesSkipped: tracegap annotate's outputs written beside
// the traces they annotate (the documented names, gzipped or not, and a
// plain copy under any name) are left out of a directory, one warning
// each: a job's folder stays a job of its ranks, and analyze and check
// read it alike.
func TestAnnotatedCopiesSkipped(t *testing.T) {
	dir := writeJob(t, true)
	rank0 := filepath.Join(dir, "rank-0.pt.trace.json.gz")
	outs := []string{
		filepath.Join(dir, "rank-0.annotated.json.gz"), // annotate --help's name, gzipped: read through
		filepath.Join(dir, "copy.pt.trace.json"),       // plain, any name: its tail
	}
	for _, out := range outs {
		if code, _, errs := tg("annotate", rank0, "-o", out); code != exitOK {
			t.Fatalf("annotate -o %s: exit %d: %s", out, code, errs)
		}
	}
	var warn string
	for _, out := range []string{outs[1], outs[0]} { // in name order
		warn += annotatedSkip(out)
	}
	code, out, errs := tg("analyze", "--quiet", dir)
	if code != exitOK || !strings.HasPrefix(out, dir+": job of 4 ranks: data-bound") || errs != warn {
		t.Errorf("analyze: exit %d, stdout %q\nstderr %q\nwant   %q", code, out, errs, warn)
	}
	code, out, errs = tg("check", "--fail-on", "stalled", dir)
	if code != exitOK || !strings.HasPrefix(out, "ok   "+dir+": data-bound") || strings.Count(out, "\n") != 1 || errs != warn {
		t.Errorf("check: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestAnnotatedXPlaneSkipped: annotate --help's XPlane example writes the
// annotated XPlane to a run directory of its own in the log directory;
// it is not counted as a second run, nor is a plain annotated XPlane under
// another name in the run beside its original.
func TestAnnotatedXPlaneSkipped(t *testing.T) {
	logs := t.TempDir()
	run := filepath.Join(logs, "plugins", "profile", "2024_01_02_03_04_05")
	annotated := filepath.Join(logs, "plugins", "profile", "annotated")
	for _, d := range []string{run, annotated} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := tracetest.WriteXPlane(&buf, tracetest.JAXProgram{Steps: 6, Workers: 2, Load: 8e6, Dispatch: 1e6, Compute: 10e6}.Spec()); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(run, "host.xplane.pb")
	if err := os.WriteFile(host, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	outs := []string{filepath.Join(annotated, "host.xplane.pb"), filepath.Join(run, "other.xplane.pb")}
	for _, out := range outs {
		if code, _, errs := tg("annotate", host, "-o", out); code != exitOK {
			t.Fatalf("annotate -o %s: exit %d: %s", out, code, errs)
		}
	}
	code, out, errs := tg("analyze", "--quiet", logs)
	warn := annotatedSkip(outs[0]) + annotatedSkip(outs[1]) // runs newest (greatest name) first
	if code != exitOK || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, host+": ") || errs != warn {
		t.Errorf("analyze: exit %d, stdout %q\nstderr %q\nwant   %q", code, out, errs, warn)
	}
}

// TestRankClashWarned: a directory holding two traces of one rank is
// analysed file by file, with a warning naming both.
func TestRankClashWarned(t *testing.T) {
	dir := writeJob(t, false)
	data, err := os.ReadFile(filepath.Join(dir, "rank-2.pt.trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "rank-2-again.pt.trace.json")
	if err := os.WriteFile(again, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := "tracegap: warning: " + again + " and " + filepath.Join(dir, "rank-2.pt.trace.json") + " both name rank 2 of 4: not analysed as one job; give one trace per rank\n"
	for _, cmd := range []string{"analyze", "check"} {
		code, out, errs := tg(cmd, "--quiet", dir)
		if cmd == "check" {
			code, out, errs = tg(cmd, "--fail-on", "stalled", dir)
		}
		if code != exitOK || strings.Count(out, "\n") != 5 || errs != want {
			t.Errorf("%s: exit %d, %d lines out\nstderr %q\nwant   %q", cmd, code, strings.Count(out, "\n"), errs, want)
		}
	}
}
