package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestInterruptRemovesTemps: Ctrl-C while a stream is being copied to a
// temporary file (an Nsight export from a pipe, copied for SQLite) removes
// the file and exits with 130. The test runs tracegap as a child process
// (this test binary, re-entered through Main), feeds it an SQLite header
// and zeros through a pipe, and interrupts it once it has taken far more
// than the pipe holds: by then the copy has begun.
func TestInterruptRemovesTemps(t *testing.T) {
	if args := os.Getenv("TRACEGAP_TEST_MAIN"); args != "" {
		os.Exit(Main(strings.Fields(args), os.Stdout, os.Stderr))
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptRemovesTemps$")
	cmd.Env = append(os.Environ(), "TRACEGAP_TEST_MAIN=analyze --input-format nsight -", "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	header := append([]byte("SQLite format 3\x00"), 0x10, 0x00) // page size 4096
	if _, err := in.Write(header); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range 8 { // 8 MiB: a pipe holds 64 KiB, so most of it was copied
		if _, err := in.Write(zeros); err != nil {
			t.Fatalf("writing to the child: %v (stderr %q)", err, stderr.String())
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	in.Close()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("interrupted: %v, want exit status 130 (stderr %q)", err, stderr.String())
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind in TMPDIR: %s", e.Name())
	}
}
