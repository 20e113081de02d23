package serve

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/testservers"
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

// TestLostLocks cuts a server's lock connection, as a database failover or
// a network cut does, which drops every content lock it holds: the loss
// shows in the lock epoch; what was decided under the lost locks is not
// acted on (a blob is not removed), and a record stored meanwhile without
// its blob is taken back, its upload failing to be sent again.
func TestLostLocks(t *testing.T) {
	blobs := (&url.URL{Scheme: "file", Path: filepath.ToSlash(t.TempDir()) + "/"}).String()
	db := testservers.Postgres(t)
	fa := &fakeAnalyzer{}
	a := startAlone(t, Config{Analyze: fa.analyze, Database: db, Blobs: blobs})
	<-a.swept
	ctx := context.Background()
	f, err := a.receive(bytes.NewReader(fakeReport("parallel", 1)), "orphan")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.blobs.commit(ctx, f.tmp, f.sha); err != nil {
		t.Fatal(err)
	}
	epoch := a.lockEpoch()
	unlock, err := a.lockContent(ctx, f.sha)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()

	other, err := OpenPostgres(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// Terminating only signals the backend, which lets its locks go when
	// it has exited: wait for that (up to 10 s), or the lock may still
	// be held when other tries it below.
	if _, err := other.db.Exec(`SELECT pg_terminate_backend(pid, 10000) FROM pg_locks WHERE locktype = 'advisory'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.tryLockContent(ctx, testSHA(2)); err == nil {
		t.Fatal("a lock taken on a terminated connection: no error")
	}
	if a.lockEpoch() == epoch {
		t.Fatal("the lock epoch did not change when the lock connection was lost")
	}
	if u, ok, err := other.TryLockContent(ctx, f.sha); !ok || err != nil {
		t.Fatalf("the lost lock is still held: %v, %v", ok, err)
	} else {
		u()
	}
	if err := a.dropBlob(ctx, f.sha, epoch); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.blobs.keep.exists(ctx, f.sha); !ok {
		t.Error("a blob was removed under a lost lock")
	}

	rec, rep := testRecord(3, KindTrace)
	if _, err := a.store.Put(ctx, rec, rep); err != nil {
		t.Fatal(err)
	}
	if err := a.stillWhole(ctx, rec, epoch); err == nil || statusOf(err) != http.StatusServiceUnavailable {
		t.Errorf("a record without its blob, stored under lost locks: %v, want 503", err)
	}
	if _, err := a.store.Get(ctx, rec.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the record without its blob is still stored (%v)", err)
	}
	if err := a.dropBlob(ctx, f.sha, a.lockEpoch()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.blobs.keep.exists(ctx, f.sha); ok {
		t.Error("an orphan blob left under a lock of the current epoch")
	}
}
