package objects_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/objects"
)

// fileURL returns the file:// URL of the local path p.
func fileURL(p string) string { return "file://" + filepath.ToSlash(p) }

func TestIsURL(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"gs://bucket/run/", true},
		{"s3://bucket/job42/rank-0.pt.trace.json.gz?endpoint=http://127.0.0.1:8333", true},
		{"azblob://container/x", true},
		{"file:///tmp/x", true},
		{"S3://bucket/x", true},
		{"s3://", false},
		{"http://example.com/trace.json", false},
		{"trace.json", false},
		{"./s3:/x", false},
		{"-", false},
	} {
		if got := objects.IsURL(c.s); got != c.want {
			t.Errorf("IsURL(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestJoinAndDir(t *testing.T) {
	for _, c := range []struct{ dir, name, joined, parent string }{
		{"s3://b/job42/", "rank-0.json", "s3://b/job42/rank-0.json", "s3://b/job42"},
		{"s3://b/job42", "rank-0.json", "s3://b/job42/rank-0.json", "s3://b/job42"},
		{"s3://b", "a b#?.json", "s3://b/a%20b%23%3F.json", "s3://b/"},
		{"s3://b/j/?region=x", "r.json", "s3://b/j/r.json?region=x", "s3://b/j?region=x"},
		{"file:///tmp/d/", "plugins/profile", "file:///tmp/d/plugins/profile", "file:///tmp/d/plugins"},
	} {
		got := objects.Join(c.dir, c.name)
		if got != c.joined {
			t.Errorf("Join(%q, %q) = %q, want %q", c.dir, c.name, got, c.joined)
		}
		if p := objects.Dir(got); p != c.parent {
			t.Errorf("Dir(%q) = %q, want %q", got, p, c.parent)
		}
	}
}

// TestObjectReads reads an object every way a file is read (a stream, at
// offsets, seeking) and checks each gives the file's bytes.
func TestObjectReads(t *testing.T) {
	dir := t.TempDir()
	want := make([]byte, 3<<20+17)
	for i := range want {
		want[i] = byte(i * 7 / 5)
	}
	path := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := objects.Open(context.Background(), fileURL(path))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != int64(len(want)) {
		t.Fatalf("Size = %d, want %d", o.Size(), len(want))
	}
	got, err := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read at offsets: %d bytes, err %v; want the file's %d", len(got), err, len(want))
	}
	if pos, err := o.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
		t.Fatalf("Seek(0, current) = %d, %v; want 0 before any Read", pos, err)
	}
	got, err = io.ReadAll(o)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("streamed: %d bytes, err %v; want the file's %d", len(got), err, len(want))
	}
	for _, off := range []int64{0, 1, 100 << 10, 2 << 20, int64(len(want)) - 5} {
		p := make([]byte, 10)
		n, err := o.ReadAt(p, off)
		end := min(off+10, int64(len(want)))
		if !bytes.Equal(p[:n], want[off:end]) || (end-off < 10) != errors.Is(err, io.EOF) {
			t.Errorf("ReadAt(10 bytes, %d) = %d, %v; want %d bytes", off, n, err, end-off)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "run", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run", "sub", "x.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url, want string
	}{
		{fileURL(filepath.Join(dir, "missing.json")), "not found"},
		{fileURL(filepath.Join(dir, "run")), "is a directory"},
		{fileURL(filepath.Join(dir, "run")) + "/", "is a directory"},
		{"s3:///key", "no bucket named"},
	} {
		_, err := objects.Open(context.Background(), c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q) = %v, want one line saying %q", c.url, err, c.want)
		}
	}
	_, err := objects.Open(context.Background(), fileURL(filepath.Join(dir, "missing.json")))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing object's error %v is not fs.ErrNotExist", err)
	}
}

func TestListAndIsDir(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.json", "b/c.json", "b/d/e.json", "f.pb"} {
		full := filepath.Join(dir, "top", p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	top := fileURL(filepath.Join(dir, "top"))
	got, err := objects.List(context.Background(), top)
	if err != nil {
		t.Fatal(err)
	}
	want := []objects.Entry{{Name: "a.json"}, {Name: "b", Dir: true}, {Name: "f.pb"}}
	if !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	for _, c := range []struct {
		url     string
		dir     bool
		wantErr bool
	}{
		{top, true, false},
		{top + "/", true, false},
		{top + "/b", true, false},
		{top + "/a.json", false, false},
		{top + "/nothing", false, true},
	} {
		dir, err := objects.IsDir(context.Background(), c.url)
		if dir != c.dir || (err != nil) != c.wantErr {
			t.Errorf("IsDir(%q) = %v, %v; want %v, error %v", c.url, dir, err, c.dir, c.wantErr)
		}
	}
}

// TestWriteFileCommitsOnSuccess checks that a write that fails, or
// panics, leaves no object, and that one that succeeds leaves its bytes.
func TestWriteFileCommitsOnSuccess(t *testing.T) {
	dir := t.TempDir()
	url := fileURL(filepath.Join(dir, "out", "report.json"))
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := objects.WriteFile(context.Background(), url, func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte("x"), 1<<20))
		return errors.New("the analysis failed")
	})
	if err == nil || !strings.Contains(err.Error(), url) {
		t.Errorf("a failed write returned %v, want an error naming %s", err, url)
	}
	func() {
		defer func() { recover() }()
		objects.WriteFile(context.Background(), url, func(w io.Writer) error {
			w.Write([]byte("partial"))
			panic("out of memory")
		})
	}()
	if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) != 0 {
		t.Fatalf("failed writes left %v behind", entries)
	}
	if err := objects.WriteFile(context.Background(), url, func(w io.Writer) error {
		_, err := io.WriteString(w, "report")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out", "report.json")); string(b) != "report" {
		t.Errorf("wrote %q, %v; want %q", b, err, "report")
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "out")); len(entries) != 1 {
		t.Errorf("the write left %v, want report.json alone", entries)
	}
	if err := objects.WriteFile(context.Background(), fileURL(dir)+"/", func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "names a directory") {
		t.Errorf("writing to a directory URL: %v, want it refused", err)
	}
}
