// Package serve is the tracegap upload service: an HTTP API and a few pages
// to upload profiler traces, analyse them once, and fetch, list, compare and
// delete the reports later.
//
// Uploaded files are kept on disk, named by the SHA-256 of their bytes, so the
// same file uploaded twice is stored and analysed once. Reports and metadata
// live in an embedded SQLite database (WAL mode) next to them, behind the Store
// interface. The analysis itself is an Analyzer, a function the caller
// supplies (NewAnalyzer wires the real readers, analysis and reports; tests
// supply fakes).
package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tracegap/tracegap/internal/check"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// Upload is what an Analyzer is asked to analyse.
type Upload struct {
	// Path is the complete uploaded file on disk (plain or gzip).
	Path string
	// Name is the display name, used in error messages and reports.
	Name string
	// Format forces a reader ("chrome", "xplane"); empty means sniff.
	Format string
}

// Analyzer reads and analyses one uploaded file and renders its reports.
// Errors must be one line that names the upload (as the command line does);
// errors wrapping trace.ErrLimit are answered with 413, others with 422.
type Analyzer func(ctx context.Context, u Upload) (Reports, error)

// JobAnalyzer reads and analyses the ranks of one distributed job, uploaded
// together, as one job and renders its reports; name names the job. Its
// errors are answered as an Analyzer's.
type JobAnalyzer func(ctx context.Context, name string, ranks []Upload) (Reports, error)

// Config configures a Server. DataDir and Analyze are required.
type Config struct {
	// DataDir holds tmp/ and, unless Blobs and Database name others, the
	// blob directory blobs/ and the database tracegap.db.
	DataDir string
	// Analyze analyses uploads.
	Analyze Analyzer
	// AnalyzeJob, when set, analyses a multipart upload whose files are
	// the ranks of one job (run.LooksLikeJob) as one job, stored as one
	// record; nil stores every file as its own trace.
	AnalyzeJob JobAnalyzer
	// Rules are the rules a check applies before its query parameters
	// (nil: check.DefaultRules()).
	Rules *check.Rules
	// Database, when set, is the postgres:// URL of the PostgreSQL
	// database that keeps records and reports, which several servers may
	// share; empty keeps them in DataDir's SQLite file tracegap.db.
	Database string
	// Blobs, when set, is the gs://, s3://, azblob:// or file:// URL of
	// the directory that keeps uploaded files, which several servers may
	// share; empty keeps them in DataDir/blobs. DataDir then holds only
	// the uploads being received (tmp/), which is each server's own.
	Blobs string
	// Store overrides Database (tests, other databases).
	Store Store
	// MaxUpload caps an upload request's body (default DefaultMaxUpload).
	MaxUpload int64
	// MaxTemp caps the bytes the temporary files of all requests being
	// received hold together under DataDir/tmp, uploads and the traces
	// expanded from their archives (default DefaultMaxTemp); a write past
	// it is refused with 507. Negative: no cap.
	MaxTemp int64
	// MaxParts caps the parts of one multipart upload, form fields
	// included (default DefaultMaxParts); more are refused with 413.
	MaxParts int
	// MaxAnalyses caps the analyses running at once (default
	// runtime.NumCPU()). Uploads are received before they ask for one.
	MaxAnalyses int
	// MaxMemory caps the memory the analyses running at once are
	// estimated to need (Estimate); zero means no cap. An upload needing
	// more than all of it is answered 413.
	MaxMemory int64
	// Estimate returns the memory analysing the files together is
	// estimated to need (run.Engine.Need); nil counts every upload at 0.
	Estimate func(files []Upload) int64
	// MaxQueue uploads may wait for an analysis slot or for memory; more
	// are answered 503 with Retry-After at once. Zero means no waiting:
	// a full server answers 503 straight away, and its clients sleep out
	// Retry-After's whole seconds while slots free sooner (a quarter of
	// the throughput of scripts/loadtest.sh -unique).
	MaxQueue int
	// RenderHTML renders a stored record's HTML report the first time it
	// is asked for (the report is kept after); nil serves only the HTML
	// an Analyzer returned with the upload.
	RenderHTML HTMLRenderer
	// UploadTimeout bounds the time to receive one upload's body
	// (default DefaultUploadTimeout).
	UploadTimeout time.Duration
	// MinUploadRate, in bytes per second, is the slowest mean rate an
	// upload may arrive at once UploadGrace has passed (defaults
	// DefaultMinUploadRate and DefaultUploadGrace); negative: no minimum.
	MinUploadRate int64
	UploadGrace   time.Duration
	// AllowedHosts, when set, are the host names (without port) a request's
	// Host may carry; others are refused, which defeats DNS rebinding.
	// Empty allows any.
	AllowedHosts []string
	// Token, when set, is the bearer token POST and DELETE require.
	Token string
	// Timeouts of the http.Server that HTTPServer builds; zero values
	// take the defaults below.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes caps request headers (default 64 KiB).
	MaxHeaderBytes int
	// Log receives one line per failed request; nil discards.
	Log *log.Logger
}

// Defaults for the Config fields left at zero.
const (
	DefaultMaxUpload = 2 << 30
	// One upload of the largest size and the traces its archive expands
	// to (at most as many bytes again) fit in DefaultMaxTemp.
	DefaultMaxTemp = 2 * DefaultMaxUpload
	// DefaultMaxParts matches the traces an archive may hold.
	DefaultMaxParts          = maxArchiveTraces
	DefaultReadHeaderTimeout = 10 * time.Second
	// The read and write timeouts bound a whole request, upload and
	// analysis included: 2 GiB at 10 MB/s is under 4 minutes.
	DefaultReadTimeout    = 10 * time.Minute
	DefaultWriteTimeout   = 15 * time.Minute
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultMaxHeaderBytes = 64 << 10
	// An upload's body must arrive within DefaultUploadTimeout, at a mean
	// of DefaultMinUploadRate bytes per second once DefaultUploadGrace has
	// passed: a trickling client is cut off within seconds, a slow link
	// (256 kbit/s) is not.
	DefaultUploadTimeout = 10 * time.Minute
	DefaultMinUploadRate = 32 << 10
	DefaultUploadGrace   = 10 * time.Second
)

// Server is the upload service.
type Server struct {
	cfg     Config
	store   Store
	blobs   *blobs
	metrics *metrics
	admit   *admission
	lock    *dirLock
	mux     http.Handler

	shaMu   sync.Mutex
	shaBusy map[string]chan struct{} // uploads of one content, one at a time

	stopSweep func()
	swept     chan struct{} // closed when the start's sweep has ended

	// later runs the removals of blobs that waited for their downloads
	// (dropLater); Close waits for them.
	later struct {
		sync.Mutex
		wg     sync.WaitGroup
		closed bool
	}
}

// New opens the data directory (creating it, applying database migrations)
// and returns a Server ready to serve.
func New(cfg Config) (*Server, error) {
	if cfg.Analyze == nil {
		return nil, errors.New("serve: Config.Analyze is required")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("serve: Config.DataDir is required")
	}
	cfg.setDefaults()
	// Absolute, so that every path under it that an error names can be
	// hidden from answers (public).
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data directory %q: %w", cfg.DataDir, err)
	}
	cfg.DataDir = abs
	if err := cfg.Rules.Validate(); err != nil {
		return nil, fmt.Errorf("serve: Config.Rules: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	lock, err := lockDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	st, keep, err := openStores(context.Background(), cfg, false)
	if err != nil {
		lock.release()
		return nil, err
	}
	b, err := openBlobs(cfg.DataDir, keep, cfg.MaxTemp)
	if err != nil {
		st.Close()
		lock.release()
		return nil, err
	}
	s := &Server{
		cfg:     cfg,
		store:   st,
		blobs:   b,
		metrics: newMetrics(),
		admit:   newAdmission(cfg.MaxAnalyses, cfg.MaxMemory, cfg.MaxQueue),
		lock:    lock,
		shaBusy: map[string]chan struct{}{},
	}
	b.idle = s.dropLater
	if sh, ok := st.(SharedStore); ok {
		b.hold = sh.HoldRead
	}
	s.startSweep()
	s.routes()
	return s, nil
}

// startSweep removes, in the background, the blobs that no record holds
// (sweep): a store of millions takes a while to list, and the server
// answers meanwhile; uploads hold their contents' locks, which the sweep
// respects. Close stops it.
func (s *Server) startSweep() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopSweep, s.swept = cancel, make(chan struct{})
	go func() {
		defer close(s.swept)
		n, err := s.sweep(ctx)
		switch {
		case s.cfg.Log == nil, ctx.Err() != nil:
		case err != nil:
			s.cfg.Log.Printf("removing the blobs no record holds: %v (the next start tries again)", err)
		case n > 0:
			s.cfg.Log.Printf("removed %d blobs that no record held (left by a server stopped while storing an upload)", n)
		}
	}()
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&c.ReadTimeout, DefaultReadTimeout)
	def(&c.WriteTimeout, DefaultWriteTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	if c.MaxUpload <= 0 {
		c.MaxUpload = DefaultMaxUpload
	}
	if c.MaxTemp == 0 {
		c.MaxTemp = DefaultMaxTemp
	}
	if c.MaxParts <= 0 {
		c.MaxParts = DefaultMaxParts
	}
	if c.MaxAnalyses <= 0 {
		c.MaxAnalyses = runtime.NumCPU()
	}
	def(&c.UploadTimeout, DefaultUploadTimeout)
	def(&c.UploadGrace, DefaultUploadGrace)
	if c.MinUploadRate == 0 {
		c.MinUploadRate = DefaultMinUploadRate
	}
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.Rules == nil {
		r := check.DefaultRules()
		c.Rules = &r
	}
}

// Store returns the server's store.
func (s *Server) Store() Store { return s.store }

// Close closes the store and unlocks the data directory. Call it after
// the http.Server has shut down.
func (s *Server) Close() error {
	s.stopSweep()
	<-s.swept
	s.later.Lock()
	s.later.closed = true
	s.later.Unlock()
	s.later.wg.Wait()
	err := s.store.Close()
	if lerr := s.lock.release(); err == nil {
		err = lerr
	}
	return err
}

// Handler returns the service's routes.
func (s *Server) Handler() http.Handler { return s.instrument(s.mux) }

// HTTPServer returns an http.Server for addr with the configured timeouts and
// header cap. Stop it with Shutdown: running uploads and analyses finish.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
	}
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("POST /api/v1/traces", s.handleUpload)
	m.HandleFunc("GET /api/v1/traces", s.handleList)
	m.HandleFunc("GET /api/v1/traces/{id}", s.handleReport)
	m.HandleFunc("GET /api/v1/traces/{id}/raw", s.handleRaw)
	m.HandleFunc("GET /api/v1/traces/{id}/check", s.handleCheck)
	m.HandleFunc("DELETE /api/v1/traces/{id}", s.handleDelete)
	m.HandleFunc("GET /api/v1/compare", s.handleCompare)
	m.HandleFunc("GET /api/v1/openapi.json", s.handleOpenAPI)
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, errorf(http.StatusNotFound, "no API route %s %s", r.Method, r.URL.Path))
	})
	m.HandleFunc("GET /healthz", s.handleHealth)
	m.HandleFunc("GET /metrics", s.handleMetrics)
	m.HandleFunc("GET /{$}", s.pageIndex)
	m.HandleFunc("POST /upload", s.pageUpload)
	m.HandleFunc("GET /traces", s.pageList)
	m.HandleFunc("GET /traces/{id}", s.pageReport)
	m.HandleFunc("POST /traces/{id}/delete", s.pageDelete)
	m.HandleFunc("GET /compare", s.pageCompare)
	// Writes from another site's page (a form posted cross-origin) are
	// refused: by Sec-Fetch-Site, else by Origin against Host.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reject(w, r, errorf(http.StatusForbidden, "cross-origin %s refused: write from this server's own pages or without a browser", r.Method))
	}))
	s.mux = s.checkHost(cop.Handler(m))
}

// checkHost refuses a request whose Host is not allowed, so that a page
// on a rebound DNS name cannot reach a server listening on loopback.
func (s *Server) checkHost(h http.Handler) http.Handler {
	if len(s.cfg.AllowedHosts) == 0 {
		return h
	}
	allowed := map[string]bool{}
	for _, a := range s.cfg.AllowedHosts {
		allowed[strings.ToLower(strings.Trim(a, "[]"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !allowed[strings.ToLower(strings.Trim(host, "[]"))] {
			s.fail(w, r, errorf(http.StatusMisdirectedRequest, "host %q is not served here (the server's --allow-host)", r.Host))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status code for the metrics.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// No page of this server may be framed (clickjacking); pages set
		// a fuller policy that says the same.
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.ServeHTTP(sw, r)
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		s.metrics.status(sw.code)
	})
}

// httpError is an error with the status code it is answered with.
type httpError struct {
	status int
	msg    string
	// retryAfter, in seconds, is sent as Retry-After when set.
	retryAfter int
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) *httpError {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// statusOf returns the status code an error is answered with.
func statusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	if errors.Is(err, ErrNotFound) {
		return http.StatusNotFound
	}
	if errors.Is(err, syscall.ENOSPC) {
		return http.StatusInsufficientStorage // the disk is full
	}
	return http.StatusInternalServerError
}

// fail answers an API request with {"error": "..."} and the error's status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := statusOf(err)
	var he *httpError
	if errors.As(err, &he) && he.retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(he.retryAfter))
	}
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tracegap"`)
	}
	if code != http.StatusServiceUnavailable { // 503s are counted in /metrics, not logged
		s.logf(r, code, err)
	}
	writeJSON(w, code, map[string]string{"error": s.public(err)})
}

// logf logs a failed request as one line: the path and the error are
// escaped, so that a %0A in a URL or a name cannot forge a line.
func (s *Server) logf(r *http.Request, code int, err error) {
	if s.cfg.Log != nil {
		s.cfg.Log.Printf("%s %s: %d %s", untrusted.Log(r.Method), untrusted.Log(r.URL.Path), code, untrusted.Log(err.Error()))
	}
}

// public is err's message as a client sees it: the data directory, which
// errors from the file system name (a full disk), is not shown.
func (s *Server) public(err error) string {
	msg := err.Error()
	return strings.ReplaceAll(msg, s.cfg.DataDir, "<data-dir>")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	// Without HTML escaping, as the reports are stored: an embedded
	// report (json.RawMessage) is then sent byte for byte as stored,
	// event names with < and > included.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	b := []byte(`{"error":"encoding response"}` + "\n")
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
	} else {
		b = untrusted.JSON(buf.Bytes())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}
