package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/render"
	irun "github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/serve"
	"github.com/tracegap/tracegap/internal/untrusted"
)

func init() {
	commands["serve"] = command{
		summary: "the upload service: analyse uploaded traces, serve the reports",
		run:     runServe,
	}
}

// serveDefaultMaxMemory is the memory budget analyses are admitted within
// unless --max-memory says otherwise.
const serveDefaultMaxMemory = 8 << 30

// serveOverhead is the memory the service needs beside its analyses:
// connections, the database, the runtime.
const serveOverhead = 256 << 20

// serveDefaultMaxBytes caps decompressed uploads lower than the command
// line does: a service holds several analyses in memory at once.
const serveDefaultMaxBytes = 16 << 30

type serveFlags struct {
	addr, dataDir, token string
	database, blobs      string
	checkStore           bool
	maxUpload, maxMemory sizeFlag
	maxTemp              sizeFlag
	maxParts             int
	minRate              sizeFlag
	maxAnalyses          int
	maxQueue             int
	allowHosts           []string
	upload               time.Duration
	readHeader, read     time.Duration
	write, idle, grace   time.Duration
	analysis             *analysisFlags
}

func addServeFlags(fs *pflag.FlagSet) *serveFlags {
	f := &serveFlags{maxUpload: serve.DefaultMaxUpload, maxMemory: serveDefaultMaxMemory, minRate: serve.DefaultMinUploadRate, maxTemp: serve.DefaultMaxTemp}
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to listen on (host:port; :8080 for every interface)")
	fs.StringVar(&f.dataDir, "data-dir", "./tracegap-data", "directory for uploaded files and the database; with --database and --blobs, for the uploads being received only")
	fs.StringVar(&f.database, "database", "", "postgres:// URL of the PostgreSQL database for records and reports, which several servers may share (default $TRACEGAP_DATABASE, else SQLite in the data directory)")
	fs.StringVar(&f.blobs, "blobs", "", "gs://, s3://, azblob:// or file:// URL of the directory for uploaded files, which the servers of one database share (default $TRACEGAP_BLOBS, else the data directory's blobs/)")
	fs.BoolVar(&f.checkStore, "check-store", false, "check that every record's files are stored and every stored file has a record, print what does not match, and exit (1 when something does not)")
	fs.Var(&f.maxUpload, "max-upload", "largest upload request accepted (413 above)")
	fs.Var(&f.maxTemp, "max-temp", "temporary space under the data directory's tmp/ that the uploads being received may hold together, archives' expanded traces included (507 past it)")
	intVar(fs, &f.maxParts, "max-parts", "", serve.DefaultMaxParts, "parts of one multipart upload, form fields included (413 above)")
	fs.Var(&f.maxMemory, "max-memory", "memory the analyses running at once may need, by an upper bound from each upload's size after decompression and its format; an upload waits for room, and one needing more than all of it gets 413")
	intVar(fs, &f.maxAnalyses, "max-analyses", "", runtime.NumCPU(), "uploads analysed at once (an upload is received before it takes one)")
	intVar(fs, &f.maxQueue, "max-queue", "", 4*runtime.NumCPU(), "received uploads that may wait for a slot or for memory; more get 503 with Retry-After (0: none wait)")
	fs.DurationVar(&f.upload, "upload-timeout", serve.DefaultUploadTimeout, "time allowed to receive one upload's body")
	fs.Var(&f.minRate, "min-upload-rate", fmt.Sprintf("slowest mean rate, per second, an upload may arrive at after its first %v; slower ones get 408", serve.DefaultUploadGrace))
	fs.StringSliceVar(&f.allowHosts, "allow-host", nil, "host name a request's Host may carry, besides localhost, 127.0.0.1 and ::1 when listening on loopback (repeatable; when listening elsewhere and none is given, any)")
	fs.StringVar(&f.token, "token", "", "bearer token required for uploads and deletes (default $TRACEGAP_TOKEN)")
	fs.DurationVar(&f.readHeader, "read-header-timeout", serve.DefaultReadHeaderTimeout, "time allowed to read a request's headers")
	fs.DurationVar(&f.read, "read-timeout", serve.DefaultReadTimeout, "time allowed to read a whole request, upload included")
	fs.DurationVar(&f.write, "write-timeout", serve.DefaultWriteTimeout, "time allowed from a request's headers to the end of its answer, analysis included")
	fs.DurationVar(&f.idle, "idle-timeout", serve.DefaultIdleTimeout, "how long an idle keep-alive connection stays open")
	fs.DurationVar(&f.grace, "shutdown-timeout", 10*time.Minute, "on SIGTERM/SIGINT, how long running uploads and analyses may take to finish")
	f.analysis = addAnalysisFlags(fs)
	f.analysis.maxBytes = serveDefaultMaxBytes
	fs.Lookup("max-bytes").DefValue = fmt.Sprint(int64(serveDefaultMaxBytes))
	return f
}

const serveUsage = `Usage: tracegap serve [flags]

Serves the upload API (/api/v1/...), the upload and report pages, /healthz
and /metrics over a local store, or a database and a bucket (docs/serve.md).

Examples:
  tracegap serve
  TRACEGAP_TOKEN=s3cret tracegap serve --addr :8080 --data-dir /var/lib/tracegap

Exit status: 0 after a clean shutdown, 2 bad usage or an error that stops it.

Flags:
`

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f := addServeFlags(fs)
	if status, done := parseFlags("serve", serveUsage, fs, args, stdout, stderr); done {
		return status
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracegap serve: unexpected arguments %q: serve takes only flags\n", fs.Args())
		return exitUsage
	}
	if f.checkStore {
		return f.check(stdout, stderr)
	}
	if err := f.run(fs, stderr); err != nil {
		fmt.Fprintf(stderr, "tracegap serve: %s\n", untrusted.Terminal(err.Error()))
		return exitUsage
	}
	return exitOK
}

// storeFromEnv takes --database and --blobs from the environment where the
// flags are not given: a database URL carries a password.
func (f *serveFlags) storeFromEnv() {
	if f.database == "" {
		f.database = os.Getenv("TRACEGAP_DATABASE")
	}
	if f.blobs == "" {
		f.blobs = os.Getenv("TRACEGAP_BLOBS")
	}
}

// check is --check-store: one line per blob that does not match its
// records, exit 1 when there is one, 2 when the store cannot be read.
func (f *serveFlags) check(stdout, stderr io.Writer) int {
	f.storeFromEnv()
	cfg := serve.Config{DataDir: f.dataDir, Database: f.database, Blobs: f.blobs}
	problems, err := serve.CheckStore(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(stderr, "tracegap serve: checking the store: %s\n", untrusted.Terminal(err.Error()))
		return exitUsage
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "tracegap serve: the store is not consistent: %d problems\n", len(problems))
		return exitCheck
	}
	fmt.Fprintln(stderr, "tracegap serve: the store is consistent: every record's files are stored, every stored file has a record")
	return exitOK
}

// serveConfig returns the server's configuration: the flags of fs, and
// the --config file's [analysis] settings (for those flags left alone) and
// [check] rules.
func (f *serveFlags) serveConfig(fs *pflag.FlagSet, logw io.Writer) (serve.Config, error) {
	rules, err := f.rules(fs)
	if err != nil {
		return serve.Config{}, err
	}
	opt := f.analysis.options()
	if err := f.analysis.validate(); err != nil {
		return serve.Config{}, err
	}
	if f.maxParts < 1 {
		return serve.Config{}, fmt.Errorf("invalid --max-parts %d: expected at least 1", f.maxParts)
	}
	if f.token == "" {
		f.token = os.Getenv("TRACEGAP_TOKEN")
	}
	f.storeFromEnv()
	// The server admits uploads by the engine's estimate itself (its
	// queue is bounded too), so the engine runs without a Budget.
	e := f.analysis.engine(1)
	cfg := serve.Config{
		DataDir:           f.dataDir,
		Database:          f.database,
		Blobs:             f.blobs,
		Rules:             &rules,
		MaxUpload:         int64(f.maxUpload),
		MaxTemp:           int64(f.maxTemp),
		MaxParts:          f.maxParts,
		MaxMemory:         int64(f.maxMemory),
		MaxAnalyses:       f.maxAnalyses,
		MaxQueue:          f.maxQueue,
		UploadTimeout:     f.upload,
		MinUploadRate:     int64(f.minRate),
		AllowedHosts:      allowedHosts(f.addr, f.allowHosts),
		Token:             f.token,
		ReadHeaderTimeout: f.readHeader,
		ReadTimeout:       f.read,
		WriteTimeout:      f.write,
		IdleTimeout:       f.idle,
		Log:               log.New(logw, "tracegap serve: ", log.LstdFlags),
	}
	cfg.UseEngine(e, render.Options{Top: opt.TopGaps})
	return cfg, nil
}

// loopbackHosts are the names a browser reaches a loopback listener by.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// allowedHosts returns the Host names the server accepts: the loopback
// names when it listens on loopback (a page on a rebound DNS name then
// cannot reach it), and the --allow-host ones. Nil, any host, when it
// listens elsewhere and none is given.
func allowedHosts(addr string, extra []string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return append(slices.Clone(loopbackHosts), extra...)
	}
	return extra
}

// rules applies the config file, found as every command finds it, and
// returns the rules a check applies by default: its [check] section's, as
// `tracegap check` reads them, else check's defaults; its [analysis]
// section sets the analysis flags the command line left alone.
func (f *serveFlags) rules(fs *pflag.FlagSet) (check.Rules, error) {
	var rules check.Rules
	rfs := pflag.NewFlagSet("rules", pflag.ContinueOnError)
	addRuleFlags(rfs, &rules)
	c, err := f.analysis.configFile()
	if err != nil || c == nil {
		return rules, err
	}
	if err := c.apply(rfs, map[string][]string{"check": checkKeys}); err != nil {
		return rules, err
	}
	if err := c.apply(fs, map[string][]string{"analysis": analysisKeys}); err != nil {
		return rules, err
	}
	return rules, rules.Validate()
}

// where says where the server keeps what it stores.
func (f *serveFlags) where() string {
	if f.database == "" && f.blobs == "" {
		return "data in " + f.dataDir
	}
	records, files := "records in "+f.dataDir, "files in "+f.dataDir
	if f.database != "" {
		records = "records in PostgreSQL"
	}
	if f.blobs != "" {
		files = "files in " + f.blobs
	}
	return records + ", " + files + ", uploads received in " + f.dataDir
}

// run serves until SIGINT or SIGTERM, then stops accepting connections and
// waits up to --shutdown-timeout for running requests to finish.
func (f *serveFlags) run(fs *pflag.FlagSet, stderr io.Writer) error {
	cfg, err := f.serveConfig(fs, stderr)
	if err != nil {
		return err
	}
	s, err := serve.New(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	// The collector keeps the process within the analyses' budget and the
	// service's own overhead, rather than following each trace.
	irun.FixMemoryLimit(irun.ServiceMemoryLimit(int64(f.maxMemory)) + serveOverhead)
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	hs := s.HTTPServer(f.addr)
	auth := "no token: anyone who can reach it may upload and delete"
	if cfg.Token != "" {
		auth = "uploads and deletes need the bearer token"
	}
	hosts := "any Host"
	if len(cfg.AllowedHosts) > 0 {
		hosts = "Host " + strings.Join(cfg.AllowedHosts, ", ")
	}
	fmt.Fprintf(stderr, "tracegap serve: listening on http://%s (%s; %s; %s)\n", ln.Addr(), f.where(), auth, hosts)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop() // a second signal kills at once
	fmt.Fprintf(stderr, "tracegap serve: shutting down, finishing running requests (up to %v)\n", f.grace)
	sctx, cancel := context.WithTimeout(context.Background(), f.grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
