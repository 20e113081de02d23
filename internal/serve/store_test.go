package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracegap/tracegap/internal/testservers"
)

// openers open a fresh store of each kind: SQLite in a temporary file,
// and PostgreSQL in a new database of a real server (skipped where none
// can start, except under CI).
var openers = map[string]func(t testing.TB) (Store, error){
	"sqlite": func(t testing.TB) (Store, error) { return OpenSQLite(t.TempDir() + "/t.db") },
	"postgres": func(t testing.TB) (Store, error) {
		return OpenPostgres(context.Background(), testservers.Postgres(t))
	},
}

// testSHA is a made-up SHA-256 whose first 16 digits (the record id and
// the lock key) differ with n.
func testSHA(n int) string { return fmt.Sprintf("%016x%048x", n, n) }

func testRecord(n int, kind string, files ...File) (Record, Reports) {
	sha := testSHA(n)
	rec := Record{ID: sha[:IDLen], Kind: kind, SHA256: sha, Name: fmt.Sprintf("run \"%d\" ✓ 'q' ?", n), Size: int64(100 + n),
		Format: "chrome", Verdict: "parallel", Confidence: "high", Created: time.Unix(1700000000+int64(n), 5).UTC(), Files: files}
	rep := Reports{JSON: []byte(fmt.Sprintf(`{"n":%d}`, n)), Summary: []byte(`{"s":1}`), Settings: []byte(`{"top":3}`)}
	return rec, rep
}

// TestStores runs the same calls on every kind of store and expects the
// same answers.
func TestStores(t *testing.T) {
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			st, err := open(t)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			exerciseStore(t, st)
		})
	}
}

func exerciseStore(t *testing.T, st Store) {
	ctx := context.Background()
	var recs []Record
	for i := 1; i <= 5; i++ {
		rec, rep := testRecord(i, KindTrace)
		if i == 3 {
			rep.Summary, rep.Settings = nil, nil
		}
		got, err := st.Put(ctx, rec, rep)
		if err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
		recs = append(recs, got)
	}
	job, jrep := testRecord(9, KindJob, File{Name: "rank0.json", SHA256: recs[0].SHA256, Size: 1}, File{Name: "rank1.json", SHA256: testSHA(77), Size: 2})
	if _, err := st.Put(ctx, job, jrep); err != nil {
		t.Fatalf("Put job: %v", err)
	}
	if old, err := st.Put(ctx, recs[1], Reports{JSON: []byte(`{}`)}); !errors.Is(err, ErrExists) || old.ID != recs[1].ID {
		t.Errorf("Put of stored content = %v, %v; want ErrExists and the record", old.ID, err)
	}

	got, err := st.Get(ctx, recs[1].ID)
	if err != nil || got.Name != recs[1].Name || !got.Created.Equal(recs[1].Created) || got.Size != recs[1].Size {
		t.Errorf("Get = %+v, %v; want %+v", got, err, recs[1])
	}
	if _, err := st.Get(ctx, "0000000000000bad"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of no record: %v, want ErrNotFound", err)
	}
	gj, err := st.BySHA(ctx, job.SHA256)
	if err != nil || len(gj.Files) != 2 || gj.Files[1].Name != "rank1.json" || gj.Kind != KindJob {
		t.Errorf("BySHA(job) = %+v, %v; want its two files", gj, err)
	}
	if b, err := st.JSON(ctx, recs[0].ID); err != nil || string(b) != `{"n":1}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
	if b, err := st.HTML(ctx, recs[0].ID); err != nil || len(b) != 0 {
		t.Errorf("HTML before SetHTML = %q, %v; want empty", b, err)
	}
	if err := st.SetHTML(ctx, recs[0].ID, []byte("<p>x")); err != nil {
		t.Fatal(err)
	}
	if b, _ := st.HTML(ctx, recs[0].ID); string(b) != "<p>x" {
		t.Errorf("HTML after SetHTML = %q", b)
	}
	if err := st.SetHTML(ctx, "0000000000000bad", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetHTML of no record: %v", err)
	}
	if _, err := st.Summary(ctx, recs[2].ID); !errors.Is(err, ErrNoSummary) {
		t.Errorf("Summary of a record without: %v, want ErrNoSummary", err)
	}
	if b, err := st.Settings(ctx, recs[2].ID); err != nil || b != nil {
		t.Errorf("Settings of a record without = %q, %v; want nil", b, err)
	}
	if b, err := st.Summary(ctx, recs[0].ID); err != nil || string(b) != `{"s":1}` {
		t.Errorf("Summary = %s, %v", b, err)
	}

	page, total, err := st.List(ctx, ListQuery{Limit: 2})
	if err != nil || total != 6 || len(page) != 2 || page[0].ID != job.ID || page[1].ID != recs[4].ID {
		t.Fatalf("List first page = %v (total %d), %v; want the job and trace 5 of 6", ids(page), total, err)
	}
	next, _, _ := st.List(ctx, ListQuery{Limit: 2, Before: page[1].Seq})
	if len(next) != 2 || next[0].ID != recs[3].ID {
		t.Errorf("List after cursor = %v, want traces 4 and 3", ids(next))
	}
	off, _, _ := st.List(ctx, ListQuery{Limit: 10, Offset: 4})
	if len(off) != 2 || off[1].ID != recs[0].ID {
		t.Errorf("List offset 4 = %v, want traces 2 and 1", ids(off))
	}

	var held []string
	if err := st.Blobs(ctx, func(sha string) error { held = append(held, sha); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(held)
	if len(held) != 6 || !slices.Contains(held, testSHA(77)) || slices.Contains(held, job.SHA256) {
		t.Errorf("Blobs = %d shas, want the 5 traces' and the job's other rank, not the job's own", len(held))
	}
	for _, c := range []struct {
		sha  string
		want bool
	}{{recs[0].SHA256, true}, {testSHA(77), true}, {job.SHA256, false}, {testSHA(78), false}} {
		if used, err := st.Referenced(ctx, c.sha); used != c.want || err != nil {
			t.Errorf("Referenced(%s…) = %v, %v; want %v", c.sha[56:], used, err, c.want)
		}
	}
	if del, err := st.Delete(ctx, job.ID); err != nil || len(del.Files) != 2 {
		t.Errorf("Delete(job) = %+v, %v", del, err)
	}
	if used, _ := st.Referenced(ctx, testSHA(77)); used {
		t.Error("a deleted job's rank still referenced")
	}
	if page, total, err := st.List(ctx, ListQuery{Limit: 10}); err != nil || total != 5 || len(page) != 5 {
		t.Errorf("List after a delete = %d records (total %d), %v; want 5 of 5", len(page), total, err)
	}
	if _, err := st.Delete(ctx, job.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if _, err := st.JSON(ctx, job.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("JSON of deleted: %v, want ErrNotFound", err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Error(err)
	}
}

// uncount undoes each dialect's migration that keeps the count of
// records, for TestStoreCounts to apply it again.
var uncount = map[string]string{
	"SQLite":     `DROP TRIGGER traces_counted; DROP TRIGGER traces_uncounted; DROP TABLE trace_count;`,
	"PostgreSQL": `DROP TRIGGER traces_counted ON traces; DROP FUNCTION traces_count; DROP TABLE trace_count;`,
}

// TestStoreCounts checks the count of records that List gives: set by
// the migration that keeps it from the records already stored, then kept
// by inserts and deletes made together, whose seqs share the rows of the
// count.
func TestStoreCounts(t *testing.T) {
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			st, err := open(t)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			s := st.(*SQLStore)
			ctx := context.Background()
			put := func(n int) {
				t.Helper()
				rec, rep := testRecord(n, KindTrace)
				if _, err := s.Put(ctx, rec, rep); err != nil {
					t.Errorf("Put %d: %v", n, err)
				}
			}
			for n := 1; n <= 3; n++ {
				put(n)
			}
			if _, err := s.db.ExecContext(ctx, uncount[s.d.name]); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.ExecContext(ctx, s.d.bind(`UPDATE schema_version SET version = ?`), len(s.d.migrations)-1); err != nil {
				t.Fatal(err)
			}
			if err := s.migrate(ctx); err != nil {
				t.Fatal(err)
			}
			wantTotal(t, s, 3)
			var wg sync.WaitGroup
			for n := 4; n <= 40; n++ {
				wg.Go(func() { put(n) })
			}
			for n := 1; n <= 3; n++ {
				wg.Go(func() {
					if _, err := s.Delete(ctx, testSHA(n)[:IDLen]); err != nil {
						t.Errorf("Delete %d: %v", n, err)
					}
				})
			}
			wg.Wait()
			if rec, rep := testRecord(4, KindTrace); !isExists(s.Put(ctx, rec, rep)) {
				t.Error("Put of stored content: want ErrExists")
			}
			wantTotal(t, s, 37)
		})
	}
}

func isExists(_ Record, err error) bool { return errors.Is(err, ErrExists) }

// wantTotal checks that List's total and a count of the records are both
// want.
func wantTotal(t *testing.T, s *SQLStore, want int) {
	t.Helper()
	_, total, err := s.List(context.Background(), ListQuery{Limit: 1})
	var counted int
	if cerr := s.db.QueryRow(`SELECT COUNT(*) FROM traces`).Scan(&counted); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil || total != want || counted != want {
		t.Errorf("List's total = %d, %v, COUNT(*) = %d; want %d", total, err, counted, want)
	}
}

func ids(recs []Record) []string {
	var s []string
	for _, r := range recs {
		s = append(s, r.ID)
	}
	return s
}

// TestPostgresMigratesOnce starts eight stores together on one new
// database: each comes up, the schema is built once.
func TestPostgresMigratesOnce(t *testing.T) {
	dsn := testservers.Postgres(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	opened := make([]*SQLStore, 8)
	for i := range opened {
		wg.Go(func() { opened[i], errs[i] = OpenPostgres(context.Background(), dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
		defer opened[i].Close()
	}
	var rows, v int
	if err := opened[0].db.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&rows, &v); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || v != len(postgresMigrations) {
		t.Errorf("schema_version holds %d rows, version %d; want 1 row, version %d", rows, v, len(postgresMigrations))
	}
	if _, err := opened[3].db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenPostgres(context.Background(), dsn); err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Errorf("opening a newer schema: %v, want a refusal naming version 99", err)
	}
}

// TestPostgresContentLocks checks that a content's lock, held by one
// server, keeps another waiting until it is released.
func TestPostgresContentLocks(t *testing.T) {
	dsn := testservers.Postgres(t)
	a, err := OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	sha := testSHA(42)
	unlock, err := a.LockContent(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.TryLockContent(ctx, sha); ok || err != nil {
		t.Fatalf("TryLockContent while held elsewhere = %v, %v; want false", ok, err)
	}
	if u, ok, err := b.TryLockContent(ctx, testSHA(43)); !ok || err != nil {
		t.Fatalf("TryLockContent of another content = %v, %v; want true", ok, err)
	} else {
		u()
	}
	type taken struct {
		unlock func()
		err    error
	}
	got := make(chan taken, 1)
	go func() {
		u, err := b.LockContent(ctx, sha)
		got <- taken{u, err}
	}()
	unlock()
	tb := <-got
	if tb.err != nil {
		t.Fatalf("LockContent after release: %v", tb.err)
	}
	if _, ok, err := a.TryLockContent(ctx, sha); ok || err != nil {
		t.Errorf("TryLockContent of a lock the other store took = %v, %v; want false", ok, err)
	}
	tb.unlock()

	cctx, cancel := context.WithCancel(ctx)
	if unlock, err = a.LockContent(ctx, sha); err != nil {
		t.Fatal(err)
	}
	defer unlock()
	go func() { _, err := b.LockContent(cctx, sha); got <- taken{nil, err} }()
	cancel()
	if tb := <-got; !errors.Is(tb.err, context.Canceled) {
		t.Errorf("LockContent cancelled while held elsewhere: %v, want context.Canceled", tb.err)
	}
}

// TestPostgresReadLocks checks the read locks that keep a blob another
// server reads from being removed: removal is refused while any read
// holds it, reads of two servers and of one server twice included, and a
// read waits while a removal holds it; the content's own lock is apart.
func TestPostgresReadLocks(t *testing.T) {
	dsn := testservers.Postgres(t)
	var stores [2]*SQLStore
	for i := range stores {
		s, err := OpenPostgres(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	a, b := stores[0], stores[1]
	ctx := context.Background()
	sha := testSHA(42)
	canRemove := func(want bool) {
		t.Helper()
		release, ok, err := b.TryRemoval(ctx, sha)
		if ok != want || err != nil {
			t.Fatalf("TryRemoval = %v, %v; want %v", ok, err, want)
		}
		if ok {
			release()
		}
	}
	var releases []func()
	for _, s := range []*SQLStore{a, a, b} {
		r, err := s.HoldRead(ctx, sha)
		if err != nil || r == nil {
			t.Fatalf("HoldRead: %v", err)
		}
		releases = append(releases, r)
	}
	canRemove(false)
	releases[0]()
	canRemove(false) // a still reads once
	releases[1]()
	canRemove(true) // b's own read does not stop b
	releases[2]()
	canRemove(true)
	if unlock, ok, err := a.TryLockContent(ctx, sha); !ok || err != nil {
		t.Errorf("TryLockContent beside the read locks = %v, %v; want true", ok, err)
	} else {
		unlock()
	}

	release, ok, err := b.TryRemoval(ctx, sha)
	if !ok || err != nil {
		t.Fatalf("TryRemoval = %v, %v", ok, err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := a.HoldRead(ctx, sha)
		if err == nil {
			r()
		}
		got <- err
	}()
	release()
	if err := <-got; err != nil {
		t.Errorf("HoldRead after the removal: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	release, _, _ = b.TryRemoval(ctx, sha)
	defer release()
	go func() { _, err := a.HoldRead(cctx, sha); got <- err }()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("HoldRead cancelled during a removal: %v, want context.Canceled", err)
	}
	if r, err := (&SQLStore{}).HoldRead(ctx, sha); r != nil || err != nil {
		t.Errorf("HoldRead on a store one server holds = %v, %v; want nothing to release", r != nil, err)
	}
}

// TestRedactURL checks that no password of a database setting reaches a
// message, however it is given.
func TestRedactURL(t *testing.T) {
	for _, tt := range []struct{ dsn, want string }{
		{"postgres://u:hunter2@db/x", "postgres://u:xxxxx@db/x"},
		{"postgres://u@db/x?password=hunter2&sslmode=require", "postgres://u@db/x?password=xxxxx&sslmode=require"},
		{"postgres://u@db/x?sslpassword=hunter2", "postgres://u@db/x?sslpassword=xxxxx"},
		{"host=db user=u password=hunter2 dbname=x", "(the database setting, not repeated: it is not a URL)"},
		{"mysql://u:hunter2@h/db", "mysql://u:xxxxx@h/db"},
	} {
		if got := redactURL(tt.dsn); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.dsn, got, tt.want)
		}
	}
}
