package serve

import (
	"archive/tar"
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/trace/tracetest"
)

// FuzzExpand feeds arbitrary bytes to the expansion of an uploaded
// archive, as a .tar and as a .tar.gz: it must never panic or hang, the
// traces it keeps must hold no more than the archive's bound lets through
// (the bytes of a plain tar, the server's MaxUpload), be named by safe
// relative paths, and on error nothing is kept and one line names the
// archive. The seeds: tars of traces and other files, a climbing name, a
// sparse entry, links, devices and a name twice, plain and gzipped.
func FuzzExpand(f *testing.F) {
	trace := []byte(`{"traceEvents":[]}`)
	content := func(string) []byte { return trace }
	for _, gz := range []bool{false, true} {
		f.Add(tracetest.Tar(gz, []string{"logs/a.trace.json", "notes.txt", "b.xplane.pb"}, content), gz)
		f.Add(tracetest.Tar(gz, []string{"../a.trace.json"}, content), gz)
	}
	f.Add(sparseTar("a.trace.json", 64<<20), false)
	f.Add(linkTar(), false)
	s, err := New(Config{Analyze: (&fakeAnalyzer{}).analyze, DataDir: f.TempDir(), MaxUpload: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, data []byte, gz bool) {
		name := "up.tar"
		if gz {
			name += ".gz"
		}
		file, err := s.blobs.create()
		if err != nil {
			t.Fatal(err)
		}
		file.Write(data)
		file.Close()
		traces, err := s.expand(received{tmp: file.Name(), name: name, size: int64(len(data))}, &expansion{bytes: s.cfg.MaxUpload})
		s.blobs.drop(file.Name())
		var kept int64
		for _, p := range traces {
			kept += p.f.size
			if clean, err := entryName(p.f.name); err != nil || clean != p.f.name || strings.ContainsAny(p.f.name, "\n\r") {
				t.Errorf("trace named %q: not a clean relative path", p.f.name)
			}
			s.blobs.drop(p.f.tmp)
		}
		if bound := min(s.cfg.MaxUpload, int64(len(data))); !gz && kept > bound || kept > s.cfg.MaxUpload {
			t.Fatalf("kept %d bytes of traces from a %d-byte %s, over the bound", kept, len(data), name)
		}
		if err != nil && (len(traces) > 0 || !strings.HasPrefix(err.Error(), name+":") || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("error %q with %d traces: want one line naming %s and none kept", err, len(traces), name)
		}
		if left, _ := os.ReadDir(s.blobs.tmp); len(left) > 0 {
			t.Fatalf("%d temporary files left behind", len(left))
		}
	})
}

// linkTar returns a tar of entries that are not regular files, named as
// traces: a symlink and a hard link out of the folder, a device, a FIFO, a
// directory; then the same name twice.
func linkTar() []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range []*tar.Header{
		{Name: "a.trace.json", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		{Name: "b.trace.json", Typeflag: tar.TypeLink, Linkname: "../../x"},
		{Name: "c.trace.json", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3},
		{Name: "d.trace.json", Typeflag: tar.TypeFifo},
		{Name: "e.trace.json/", Typeflag: tar.TypeDir},
	} {
		h.Mode = 0o644
		tw.WriteHeader(h)
	}
	for range 2 {
		tw.WriteHeader(&tar.Header{Name: "f.trace.json", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2})
		tw.Write([]byte("{}"))
	}
	tw.Close()
	return b.Bytes()
}
