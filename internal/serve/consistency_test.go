package serve

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlobsOfAnotherStoreRefused points a second server, on a database of
// its own, at the bucket directory where a first keeps its files: it
// refuses to start, rather than sweep the first's files away as files no
// record of its own holds.
func TestBlobsOfAnotherStoreRefused(t *testing.T) {
	blobs := (&url.URL{Scheme: "file", Path: filepath.ToSlash(t.TempDir()) + "/"}).String()
	fa := &fakeAnalyzer{}
	a := startAlone(t, Config{Analyze: fa.analyze, Blobs: blobs})
	data := fakeReport("parallel", 1)
	a.mustUpload(t, "kept", data)
	_, err := New(Config{Analyze: fa.analyze, DataDir: t.TempDir(), Blobs: blobs})
	if err == nil || !strings.Contains(err.Error(), "holds the files of another database") {
		t.Fatalf("a second store on the same blobs: %v, want a refusal", err)
	}
	if ok, err := a.blobs.keep.exists(context.Background(), sha(data)); !ok || err != nil {
		t.Errorf("the first store's file is gone (%v)", err)
	}
	assertConsistent(t, Config{DataDir: a.cfg.DataDir, Blobs: blobs, Store: a.store})
}

// TestCheckRefusesRunningSQLite checks that CheckStore does not look at
// the data directory of a running server on SQLite, where an upload being
// stored would read as a file with no record.
func TestCheckRefusesRunningSQLite(t *testing.T) {
	if os.Getenv(sharedEnv) != "" {
		t.Skip("a test of SQLite's data directory")
	}
	ts := startAlone(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	ts.mustUpload(t, "a", fakeReport("parallel", 1))
	_, err := CheckStore(context.Background(), Config{DataDir: ts.cfg.DataDir})
	if err == nil || !strings.Contains(err.Error(), "in use by another tracegap serve") {
		t.Errorf("CheckStore of a running server's directory: %v, want a refusal", err)
	}
	ts.stop(t)
	assertConsistent(t, Config{DataDir: ts.cfg.DataDir})
}
