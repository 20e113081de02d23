package testservers_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tracegap/tracegap/internal/testservers"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testservers.Stop()
	os.Exit(code)
}

// connect opens a connection to dsn, closed when the test ends.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connecting to %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestPostgresDSN checks the URL names a Unix socket's directory, the
// postgres user and a database of the test's own, as pgx reads it.
func TestPostgresDSN(t *testing.T) {
	dsn := testservers.Postgres(t)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgx cannot parse %s: %v", dsn, err)
	}
	if !filepath.IsAbs(cfg.Host) || len(cfg.Host) > 90 {
		t.Errorf("%s: host %q, want a short absolute directory (a Unix socket's)", dsn, cfg.Host)
	}
	if _, err := os.Stat(filepath.Join(cfg.Host, ".s.PGSQL.5432")); err != nil {
		t.Errorf("%s: no socket in the host directory: %v", dsn, err)
	}
	if cfg.User != "postgres" || cfg.Database == "postgres" || cfg.Database == "" {
		t.Errorf("%s: user %q, database %q; want postgres and a new database", dsn, cfg.User, cfg.Database)
	}
	var db string
	if err := connect(t, dsn).QueryRow(context.Background(), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if db != cfg.Database {
		t.Errorf("connected to database %q, want %q", db, cfg.Database)
	}
}

// TestPostgresSeparate checks two calls give two empty databases: a
// table made and filled in one is absent from the other.
func TestPostgresSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := testservers.Postgres(t), testservers.Postgres(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	ca, cb := connect(t, a), connect(t, b)
	if _, err := ca.Exec(ctx, "CREATE TABLE uploads (id int PRIMARY KEY); INSERT INTO uploads VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := ca.QueryRow(ctx, "SELECT count(*) FROM uploads").Scan(&n); err != nil || n != 2 {
		t.Errorf("the table holds %d rows (%v), want 2", n, err)
	}
	for _, c := range []*pgx.Conn{cb, connect(t, testservers.Postgres(t))} {
		var exists bool
		if err := c.QueryRow(ctx, "SELECT to_regclass('uploads') IS NOT NULL").Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if exists {
			t.Errorf("%s sees the table made in %s", c.Config().Database, ca.Config().Database)
		}
	}
}

// TestPostgresDropped checks a test's database is gone once it ends,
// even with a connection still open.
func TestPostgresDropped(t *testing.T) {
	var dsn string
	var open *pgx.Conn // still open at the drop: WITH (FORCE) ends it
	t.Run("uses", func(t *testing.T) {
		dsn = testservers.Postgres(t)
		var err error
		if open, err = pgx.Connect(context.Background(), dsn); err != nil {
			t.Fatal(err)
		}
	})
	if open != nil {
		defer open.Close(context.Background())
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	other := connect(t, testservers.Postgres(t))
	var exists bool
	if err := other.QueryRow(context.Background(), "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", cfg.Database).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s outlived its test", cfg.Database)
	}
}

// TestPostgresParallel checks parallel tests each get a database of their
// own, and can use it.
func TestPostgresParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers: skipped under -short, as its subtests are")
	}
	names := make([]string, 8)
	t.Run("group", func(t *testing.T) {
		for i := range names {
			t.Run("", func(t *testing.T) {
				t.Parallel()
				c := connect(t, testservers.Postgres(t))
				if _, err := c.Exec(context.Background(), "CREATE TABLE t (id int)"); err != nil {
					t.Fatal(err)
				}
				names[i] = c.Config().Database
			})
		}
	})
	slices.Sort(names)
	if len(slices.Compact(names)) != len(names) || names[0] == "" {
		t.Errorf("parallel tests' databases: %q, want %d different names", names, len(names))
	}
}

// store is what the object-storage servers have in common.
type store interface {
	Bucket(t testing.TB, name string)
	Upload(t testing.TB, bucket, key, path string)
	Keys(t testing.TB, bucket, prefix string) []string
	Env() []string
}

// TestStores checks a bucket made on each object store can be written
// and listed, and that the environment given to a child process names
// the server.
func TestStores(t *testing.T) {
	for _, c := range []struct {
		name string
		get  func(testing.TB) store
		want func(store) string // a variable Env must hold
	}{
		{"s3", func(t testing.TB) store { return testservers.S3(t) }, func(s store) string { return "AWS_ENDPOINT_URL=" + s.(*testservers.S3Server).Endpoint }},
		{"gcs", func(t testing.TB) store { return testservers.GCS(t) }, func(s store) string { return "STORAGE_EMULATOR_HOST=" + s.(*testservers.GCSServer).Host }},
		{"azure", func(t testing.TB) store { return testservers.Azure(t) }, func(s store) string { return "AZURE_STORAGE_DOMAIN=" + s.(*testservers.AzureServer).Host }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.get(t)
			s.Bucket(t, "testservers")
			file := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"b/2", "a/1", "b/1"} {
				s.Upload(t, "testservers", k, file)
			}
			if got := s.Keys(t, "testservers", "b/"); !slices.Equal(got, []string{"b/1", "b/2"}) {
				t.Errorf("keys under b/: %q, want b/1 and b/2", got)
			}
			if env := s.Env(); !slices.Contains(env, c.want(s)) {
				t.Errorf("Env() = %q: want %s", env, c.want(s))
			}
		})
	}
}
