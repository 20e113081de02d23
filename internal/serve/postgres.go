package serve

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// postgresMigrations build the PostgreSQL schema, as sqliteMigrations do
// SQLite's; the first is the shape SQLite's reached at its version 5, the
// second its version 6, the third its version 7.
// Never edit a released migration; append.
var postgresMigrations = []string{
	`CREATE TABLE traces (
		seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id         TEXT NOT NULL UNIQUE,
		kind       TEXT NOT NULL DEFAULT 'trace',
		sha256     TEXT NOT NULL UNIQUE,
		name       TEXT NOT NULL,
		size       BIGINT NOT NULL,
		format     TEXT NOT NULL,
		verdict    TEXT NOT NULL,
		confidence TEXT NOT NULL,
		created_ns BIGINT NOT NULL
	);
	CREATE TABLE reports (
		id       TEXT PRIMARY KEY REFERENCES traces(id) ON DELETE CASCADE,
		json     BYTEA NOT NULL,
		html     BYTEA NOT NULL,
		summary  BYTEA,
		settings BYTEA
	);
	CREATE TABLE job_files (
		job_id TEXT NOT NULL REFERENCES traces(id) ON DELETE CASCADE,
		idx    INTEGER NOT NULL,
		name   TEXT NOT NULL,
		sha256 TEXT NOT NULL,
		size   BIGINT NOT NULL,
		PRIMARY KEY (job_id, idx)
	);
	CREATE INDEX job_files_sha256 ON job_files(sha256);`,
	// The store's id, as SQLite's migration 6.
	`CREATE TABLE store (id TEXT NOT NULL);
	INSERT INTO store (id) VALUES (replace(gen_random_uuid()::text, '-', ''));`,
	// The count of records, as SQLite's migration 7, over 16 rows (a
	// record counts in the row of its seq modulo 16), so that uploads
	// stored at once by several servers seldom wait for one row's lock.
	// The lock on traces keeps records from being written between the
	// count and the triggers.
	`LOCK TABLE traces IN SHARE ROW EXCLUSIVE MODE;
	CREATE TABLE trace_count (slot INTEGER PRIMARY KEY, n BIGINT NOT NULL);
	INSERT INTO trace_count (slot, n) SELECT s, 0 FROM generate_series(0, 15) s;
	UPDATE trace_count SET n = (SELECT COUNT(*) FROM traces) WHERE slot = 0;
	CREATE FUNCTION traces_count() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF TG_OP = 'INSERT' THEN
			UPDATE trace_count SET n = n + 1 WHERE slot = NEW.seq % 16;
		ELSE
			UPDATE trace_count SET n = n - 1 WHERE slot = OLD.seq % 16;
		END IF;
		RETURN NULL;
	END $$;
	CREATE TRIGGER traces_counted AFTER INSERT OR DELETE ON traces
		FOR EACH ROW EXECUTE FUNCTION traces_count();`,
}

// migrationLock is the advisory lock the migrations run under: a key of
// the two-integer form, which content locks (one bigint) never take; any
// number, the same in every build ("tgap" in ASCII).
const migrationLock = 0x74676170

var postgres = dialect{
	name:       "PostgreSQL",
	migrations: postgresMigrations,
	lock:       `SELECT pg_advisory_xact_lock(` + strconv.Itoa(migrationLock) + `, 0)`,
	bind:       dollars,
}

// dollars numbers a query's ? placeholders as PostgreSQL's $1, $2, ...
// The queries here hold no ? in a string literal.
func dollars(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// IsPostgresURL reports whether dsn names a PostgreSQL database: a
// postgres:// or postgresql:// URL.
func IsPostgresURL(dsn string) bool {
	scheme, _, ok := strings.Cut(dsn, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// OpenPostgres connects to the PostgreSQL database dsn (a postgres:// URL)
// and brings its schema up to date, once however many servers start
// together. Errors name the database without its password.
func OpenPostgres(ctx context.Context, dsn string) (*SQLStore, error) {
	return openPostgres(ctx, dsn, true)
}

// openPostgres is OpenPostgres, migrating the schema only when migrate is
// set (see SQLStore.prepare).
func openPostgres(ctx context.Context, dsn string, migrate bool) (*SQLStore, error) {
	where := redactURL(dsn)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", where, err)
	}
	// Uploads hold no connection while they wait or are analysed; these
	// bound the connections of one server.
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", where, err)
	}
	s := &SQLStore{db: db, d: postgres, locks: &pgLocks{db: db}}
	if err := s.prepare(ctx, migrate); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", where, err)
	}
	return s, nil
}

// redactURL returns the database URL dsn with its passwords hidden, in
// its user part and in its query, for messages; what is not a URL with a
// scheme is not repeated at all.
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return "(the database setting, not repeated: it is not a URL)"
	}
	q := u.Query()
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
		}
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}

// pgLocks holds PostgreSQL advisory locks on contents, one per SHA-256,
// for the servers sharing a database: the second server to receive a
// content waits until the first has stored it, then finds its record, so
// that no content is analysed twice. The locks are taken on one
// connection of their own, so that uploads waiting for one hold no
// connection; PostgreSQL drops them when the connection closes, however
// the server dies.
type pgLocks struct {
	db   *sql.DB
	mu   sync.Mutex
	conn *sql.Conn
	// epoch counts the lock connections lost: the locks held on one are
	// gone with it, which those holding them learn by the epoch's change
	// (SharedStore.LockEpoch).
	epoch atomic.Uint64
}

// lockKey is the advisory lock key of a content: the first 64 bits of its
// SHA-256.
func lockKey(sha string) int64 {
	b, err := hex.DecodeString(sha[:min(len(sha), 16)])
	if err != nil || len(b) < 8 {
		b = append(b, make([]byte, 8)...)
	}
	return int64(binary.BigEndian.Uint64(b[:8]))
}

// readKey is the advisory lock key, of the two-integer form, that the
// servers reading the blob of a content hold shared (pgLocks.reads): apart
// from the content's own lock, a bigint, which uploads hold.
func readKey(sha string) (hi, lo int32) {
	k := lockKey(sha)
	return int32(k >> 32), int32(k)
}

// The queries on a blob's read lock: a read holds it shared; a removal
// takes it alone, which it can while no other server reads.
const (
	tryRead       = `SELECT pg_try_advisory_lock_shared($1, $2)`
	endRead       = `SELECT pg_advisory_unlock_shared($1, $2)`
	tryRemoval    = `SELECT pg_try_advisory_lock($1, $2)`
	endRemoval    = `SELECT pg_advisory_unlock($1, $2)`
	maxLockPoll   = 250 * time.Millisecond
	firstLockPoll = 10 * time.Millisecond
)

// readLock runs one of the read lock's queries for sha, as try does.
func (l *pgLocks) readLock(ctx context.Context, query, sha string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	hi, lo := readKey(sha)
	var ok bool
	err := l.do(ctx, func(c *sql.Conn) error {
		return c.QueryRowContext(ctx, query, hi, lo).Scan(&ok)
	})
	return ok, err
}

// read holds the read lock of sha shared, waiting (as lock does) while
// another server removes the blob.
func (l *pgLocks) read(ctx context.Context, sha string) error {
	return poll(ctx, func() (bool, error) { return l.readLock(ctx, tryRead, sha) })
}

// poll calls try until it succeeds or fails, from 10 ms to 250 ms apart.
func poll(ctx context.Context, try func() (bool, error)) error {
	wait := firstLockPoll
	for {
		ok, err := try()
		if ok || err != nil {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, maxLockPoll)
	}
}

// try takes the lock of sha if no other server holds it. The query is not
// cancelled with ctx: a query cut short would cost the connection, and the
// locks the other uploads hold on it.
func (l *pgLocks) try(ctx context.Context, sha string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var ok bool
	err := l.do(ctx, func(c *sql.Conn) error {
		return c.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey(sha)).Scan(&ok)
	})
	return ok, err
}

// lock takes the lock of sha, waiting (polling, from 10 ms to 250 ms
// apart) while another server holds it.
func (l *pgLocks) lock(ctx context.Context, sha string) error {
	return poll(ctx, func() (bool, error) { return l.try(ctx, sha) })
}

// unlock releases the lock of sha. A lock lost with its connection is
// gone already.
func (l *pgLocks) unlock(sha string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l.do(ctx, func(c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, lockKey(sha))
		return err
	})
}

// do runs f on the locks' connection, opening it first, and drops the
// connection when f fails, so that the next call opens another.
func (l *pgLocks) do(ctx context.Context, f func(*sql.Conn) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		c, err := l.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("opening the lock connection: %w", err)
		}
		l.conn = c
	}
	if err := f(l.conn); err != nil {
		l.conn.Close()
		l.conn = nil
		l.epoch.Add(1)
		return fmt.Errorf("content lock: %w", err)
	}
	return nil
}

func (l *pgLocks) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
}
