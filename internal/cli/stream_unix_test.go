//go:build unix

package cli

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// gzippedLoop returns a small generated training loop as gzipped Chrome
// JSON, long enough (tens of kB) that reading its head is not reading it.
func gzippedLoop(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := tracetest.WriteChrome(zw, tracetest.Loop{Steps: 12, Compute: 43_000_000}.Spec()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pipePath returns a path that reads data once, as a shell's <(zcat ...)
// or a FIFO does: kind "pipe" is /dev/fd/N of a pipe, "fifo" a FIFO in a
// temporary directory. A writer goroutine feeds it.
func pipePath(t *testing.T, kind string, data []byte) string {
	t.Helper()
	switch kind {
	case "pipe":
		if _, err := os.Stat("/dev/fd/0"); err != nil {
			t.Skip("no /dev/fd")
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() }) // ends a writer the reader left
		go func() { w.Write(data); w.Close() }()
		return fmt.Sprintf("/dev/fd/%d", r.Fd())
	case "fifo":
		path := filepath.Join(t.TempDir(), "in.pt.trace.json.gz")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		go func() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the reader
			if err == nil {
				f.Write(data)
				f.Close()
			}
		}()
		return path
	}
	t.Fatalf("unknown kind %q", kind)
	return ""
}

// TestStreamArguments gives a trace as a pipe and as a FIFO to every
// command reading one: each must read it once, from its first byte (a
// second open reads from wherever the first stopped, or waits for a
// writer that has gone).
func TestStreamArguments(t *testing.T) {
	data := gzippedLoop(t)
	for _, kind := range []string{"pipe", "fifo"} {
		for _, args := range [][]string{
			{"analyze"},
			{"check"},
			{"gaps"},
			{"annotate", "-o", "OUT"},
		} {
			t.Run(kind+"/"+args[0], func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "annotated.json")
				args := append(append([]string{}, args...), pipePath(t, kind, data))
				for i := range args {
					if args[i] == "OUT" {
						args[i] = out
					}
				}
				if code, stdout, stderr := tg(args...); code != exitOK {
					t.Fatalf("%q: exit %d, stdout %.200q, stderr %q", args, code, stdout, stderr)
				}
			})
		}
	}
}

// TestAnnotateReadsAsOthers: annotate takes standard input as "-", copies
// it through as it does a file, and accepts a gzip file whose checksum is
// wrong with the warning the other commands give, naming the input.
func TestAnnotateReadsAsOthers(t *testing.T) {
	data := gzippedLoop(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "run.pt.trace.json.gz")
	badCRC := filepath.Join(dir, "crc.pt.trace.json.gz")
	flipped := bytes.Clone(data)
	flipped[len(flipped)-8] ^= 0xff // the trailer's CRC-32
	for path, b := range map[string][]byte{file: data, badCRC: flipped} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fromFile := filepath.Join(dir, "file.json")
	if code, _, stderr := tg("annotate", file, "-o", fromFile); code != exitOK {
		t.Fatalf("annotate FILE: exit %d, stderr %q", code, stderr)
	}
	want, _ := os.ReadFile(fromFile)

	defer func(r io.Reader) { stdin = r }(stdin)
	stdin = bytes.NewReader(data)
	fromStdin := filepath.Join(dir, "stdin.json")
	if code, _, stderr := tg("annotate", "-", "-o", fromStdin); code != exitOK {
		t.Fatalf("annotate -: exit %d, stderr %q", code, stderr)
	}
	if got, _ := os.ReadFile(fromStdin); !bytes.Equal(got, want) {
		t.Errorf("annotate - wrote %d bytes, annotate FILE %d: want the same", len(got), len(want))
	}

	code, _, stderr := tg("annotate", badCRC, "-o", filepath.Join(dir, "crc.json.gz"))
	if code != exitOK || !strings.Contains(stderr, "warning: "+badCRC+": ") || !strings.Contains(stderr, "gzip: invalid checksum") {
		t.Errorf("annotate of a gzip with a wrong checksum: exit %d, stderr %q; want exit 0 and a warning naming it", code, stderr)
	}
}
