package testservers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgStartTimeout bounds the wait for a new server to accept connections.
const pgStartTimeout = 60 * time.Second

// pgServer is a running PostgreSQL server that listens on a Unix socket
// in dir only, with its data in dir/data.
type pgServer struct {
	dir    string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the server has exited
	mu     sync.Mutex    // guards admin and next
	admin  *pgx.Conn     // to the postgres database, to create and drop
	force  bool          // DROP DATABASE ... WITH (FORCE) exists (13+)
	next   int           // the number in the next database's name
}

var pg struct {
	once sync.Once
	srv  *pgServer
	err  error
}

// pgBinDir finds the directory of the PostgreSQL server binaries once.
var pgBinDir = sync.OnceValue(findPostgres)

// Postgres returns the URL of a new, empty database of its own on a real
// PostgreSQL server, dropped when the test ends, such as
// postgres://postgres@/tg_3_testx?host=%2Ftmp%2Ftg-pg-1&sslmode=disable.
// The server, started on first use from the machine's binaries (initdb
// and postgres, on $PATH or in /usr/lib/postgresql/*/bin), is shared by
// the test binary's tests and listens on a Unix socket only. The test is
// skipped where the binaries are missing, and fails under CI.
func Postgres(t testing.TB) string {
	t.Helper()
	short(t, "PostgreSQL")
	bin := pgBinDir()
	if bin == "" {
		missing(t, "no PostgreSQL server binaries (initdb) found: install Debian's postgresql; .ci/run does")
	}
	pg.once.Do(func() { pg.srv, pg.err = startPostgres(bin) })
	if pg.err != nil {
		t.Fatalf("starting PostgreSQL from %s: %v", bin, pg.err)
	}
	name, err := pg.srv.create(t.Name())
	if err != nil {
		t.Fatalf("creating a test database: %v", err)
	}
	t.Cleanup(func() {
		if err := pg.srv.drop(name); err != nil {
			t.Logf("dropping the test database %s: %v", name, err)
		}
	})
	return pg.srv.dsn(name)
}

// findPostgres returns the directory that holds initdb and postgres:
// initdb's on $PATH (or where its link leads), else the highest version's
// in /usr/lib/postgresql (Debian's layout), else "".
func findPostgres() string {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
		if r, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(r))
		}
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(debian, func(a, b string) int { return pgVersion(b).Compare(pgVersion(a)) })
	for _, d := range append(dirs, debian...) {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
	}
	return ""
}

// version is a PostgreSQL major version such as 15 or 9.6.
type version [2]int

func (v version) Compare(w version) int { return slices.Compare(v[:], w[:]) }

// pgVersion reads the version from /usr/lib/postgresql/VERSION/bin.
func pgVersion(bindir string) version {
	var v version
	for i, f := range strings.SplitN(filepath.Base(filepath.Dir(bindir)), ".", 2) {
		v[i], _ = strconv.Atoi(f)
	}
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// startPostgres creates a cluster in a new temporary directory, starts its
// server and waits until it accepts connections.
func startPostgres(bin string) (*pgServer, error) {
	// Short, for the socket's path: /tmp/tg-pg-NNN/.s.PGSQL.5432.
	dir, err := os.MkdirTemp("", "tg-pg-")
	if err != nil {
		return nil, err
	}
	s := &pgServer{dir: dir, exited: make(chan struct{})}
	if err := s.start(bin); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// start runs initdb, configures the cluster, starts postgres and waits.
func (s *pgServer) start(bin string) error {
	cred, err := unprivileged()
	if err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(s.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("giving the server's directory to uid %d: %w", cred.Uid, err)
		}
	}
	data := filepath.Join(s.dir, "data")
	initdb := s.command(cred, filepath.Join(bin, "initdb"), "-D", data, "--auth=trust",
		"--username=postgres", "--encoding=UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w: %s", err, lastBytes(out, 2000))
	}
	if err := s.configure(data); err != nil {
		return err
	}
	logPath := filepath.Join(s.dir, "postgres.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close() // the server holds its own descriptor
	s.cmd = s.command(cred, filepath.Join(bin, "postgres"), "-D", data)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	dieWithParent(s.cmd.SysProcAttr, syscall.SIGQUIT) // an immediate shutdown
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	if err := s.connect(); err != nil {
		return fmt.Errorf("%w; its log ends:\n%s", err, tail(logPath, 3000))
	}
	return nil
}

// configure appends the test settings to the cluster's postgresql.conf:
// the Unix socket only, room for many pools, no waits for the disk.
func (s *pgServer) configure(data string) error {
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\n# testservers\nlisten_addresses = ''\nunix_socket_directories = '%s'\n"+
		"max_connections = 300\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n", s.dir)
	return errors.Join(err, f.Close())
}

// command returns a command that runs in the server's directory, as cred
// where it is not nil, with no PG* variables from the environment.
func (s *pgServer) command(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.Env = []string{"LC_ALL=C"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "LC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd
}

// unprivileged returns the credentials to run the server with: nil when
// this process is not root, else those of the postgres user, or nobody's
// (PostgreSQL refuses to run as root), with no supplementary groups.
func unprivileged() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		u, err = user.Lookup("nobody")
	}
	if err != nil {
		return nil, fmt.Errorf("running as root, and neither a postgres nor a nobody user to run PostgreSQL as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user %s: want numeric ids: %w", u.Username, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// connect waits until the server accepts a connection to its postgres
// database, which it then keeps to create and drop databases.
func (s *pgServer) connect() error {
	deadline := time.Now().Add(pgStartTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, s.dsn("postgres"))
		cancel()
		if err == nil {
			s.admin = conn
			s.force = majorVersion(conn.PgConn().ParameterStatus("server_version")) >= 13
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections after %v: %w", pgStartTimeout, err)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited (%v) before accepting connections", s.cmd.ProcessState)
		case <-tick.C:
		}
	}
}

// majorVersion reads 15 from "15.8 (Debian 15.8-0+deb12u1)".
func majorVersion(v string) int {
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(v)
	}
	n, _ := strconv.Atoi(v[:end])
	return n
}

// dsn returns the URL of the database name through the server's socket.
func (s *pgServer) dsn(name string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Path:     "/" + name,
		RawQuery: url.Values{"host": {s.dir}, "sslmode": {"disable"}}.Encode(),
	}
	return u.String()
}

// create creates a database with a new name made from the test's.
func (s *pgServer) create(test string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	name := dbName(s.next, test)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return name, err
}

// dbName returns tg_N_TEST: the test's name in lower case, with letters,
// digits and underscores only, cut to fit PostgreSQL's 63 bytes.
func dbName(n int, test string) string {
	name := []byte(fmt.Sprintf("tg_%d_", n))
	for _, r := range strings.ToLower(test) {
		if len(name) == 63 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			name = append(name, byte(r))
		} else {
			name = append(name, '_')
		}
	}
	return string(name)
}

// drop drops the database name, closing its connections where the server
// can (13+).
func (s *pgServer) drop(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sql := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize()
	if s.force {
		sql += " WITH (FORCE)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.admin.Exec(ctx, sql)
	return err
}

// stop closes the connection, shuts the server down (fast: open
// connections are closed) and removes its directory.
func (s *pgServer) stop() {
	if s.admin != nil {
		s.admin.Close(context.Background())
	}
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	os.RemoveAll(s.dir)
}

func stopPostgres() {
	if pg.srv != nil {
		pg.srv.stop()
		pg.srv = nil
	}
}
