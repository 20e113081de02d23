package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/report"
	"github.com/tracegap/tracegap/trace"
)

// stored is the outcome of one upload.
type stored struct {
	rec       Record
	duplicate bool
	report    []byte
}

// authorize checks the bearer token when one is configured. got is the token
// from a form field, used when the request has no Authorization header.
func (s *Server) authorize(r *http.Request, got string) error {
	if s.cfg.Token == "" {
		return nil
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return errorf(http.StatusUnauthorized, "authorization: expected a Bearer token, got scheme %q", scheme)
		}
		got = strings.TrimSpace(tok)
	}
	if got == "" {
		return errorf(http.StatusUnauthorized, "authorization required: send Authorization: Bearer <token>")
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
		return errorf(http.StatusUnauthorized, "authorization: invalid token")
	}
	return nil
}

// acquire takes an upload slot, waiting for one if the queue has room, or
// fails with 503 and a Retry-After guessed from the mean analysis time. A
// slot is taken before the body is read, so a full server refuses work
// before receiving gigabytes it cannot analyse.
func (s *Server) acquire(ctx context.Context) (release func(), err error) {
	release = func() { <-s.slots; s.metrics.slots.Add(-1) }
	select {
	case s.slots <- struct{}{}:
		s.metrics.slots.Add(1)
		return release, nil
	default:
	}
	select {
	case s.queue <- struct{}{}:
		s.metrics.queued.Add(1)
		defer func() { <-s.queue; s.metrics.queued.Add(-1) }()
		select {
		case s.slots <- struct{}{}:
			s.metrics.slots.Add(1)
			return release, nil
		case <-ctx.Done():
			return nil, errorf(http.StatusServiceUnavailable, "gave up waiting for an analysis slot: %v", ctx.Err())
		}
	default:
	}
	secs := int(math.Ceil(s.metrics.meanAnalysis().Seconds()))
	e := errorf(http.StatusServiceUnavailable, "server busy: %d analyses running and %d waiting, retry later", cap(s.slots), cap(s.queue))
	e.retryAfter = min(max(secs, 1), 60)
	return nil, e
}

// lockContent serialises uploads of the same content, so that the second of
// two simultaneous identical uploads finds the first's record instead of
// analysing again.
func (s *Server) lockContent(ctx context.Context, sha string) (unlock func(), err error) {
	for {
		s.shaMu.Lock()
		ch, busy := s.shaBusy[sha]
		if !busy {
			ch = make(chan struct{})
			s.shaBusy[sha] = ch
			s.shaMu.Unlock()
			return func() {
				s.shaMu.Lock()
				delete(s.shaBusy, sha)
				s.shaMu.Unlock()
				close(ch)
			}, nil
		}
		s.shaMu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ingest receives one file from r, and stores and analyses it unless its
// content is already stored. Nothing is left on disk when it fails.
func (s *Server) ingest(ctx context.Context, r io.Reader, name, format string) (stored, error) {
	tmp, sha, size, err := s.receive(r, name)
	if err != nil {
		return stored{}, err
	}
	defer os.Remove(tmp) // a no-op once committed
	unlock, err := s.lockContent(ctx, sha)
	if err != nil {
		return stored{}, errorf(http.StatusBadRequest, "%s: upload abandoned: %v", name, err)
	}
	defer unlock()
	if rec, err := s.store.BySHA(ctx, sha); err == nil {
		return s.duplicate(ctx, rec, tmp)
	} else if !errors.Is(err, ErrNotFound) {
		return stored{}, err
	}
	rep, err := s.analyze(ctx, Upload{Path: tmp, Name: name, Format: format})
	if err != nil {
		return stored{}, err
	}
	rec := Record{ID: sha[:IDLen], SHA256: sha, Name: name, Size: size, Created: time.Now().UTC()}
	if err := summarize(rep.JSON, &rec); err != nil {
		return stored{}, err
	}
	if err := s.blobs.commit(tmp, sha); err != nil {
		return stored{}, err
	}
	rec, err = s.store.Put(ctx, rec, rep)
	if errors.Is(err, ErrExists) { // stored meanwhile by another server on this store
		return s.duplicate(ctx, rec, "")
	}
	if err != nil {
		s.blobs.remove(sha)
		return stored{}, err
	}
	s.metrics.uploads.Add(1)
	return stored{rec: rec, report: rep.JSON}, nil
}

// receive streams r into a temporary file, hashing it on the way.
func (s *Server) receive(r io.Reader, name string) (tmp, sha string, size int64, err error) {
	f, err := s.blobs.create()
	if err != nil {
		return "", "", 0, err
	}
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(f, h), r)
	s.metrics.bytes.Add(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && size == 0 {
		err = errorf(http.StatusBadRequest, "%s: empty file, expected a trace (%s)", name, trace.FormatTitles())
	}
	if err != nil {
		os.Remove(f.Name())
		return "", "", 0, s.receiveError(err, name, size)
	}
	return f.Name(), hex.EncodeToString(h.Sum(nil)), size, nil
}

func (s *Server) receiveError(err error, name string, size int64) error {
	var he *httpError
	var mb *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &mb):
		return errorf(http.StatusRequestEntityTooLarge, "%s: upload larger than %d bytes (the server's --max-upload)", name, mb.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		return errorf(http.StatusRequestTimeout, "%s: upload timed out after %d bytes", name, size)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "%s: upload cut off after %d bytes", name, size)
	}
	return fmt.Errorf("%s: receiving upload after %d bytes: %w", name, size, err)
}

// duplicate answers an upload whose content is stored as rec. tmp, if set, is
// the new copy, used to restore a blob lost from disk.
func (s *Server) duplicate(ctx context.Context, rec Record, tmp string) (stored, error) {
	if tmp != "" {
		if _, err := os.Stat(s.blobs.path(rec.SHA256)); errors.Is(err, os.ErrNotExist) {
			s.blobs.commit(tmp, rec.SHA256)
		}
	}
	rep, err := s.store.JSON(ctx, rec.ID)
	if err != nil {
		return stored{}, err
	}
	s.metrics.duplicates.Add(1)
	return stored{rec: rec, duplicate: true, report: rep}, nil
}

// analyze runs the Analyzer and turns its errors into HTTP errors. A panic
// in the Analyzer fails this upload alone, with 500: the server goes on.
func (s *Server) analyze(ctx context.Context, u Upload) (Reports, error) {
	s.metrics.inFlight.Add(1)
	start := time.Now()
	var rep Reports
	err := run.Protect("analysing", func() error {
		var err error
		rep, err = s.cfg.Analyze(ctx, u)
		return err
	})
	s.metrics.analysis(time.Since(start), err != nil)
	s.metrics.inFlight.Add(-1)
	var pe *run.PanicError
	switch {
	case err == nil:
		return rep, nil
	case errors.As(err, &pe):
		if s.cfg.Log != nil {
			s.cfg.Log.Printf("%s: %v\n%s", u.Name, pe, pe.Stack)
		}
		return Reports{}, errorf(http.StatusInternalServerError, "%s", oneLine(run.Named(u.Name, err).Error()))
	case errors.Is(err, trace.ErrLimit):
		return Reports{}, errorf(http.StatusRequestEntityTooLarge, "%s", oneLine(err.Error()))
	case ctx.Err() != nil:
		return Reports{}, errorf(http.StatusBadRequest, "%s: upload abandoned by the client: %v", u.Name, ctx.Err())
	}
	return Reports{}, errorf(http.StatusUnprocessableEntity, "%s", oneLine(err.Error()))
}

// summarize copies the report's verdict, confidence and format into rec.
func summarize(js []byte, rec *Record) error {
	var v report.Report
	if err := json.Unmarshal(js, &v); err != nil {
		return fmt.Errorf("%s: the analysis produced an unreadable report: %w", rec.Name, err)
	}
	rec.Verdict, rec.Confidence, rec.Format = v.Verdict, v.Confidence, v.Source.Format
	return nil
}

// cleanName makes a display name safe to store and show: one line, no
// control characters, at most 200 bytes.
func cleanName(s, fallback string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	if s == "" {
		return fallback
	}
	return s
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// formatParam returns the format that ?format= forces: empty, or the name
// of a registered one.
func formatParam(r *http.Request) (string, error) {
	f := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("format")))
	if f == "" {
		return "", nil
	}
	if _, err := trace.LookupFormat(f); err != nil {
		return "", errorf(http.StatusBadRequest, "%v", err)
	}
	return f, nil
}
