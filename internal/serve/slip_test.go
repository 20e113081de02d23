package serve

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSlipTarRefused: a tar whose entries would be extracted outside its
// folder (a ".." element, an absolute name, either with backslashes) is
// refused whole, with one line naming the entry, and nothing is stored or
// left behind.
func TestSlipTarRefused(t *testing.T) {
	good := fakeReport("parallel", 1)
	tests := []struct{ entry, msg string }{
		{"../../../../x.trace.json", `entry "../../../../x.trace.json": a ".." in the name`},
		{"/abs/x.trace.json", `entry "/abs/x.trace.json": absolute name`},
		{`..\..\x.trace.json`, `entry "..\\..\\x.trace.json": a ".." in the name`},
		{`C:\x.trace.json`, `entry "C:\\x.trace.json": absolute name`},
		{"logs/../../x.txt", `entry "logs/../../x.txt": a ".." in the name`},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
			order := []string{"ok/a.trace.json", tt.entry}
			files := map[string][]byte{"ok/a.trace.json": good, tt.entry: fakeReport("parallel", 2)}
			body, ctype := multipartBody(t, nil, map[string][]byte{"slip.tar": tarball(t, false, order, files)}, []string{"slip.tar"})
			r := do(t, "POST", ts.URL+"/api/v1/traces", body, map[string]string{"Content-Type": ctype})
			var got []uploadAnswer
			r.json(t, &got)
			if r.code != http.StatusBadRequest || len(got) != 1 || !strings.HasPrefix(got[0].Error, "slip.tar: "+tt.msg) {
				t.Errorf("upload = %d %s, want 400 and %q", r.code, r.body, tt.msg)
			}
			if bytes.Count(r.body, []byte("\n")) != 1 {
				t.Errorf("answer %q: want one line", r.body)
			}
			assertNothingStored(t, ts)
		})
	}
}

// TestEntryNames: safe names are kept as clean relative paths.
func TestEntryNames(t *testing.T) {
	for raw, want := range map[string]string{
		"./logs/a.trace.json":         "logs/a.trace.json",
		"logs//plugins/./b.xplane.pb": "logs/plugins/b.xplane.pb",
		`logs\c.xplane.pb`:            "logs/c.xplane.pb",
		"./":                          ".",
		"ab:c.trace.json":             "ab:c.trace.json",
	} {
		if got, err := entryName(raw); err != nil || got != want {
			t.Errorf("entryName(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// TestJobDownloadStaysInFolder: a job's raw download, extracted with
// archive/tar into a folder, writes nothing outside it; a record holding
// names that would leave it (stored before names were checked) is not
// downloaded at all, with one line naming the entry.
func TestJobDownloadStaysInFolder(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	safe := ts.putJob(t, "safe", "logs/w0.trace.json", "./logs/w1.trace.json")
	dir := t.TempDir()
	r := get(t, ts.URL+"/api/v1/traces/"+safe+"/raw")
	if r.code != http.StatusOK {
		t.Fatalf("download = %d %s", r.code, r.body)
	}
	if got := extractInside(t, r.body, dir); len(got) != 2 {
		t.Errorf("extracted %v, want the 2 ranks", got)
	}
	slip := ts.putJob(t, "slip", "../../../../x.trace.json", "/abs/x.trace.json")
	r = get(t, ts.URL+"/api/v1/traces/"+slip+"/raw")
	if r.code != http.StatusInternalServerError || !strings.Contains(r.errorText(t), `entry "../../../../x.trace.json": a ".." in the name`) {
		t.Errorf("download of unsafe names = %d %s, want 500 naming the entry", r.code, r.body)
	}
	extractInside(t, r.body, dir) // not a tar: nothing extracted
}

// putJob stores a job record whose ranks are named names, as a store
// written by an older server may hold, and returns its id.
func (ts *testServer) putJob(t *testing.T, name string, names ...string) string {
	t.Helper()
	ts.sweptAll()
	var files []received
	rec := Record{Kind: KindJob, Name: name, Created: time.Now().UTC(), Verdict: "parallel", Confidence: "high"}
	for i, n := range names {
		f, err := ts.receive(bytes.NewReader(fakeReport(name, i)), n)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.blobs.commit(context.Background(), f.tmp, f.sha); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		rec.Files = append(rec.Files, File{Name: n, SHA256: f.sha, Size: f.size})
	}
	rec.SHA256 = jobSHA(files)
	rec.ID = rec.SHA256[:IDLen]
	if _, err := ts.store.Put(context.Background(), rec, Reports{JSON: fakeReport("parallel", 0)}); err != nil {
		t.Fatal(err)
	}
	return rec.ID
}

// extractInside extracts the tar b into dir as a careless extractor would
// (joining each name to dir), failing the test for any name whose path
// leaves dir; it returns the paths written. Data that is not a tar
// extracts nothing.
func extractInside(t *testing.T, b []byte, dir string) []string {
	t.Helper()
	var got []string
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) || err != nil {
			return got
		}
		p := filepath.Join(dir, h.Name)
		if rel, err := filepath.Rel(dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(h.Name) {
			t.Errorf("entry %q leaves the folder", h.Name)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
}

// FuzzEntryName: whatever an archive entry is named, a name entryName
// keeps, joined to a folder, stays inside it, and is one line.
func FuzzEntryName(f *testing.F) {
	for _, s := range []string{"logs/a.trace.json", "../x", "/abs", `..\x`, "C:x", "a/../../b", "./", "a\x00/..", ".. /x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		name, err := entryName(raw)
		if err != nil {
			if !strings.Contains(err.Error(), "entry ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line naming the entry", err)
			}
			return
		}
		dir := "/base/folder"
		p := filepath.Join(dir, filepath.FromSlash(name))
		if rel, err := filepath.Rel(dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			t.Fatalf("entryName(%q) = %q, which leaves the folder", raw, name)
		}
		if strings.ContainsAny(name, "\n\r\\") || strings.HasPrefix(name, "/") {
			t.Fatalf("entryName(%q) = %q: not a clean relative path", raw, name)
		}
	})
}
