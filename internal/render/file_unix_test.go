//go:build unix

package render

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// writeString is a WriteFile body writing s.
func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// TestWriteFileFIFO writes to a FIFO in place: a reader on the other end
// gets the bytes, and the FIFO is still one afterwards (a rename would
// have replaced it with a regular file, and the reader would wait forever).
func TestWriteFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		b, err := os.ReadFile(fifo) // blocks until the writer opens it
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(b)
	}()
	if err := WriteFile(fifo, writeString("report")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "report" {
		t.Errorf("reader of the FIFO got %q, want %q", s, "report")
	}
	st, err := os.Lstat(fifo)
	if err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("after WriteFile the FIFO is %v (%v), want still a FIFO", st.Mode(), err)
	}
}

// TestWriteFileSymlink writes a symbolic link's target, atomically in the
// target's directory, and leaves the link in place; a dangling link
// creates its target.
func TestWriteFileSymlink(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(other, "target.txt")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, link, dest string // dest: the link's content
		target           string
	}{
		{"relative", "link.txt", "other/target.txt", target},
		{"absolute", "abs.txt", target, target},
		{"chain", "chain.txt", "link.txt", target},
		{"dangling", "dangling.txt", "other/new.txt", filepath.Join(other, "new.txt")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			link := filepath.Join(dir, tc.link)
			if err := os.Symlink(tc.dest, link); err != nil {
				t.Fatal(err)
			}
			if err := WriteFile(link, writeString("new "+tc.name)); err != nil {
				t.Fatal(err)
			}
			if dest, err := os.Readlink(link); err != nil || dest != tc.dest {
				t.Errorf("link now %q (%v), want still a link to %q", dest, err, tc.dest)
			}
			if b, _ := os.ReadFile(tc.target); string(b) != "new "+tc.name {
				t.Errorf("target holds %q, want %q", b, "new "+tc.name)
			}
		})
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o600 {
		t.Errorf("target's mode is %v after rewriting, want its own 0600 kept", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(other)
	if len(ents) != 2 {
		t.Errorf("%s holds %v, want target.txt and new.txt only", other, ents)
	}
}

// TestWriteFileProcFD writes to a pipe named as /dev/stdout names one, a
// link to /proc/self/fd/N whose target ("pipe:[N]") is no path: written in
// place, not refused as a file in a missing folder.
func TestWriteFileProcFD(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	path := filepath.Join("/proc/self/fd", strconv.Itoa(int(w.Fd())))
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	if err := WriteFile(path, writeString("to the pipe\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, err := io.ReadAll(r); err != nil || string(b) != "to the pipe\n" {
		t.Errorf("read %q, %v from the pipe", b, err)
	}
}
