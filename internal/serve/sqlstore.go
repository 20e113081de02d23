package serve

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// sqliteMigrations build the SQLite schema one version at a time:
// migrations[i] takes the database from version i to i+1. Never edit a
// released migration; append.
var sqliteMigrations = []string{
	`CREATE TABLE traces (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		id         TEXT NOT NULL UNIQUE,
		sha256     TEXT NOT NULL UNIQUE,
		name       TEXT NOT NULL,
		size       INTEGER NOT NULL,
		format     TEXT NOT NULL,
		verdict    TEXT NOT NULL,
		confidence TEXT NOT NULL,
		created_ns INTEGER NOT NULL
	);
	CREATE TABLE reports (
		id   TEXT PRIMARY KEY REFERENCES traces(id) ON DELETE CASCADE,
		json BLOB NOT NULL,
		html BLOB NOT NULL
	);`,
	// Each run's compare.Summary, which comparisons read. NULL for the
	// traces stored before: those are not compared (ErrNoSummary).
	`ALTER TABLE reports ADD COLUMN summary BLOB;`,
	// Jobs (a record of kind 'job' and its rank files, whose blobs are
	// shared with any trace of the same content), and each run's
	// check.Figures, which checks read: NULL for the traces stored before.
	`ALTER TABLE traces ADD COLUMN kind TEXT NOT NULL DEFAULT 'trace';
	CREATE TABLE job_files (
		job_id TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
		idx    INTEGER NOT NULL,
		name   TEXT NOT NULL,
		sha256 TEXT NOT NULL,
		size   INTEGER NOT NULL,
		PRIMARY KEY (job_id, idx)
	);
	CREATE INDEX job_files_sha256 ON job_files(sha256);
	ALTER TABLE reports ADD COLUMN figures BLOB;`,
	// The Settings each run's reports were made with, which its HTML
	// report, rendered later, reuses. NULL for the traces stored before:
	// those render with the server's current options.
	`ALTER TABLE reports ADD COLUMN settings BLOB;`,
	// The check figures move into the summary (compare.Summary's window
	// and findings), which checks read now; the figures column is no
	// longer written.
	`UPDATE reports SET summary = json_patch(summary, json_object(
		'window', json_object('ns', figures -> '$.window_ns', 'steps', figures -> '$.steps',
			'truncated', figures -> '$.truncated', 'idle_ns', figures -> '$.idle_ns',
			'sync_idle_ns', figures -> '$.sync_idle_ns', 'input_idle_ns', figures -> '$.input_idle_ns',
			'devices', figures -> '$.devices'),
		'findings', figures -> '$.findings')), figures = NULL
	WHERE summary IS NOT NULL AND figures IS NOT NULL AND figures ->> '$.version' = 1;`,
	// The store's id, which a bucket holding its blobs is marked with
	// (blobStore.claim), so that two stores never share one and sweep
	// each other's blobs away.
	`CREATE TABLE IF NOT EXISTS store (id TEXT NOT NULL);
	INSERT INTO store (id) SELECT lower(hex(randomblob(16))) WHERE NOT EXISTS (SELECT 1 FROM store);`,
	// The count of records, which every page of the list gives, kept by
	// triggers in the transaction that inserts or deletes a record rather
	// than counted each time (COUNT(*) reads every row).
	`CREATE TABLE IF NOT EXISTS trace_count (slot INTEGER PRIMARY KEY, n INTEGER NOT NULL);
	DELETE FROM trace_count;
	INSERT INTO trace_count (slot, n) SELECT 0, COUNT(*) FROM traces;
	DROP TRIGGER IF EXISTS traces_counted;
	CREATE TRIGGER traces_counted AFTER INSERT ON traces BEGIN
		UPDATE trace_count SET n = n + 1 WHERE slot = 0;
	END;
	DROP TRIGGER IF EXISTS traces_uncounted;
	CREATE TRIGGER traces_uncounted AFTER DELETE ON traces BEGIN
		UPDATE trace_count SET n = n - 1 WHERE slot = 0;
	END;`,
}

// SchemaVersion is the SQLite schema version this build writes.
var SchemaVersion = len(sqliteMigrations)

// SQLStore is a Store in a SQL database: one SQLite file (OpenSQLite), in
// WAL mode so that readers never wait for the writer, or PostgreSQL
// (OpenPostgres), which several servers share.
type SQLStore struct {
	db *sql.DB
	d  dialect
	// locks, for PostgreSQL, holds the advisory locks that serialise the
	// uploads of one content across servers.
	locks *pgLocks
}

var _ Store = (*SQLStore)(nil)

// dialect is what differs between the databases a SQLStore runs on.
type dialect struct {
	name       string
	migrations []string
	// lock, run first in the migrations' transaction, keeps two servers
	// starting together from migrating at once ("" where the database
	// itself serialises writers).
	lock string
	// bind rewrites a query's ? placeholders as the driver expects them.
	bind func(string) string
}

var sqlite = dialect{name: "SQLite", migrations: sqliteMigrations, bind: func(q string) string { return q }}

// OpenSQLite opens (creating if needed) the database at path and brings its
// schema up to SchemaVersion.
func OpenSQLite(path string) (*SQLStore, error) { return openSQLite(path, true) }

// openSQLite opens the database at path, bringing its schema up to date
// when migrate is set, else requiring it to be (a check writes nothing).
func openSQLite(path string, migrate bool) (*SQLStore, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("database path %q: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate") // take the write lock at BEGIN: no upgrade deadlocks
	db, err := sql.Open("sqlite", "file:"+abs+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", abs, err)
	}
	s := &SQLStore{db: db, d: sqlite}
	if err := s.prepare(context.Background(), migrate); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", abs, err)
	}
	return s, nil
}

// prepare migrates the schema, or with migrate false checks that it is
// the one this build writes.
func (s *SQLStore) prepare(ctx context.Context, migrate bool) error {
	if migrate {
		return s.migrate(ctx)
	}
	v, err := version(ctx, s.db)
	if err != nil {
		return fmt.Errorf("no tracegap schema found (%w): expected a database a tracegap serve has run on", err)
	}
	if want := len(s.d.migrations); v != want {
		return fmt.Errorf("schema version %d, where this tracegap reads %d: check with the tracegap the servers run", v, want)
	}
	return nil
}

// migrate applies the migrations the database has not seen, in one
// transaction with the version bump, so that a crash leaves the version
// before; under the dialect's lock, so that servers starting together on
// one database migrate it once.
func (s *SQLStore) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrating: %w", err)
	}
	defer tx.Rollback()
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return fmt.Errorf("taking the migration lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("creating schema_version: %w", err)
	}
	v, err := version(ctx, tx)
	if err != nil {
		return err
	}
	ms := s.d.migrations
	if v > len(ms) {
		return fmt.Errorf("schema version %d is newer than this tracegap knows (%d): upgrade tracegap", v, len(ms))
	}
	if v == len(ms) {
		return nil
	}
	for i := v; i < len(ms); i++ {
		if _, err := tx.ExecContext(ctx, ms[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
		return fmt.Errorf("migration %d: %w", len(ms), err)
	}
	if _, err := tx.ExecContext(ctx, s.d.bind(`INSERT INTO schema_version (version) VALUES (?)`), len(ms)); err != nil {
		return fmt.Errorf("migration %d: %w", len(ms), err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrating to version %d: %w", len(ms), err)
	}
	return nil
}

func version(ctx context.Context, q querier) (int, error) {
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return int(v.Int64), nil
}

// Version returns the database's schema version.
func (s *SQLStore) Version(ctx context.Context) (int, error) { return version(ctx, s.db) }

const recordColumns = `seq, id, kind, sha256, name, size, format, verdict, confidence, created_ns`

type scanner interface{ Scan(dest ...any) error }

func scanRecord(sc scanner) (Record, error) {
	var r Record
	var created int64
	err := sc.Scan(&r.Seq, &r.ID, &r.Kind, &r.SHA256, &r.Name, &r.Size, &r.Format, &r.Verdict, &r.Confidence, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, ErrNotFound
	}
	r.Created = time.Unix(0, created).UTC()
	return r, err
}

// Put implements Store.
func (s *SQLStore) Put(ctx context.Context, rec Record, rep Reports) (Record, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Record{}, fmt.Errorf("storing %s: %w", rec.ID, err)
	}
	defer tx.Rollback()
	old, err := s.record(ctx, tx, `sha256`, rec.SHA256)
	switch {
	case err == nil:
		return old, ErrExists
	case !errors.Is(err, ErrNotFound):
		return Record{}, fmt.Errorf("storing %s: %w", rec.ID, err)
	}
	if _, err := scanRecord(tx.QueryRowContext(ctx, s.d.bind(`SELECT `+recordColumns+` FROM traces WHERE id = ?`), rec.ID)); err == nil {
		return Record{}, fmt.Errorf("storing %s: id already used by different content (SHA-256 %s)", rec.ID, rec.SHA256)
	}
	if rec.Kind == "" {
		rec.Kind = KindTrace
	}
	err = tx.QueryRowContext(ctx, s.d.bind(`INSERT INTO traces (id, kind, sha256, name, size, format, verdict, confidence, created_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`),
		rec.ID, rec.Kind, rec.SHA256, rec.Name, rec.Size, rec.Format, rec.Verdict, rec.Confidence, rec.Created.UnixNano()).Scan(&rec.Seq)
	if err != nil {
		// Stored meanwhile by another server on this database.
		if old, gerr := s.record(ctx, s.db, `sha256`, rec.SHA256); gerr == nil {
			return old, ErrExists
		}
		return Record{}, fmt.Errorf("storing %s: %w", rec.ID, err)
	}
	for i, f := range rec.Files {
		if _, err := tx.ExecContext(ctx, s.d.bind(`INSERT INTO job_files (job_id, idx, name, sha256, size) VALUES (?, ?, ?, ?, ?)`), rec.ID, i, f.Name, f.SHA256, f.Size); err != nil {
			return Record{}, fmt.Errorf("storing the files of %s: %w", rec.ID, err)
		}
	}
	html := rep.HTML
	if html == nil { // not rendered yet: an empty report, not NULL
		html = []byte{}
	}
	if _, err := tx.ExecContext(ctx, s.d.bind(`INSERT INTO reports (id, json, html, summary, settings) VALUES (?, ?, ?, ?, ?)`),
		rec.ID, rep.JSON, html, rep.Summary, rep.Settings); err != nil {
		return Record{}, fmt.Errorf("storing reports of %s: %w", rec.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return Record{}, fmt.Errorf("storing %s: %w", rec.ID, err)
	}
	return rec, nil
}

// Get implements Store.
func (s *SQLStore) Get(ctx context.Context, id string) (Record, error) {
	return s.record(ctx, s.db, `id`, id)
}

// BySHA implements Store.
func (s *SQLStore) BySHA(ctx context.Context, sha string) (Record, error) {
	return s.record(ctx, s.db, `sha256`, sha)
}

// querier is a database or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// record returns the record whose column (id or sha256) is v, with its
// files.
func (s *SQLStore) record(ctx context.Context, q querier, column, v string) (Record, error) {
	rec, err := scanRecord(q.QueryRowContext(ctx, s.d.bind(`SELECT `+recordColumns+` FROM traces WHERE `+column+` = ?`), v))
	if err != nil {
		return Record{}, err
	}
	recs := []Record{rec}
	err = s.files(ctx, q, recs)
	return recs[0], err
}

// files reads the files of the jobs among recs into them, in one query.
func (s *SQLStore) files(ctx context.Context, q querier, recs []Record) error {
	jobs := map[string]*Record{}
	var args []any
	for i := range recs {
		if recs[i].Kind == KindJob {
			jobs[recs[i].ID] = &recs[i]
			args = append(args, recs[i].ID)
		}
	}
	if len(args) == 0 {
		return nil
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(args)), ", ")
	rows, err := q.QueryContext(ctx, s.d.bind(`SELECT job_id, name, sha256, size FROM job_files WHERE job_id IN (`+in+`) ORDER BY job_id, idx`), args...)
	if err != nil {
		return fmt.Errorf("reading the files of %d jobs: %w", len(args), err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var f File
		if err := rows.Scan(&id, &f.Name, &f.SHA256, &f.Size); err != nil {
			return fmt.Errorf("reading the files of %d jobs: %w", len(args), err)
		}
		if rec := jobs[id]; rec != nil {
			rec.Files = append(rec.Files, f)
		}
	}
	return rows.Err()
}

// Referenced implements Store.
func (s *SQLStore) Referenced(ctx context.Context, sha string) (bool, error) {
	var used bool
	err := s.db.QueryRowContext(ctx, s.d.bind(`SELECT EXISTS (SELECT 1 FROM traces WHERE sha256 = ? AND kind = 'trace')
		OR EXISTS (SELECT 1 FROM job_files WHERE sha256 = ?)`), sha, sha).Scan(&used)
	if err != nil {
		return false, fmt.Errorf("looking for blob %s: %w", sha, err)
	}
	return used, nil
}

// JSON implements Store.
func (s *SQLStore) JSON(ctx context.Context, id string) ([]byte, error) {
	return s.report(ctx, id, "json")
}

// HTML implements Store.
func (s *SQLStore) HTML(ctx context.Context, id string) ([]byte, error) {
	return s.report(ctx, id, "html")
}

// SetHTML implements Store.
func (s *SQLStore) SetHTML(ctx context.Context, id string, html []byte) error {
	res, err := s.db.ExecContext(ctx, s.d.bind(`UPDATE reports SET html = ? WHERE id = ?`), html, id)
	if err != nil {
		return fmt.Errorf("storing the HTML report of %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}

// Summary implements Store.
func (s *SQLStore) Summary(ctx context.Context, id string) ([]byte, error) {
	b, err := s.report(ctx, id, "summary")
	if err == nil && b == nil {
		return nil, ErrNoSummary
	}
	return b, err
}

// Settings implements Store.
func (s *SQLStore) Settings(ctx context.Context, id string) ([]byte, error) {
	return s.report(ctx, id, "settings")
}

func (s *SQLStore) report(ctx context.Context, id, column string) ([]byte, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, s.d.bind(`SELECT `+column+` FROM reports WHERE id = ?`), id).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return b, err
}

// List implements Store.
func (s *SQLStore) List(ctx context.Context, q ListQuery) ([]Record, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT CAST(SUM(n) AS BIGINT) FROM trace_count`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("reading the count of traces: %w", err)
	}
	limit := max(q.Limit, 1)
	var rows *sql.Rows
	var err error
	if q.Before > 0 {
		rows, err = s.db.QueryContext(ctx, s.d.bind(`SELECT `+recordColumns+` FROM traces WHERE seq < ? ORDER BY seq DESC LIMIT ?`), q.Before, limit)
	} else {
		rows, err = s.db.QueryContext(ctx, s.d.bind(`SELECT `+recordColumns+` FROM traces ORDER BY seq DESC LIMIT ? OFFSET ?`), limit, max(q.Offset, 0))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("listing traces: %w", err)
	}
	defer rows.Close()
	var recs []Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("listing traces: %w", err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("listing traces: %w", err)
	}
	rows.Close() // before the files' query: the pool may hold one connection
	if err := s.files(ctx, s.db, recs); err != nil {
		return nil, 0, err
	}
	return recs, total, nil
}

// Delete implements Store.
func (s *SQLStore) Delete(ctx context.Context, id string) (Record, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Record{}, fmt.Errorf("deleting %s: %w", id, err)
	}
	defer tx.Rollback()
	rec, err := s.record(ctx, tx, `id`, id)
	if err != nil {
		return Record{}, err
	}
	if _, err := tx.ExecContext(ctx, s.d.bind(`DELETE FROM traces WHERE id = ?`), id); err != nil {
		return Record{}, fmt.Errorf("deleting %s: %w", id, err)
	}
	return rec, tx.Commit()
}

// Ping implements Store.
func (s *SQLStore) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close implements Store.
func (s *SQLStore) Close() error {
	if s.locks != nil {
		s.locks.close()
	}
	return s.db.Close()
}

// Blobs implements Store.
func (s *SQLStore) Blobs(ctx context.Context, fn func(sha string) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT sha256 FROM traces WHERE kind = 'trace' UNION SELECT sha256 FROM job_files`)
	if err != nil {
		return fmt.Errorf("listing the blobs records hold: %w", err)
	}
	defer rows.Close()
	var shas []string
	for rows.Next() {
		var sha string
		if err := rows.Scan(&sha); err != nil {
			return fmt.Errorf("listing the blobs records hold: %w", err)
		}
		shas = append(shas, sha)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing the blobs records hold: %w", err)
	}
	rows.Close() // before fn's queries: the pool may hold one connection
	for _, sha := range shas {
		if err := fn(sha); err != nil {
			return err
		}
	}
	return nil
}

// LockContent implements SharedStore: on PostgreSQL it takes the content's
// advisory lock; on SQLite, which one server holds, it has nothing to do.
func (s *SQLStore) LockContent(ctx context.Context, sha string) (unlock func(), err error) {
	if s.locks == nil {
		return func() {}, nil
	}
	if err := s.locks.lock(ctx, sha); err != nil {
		return nil, err
	}
	return func() { s.locks.unlock(sha) }, nil
}

// TryLockContent implements SharedStore.
func (s *SQLStore) TryLockContent(ctx context.Context, sha string) (unlock func(), ok bool, err error) {
	if s.locks == nil {
		return func() {}, true, nil
	}
	if ok, err := s.locks.try(ctx, sha); !ok || err != nil {
		return nil, false, err
	}
	return func() { s.locks.unlock(sha) }, true, nil
}

// HoldRead implements SharedStore.
func (s *SQLStore) HoldRead(ctx context.Context, sha string) (release func(), err error) {
	if s.locks == nil {
		return nil, nil
	}
	if err := s.locks.read(ctx, sha); err != nil {
		return nil, err
	}
	return func() { s.locks.readLock(context.Background(), endRead, sha) }, nil
}

// TryRemoval implements SharedStore.
func (s *SQLStore) TryRemoval(ctx context.Context, sha string) (release func(), ok bool, err error) {
	if s.locks == nil {
		return func() {}, true, nil
	}
	if ok, err := s.locks.readLock(ctx, tryRemoval, sha); !ok || err != nil {
		return nil, false, err
	}
	return func() { s.locks.readLock(context.Background(), endRemoval, sha) }, true, nil
}

// ID implements Store.
func (s *SQLStore) ID(ctx context.Context) (string, error) {
	var id string
	if err := s.db.QueryRowContext(ctx, `SELECT id FROM store`).Scan(&id); err != nil {
		return "", fmt.Errorf("reading the store's id: %w", err)
	}
	return id, nil
}

// LockEpoch implements SharedStore.
func (s *SQLStore) LockEpoch() uint64 {
	if s.locks == nil {
		return 0
	}
	return s.locks.epoch.Load()
}

// Dialect names the database: "SQLite" or "PostgreSQL".
func (s *SQLStore) Dialect() string { return s.d.name }
