package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/realtraces"
)

// TestCheckJob checks writeJob's job, whose rank 3 reads its input for
// 3 ms a step while the others read for 0.2 ms: every step takes rank 3's
// 3.15 ms of host time, and the others wait for it in the all-reduce.
//
// Each rank's window runs from the end of the warm-up step's all-reduce
// (3+0.1+1+0.2 = 4.3 ms) to the end of the sixth (5*3.15+4.3 = 20.05 ms):
// 15.75 ms, five steps of 3.15 ms. Rank 3's device idles 1.95 ms in each
// step, 1.85 ms of it while its host loads input and 0.1 ms while it
// dispatches: input 9.25 ms, host 0.5 ms. Ranks 0-2 wait as long in each
// step's all-reduce, by the same causes. Averaged over the ranks, input
// idle is 9.25 ms (58.7%) and all idle 9.75 ms (61.9%); every rank is busy
// the other 6 ms (38.1%).
func TestCheckJob(t *testing.T) {
	dir := writeJob(t, false)
	rank := func(r int) string { return filepath.Join(dir, fmt.Sprintf("rank-%d.pt.trace.json", r)) }
	junit := filepath.Join(t.TempDir(), "check.xml")
	// Rank 1 alone elsewhere: with rank 0, two fast ranks of the four, so
	// parallel at medium confidence (the other ranks are not seen).
	moved := filepath.Join(t.TempDir(), "rank-1.pt.trace.json")
	if data, err := os.ReadFile(rank(1)); err != nil || os.WriteFile(moved, data, 0o644) != nil {
		t.Fatalf("copying rank 1: %v", err)
	}
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"defaults", []string{dir}, exitCheck,
			"FAIL " + dir + ": verdict: measured data-bound (high confidence), limit not sequential,data-bound\n", ""},
		{"every rule", []string{"--fail-on", "none", "--max-idle", "60%", "--max-input-idle", "59%", "--max-sync-idle", "0%",
			"--min-utilization", "39%", "--min-steps", "6", dir}, exitCheck,
			"FAIL " + dir + ": max-idle: measured 61.9%, limit 60.0%\n" +
				"FAIL " + dir + ": min-utilization: measured 38.1% (rank 0 GPU:0), limit 39.0%\n" +
				"FAIL " + dir + ": min-steps: measured 5 steps, limit 6 steps\n", ""},
		{"every rule passes", []string{"--fail-on", "sequential", "--max-input-idle", "58.8%", "--min-steps", "5", "--junit", junit, dir}, exitOK,
			"ok   " + dir + ": data-bound (high confidence), 3 rules passed\n", ""},
		{"files of one directory", []string{rank(3), rank(1), rank(0), rank(2)}, exitCheck,
			"FAIL " + dir + ": verdict: measured data-bound (high confidence), limit not sequential,data-bound\n", ""},
		{"files of several directories", []string{"--job", rank(0), moved}, exitOK,
			"ok   job (2 ranks): parallel (medium confidence), 1 rule passed\n", ""},
		{"no job", []string{"--no-job", dir}, exitCheck,
			"ok   " + rank(0) + ": parallel (high confidence), 1 rule passed\n" +
				"ok   " + rank(1) + ": parallel (high confidence), 1 rule passed\n" +
				"ok   " + rank(2) + ": parallel (high confidence), 1 rule passed\n" +
				"FAIL " + rank(3) + ": verdict: measured data-bound (high confidence), limit not sequential,data-bound\n", ""},
		{"a job of one", []string{"--job", rank(0)}, exitUsage, "", "ERROR " + dir + ": analyze job: 1 trace(s) given"},
		{"both", []string{"--job", "--no-job", dir}, exitUsage, "", "--job and --no-job contradict each other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCmd(append([]string{"check"}, tt.args...)...)
			if code != tt.code || out != tt.stdout || !strings.Contains(errs, tt.stderr) || (tt.stderr == "") != (errs == "") {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr: %q, want %q", code, tt.code, out, tt.stdout, errs, tt.stderr)
			}
		})
	}
	r := readJUnit(t, junit)
	if len(r.Suites) != 1 || len(r.Suites[0].Cases) != 3 || r.Failures != 0 || r.Errors != 0 {
		t.Fatalf("JUnit: %+v; want one suite of 3 passing cases", r)
	}
	for _, c := range r.Suites[0].Cases {
		if c.Class != dir {
			t.Errorf("JUnit case %s has class %q, want the job's directory %q", c.Name, c.Class, dir)
		}
	}
}

// TestCheckJobRealTraces: the eight DLRM ranks are checked as one job,
// whose only step is host-bound (at low confidence: one step) with the
// collective waits counted, unless --no-job checks them one by one.
func TestCheckJobRealTraces(t *testing.T) {
	dir := filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks")
	ranks, err := filepath.Glob(filepath.Join(dir, "worker*.pt.trace.json.gz"))
	if err != nil || len(ranks) != 8 {
		t.Fatalf("%d ranks in %s (%v), want 8", len(ranks), dir, err)
	}
	var each string
	for _, r := range ranks {
		each += "ok   " + r + ": host-bound (medium confidence), 1 rule passed\n"
	}
	tests := []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{dir + string(os.PathSeparator)}, exitOK, "ok   " + dir + ": host-bound (low confidence), 1 rule passed\n"},
		{[]string{"--fail-on", "host-bound", "--min-steps", "2", dir}, exitCheck,
			"FAIL " + dir + ": verdict: measured host-bound (low confidence), limit not host-bound\n" +
				"FAIL " + dir + ": min-steps: measured 1 steps, limit 2 steps\n"},
		{[]string{"--no-job", dir}, exitOK, each},
	}
	for _, tt := range tests {
		code, out, errs := runCmd(append([]string{"check"}, tt.args...)...)
		if code != tt.code || out != tt.stdout || errs != "" {
			t.Errorf("check %q: exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", tt.args, code, tt.code, out, tt.stdout, errs)
		}
	}
}

// TestCheckJobSARIFStackHint: a failed check of a job gives one SARIF
// result without a location (a job's report names no call site), and it
// says how to record the Python frames, as a single trace's does.
func TestCheckJobSARIFStackHint(t *testing.T) {
	dir := filepath.Join(realtraces.Dir(t), "param-dlrm-8ranks")
	code, out, errs := runCmd("check", "--format", "sarif", "--fail-on", "host-bound", dir)
	if code != exitCheck || errs != "" {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitCheck, errs)
	}
	want := dir + ": verdict: measured host-bound (low confidence), limit not host-bound. The trace has no Python frames, so no call site can be named: profile with torch.profiler.profile(..., with_stack=True) to record them."
	if !strings.Contains(out, want) {
		t.Errorf("SARIF lacks %q:\n%s", want, out)
	}
}
