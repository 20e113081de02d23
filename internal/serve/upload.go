package serve

import (
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/internal/untrusted"
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

// acquire admits the analysis of files, by their estimated memory and an
// analysis slot, waiting in the queue if it has room, or fails with 503
// and a Retry-After guessed from the mean analysis time. It is asked only
// once the files are received and the token checked: neither a slow
// client nor an unauthorised one holds what an analysis needs.
func (s *Server) acquire(ctx context.Context, name string, files []Upload) (release func(), err error) {
	var need int64
	if s.cfg.Estimate != nil {
		need = s.cfg.Estimate(files)
	}
	release, err = s.admit.acquire(ctx, need)
	switch {
	case err == nil:
		return release, nil
	case err == errBusy:
		secs := int(math.Ceil(s.metrics.meanAnalysis().Seconds()))
		e := s.busy(need)
		e.retryAfter = min(max(secs, 1), 60)
		return nil, e
	case ctx.Err() != nil:
		return nil, errorf(http.StatusServiceUnavailable, "%s: gave up waiting for an analysis slot: %v", name, ctx.Err())
	}
	return nil, errorf(statusOf(err), "%s: %v", name, err)
}

// busy is the 503 of an upload needing need bytes of the memory budget
// that finds the slots, the budget and the queue full: it says what is
// taken of each, by estimate (the memory reserved is not memory in use).
func (s *Server) busy(need int64) *httpError {
	running, used, waiting := s.admit.state()
	mem := "no memory budget"
	if s.cfg.MaxMemory > 0 {
		mem = fmt.Sprintf("%s of the %s memory budget (--max-memory) reserved by upper bounds, %s more needed", humanSize(used), humanSize(s.cfg.MaxMemory), humanSize(need))
	}
	return errorf(http.StatusServiceUnavailable, "server busy: %d of %d analyses running (--max-analyses), %s, %d of %d waiting (--max-queue), retry later",
		running, s.cfg.MaxAnalyses, mem, waiting, s.cfg.MaxQueue)
}

// lockContent serialises uploads of the same content, so that the second of
// two simultaneous identical uploads finds the first's record instead of
// analysing again: among this server's requests, then, on a SharedStore,
// across the servers sharing it.
func (s *Server) lockContent(ctx context.Context, sha string) (unlock func(), err error) {
	for {
		ch, mine := s.claim(sha)
		if mine {
			unlock, _, err := s.lockShared(ctx, sha, ch, true)
			return unlock, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// lockError answers a request for what whose content's lock could not be
// taken: its client left while it waited, or the database failed (said in
// the log, not to the client).
func (s *Server) lockError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return errorf(http.StatusBadRequest, "%s: abandoned by the client: %v", what, err)
	}
	if s.cfg.Log != nil {
		s.cfg.Log.Printf("%s: %s", untrusted.Log(what), untrusted.Log(err.Error()))
	}
	return errorf(http.StatusServiceUnavailable, "%s: the database did not answer: retry later", what)
}

// tryLockContent is lockContent without waiting: ok is false while an
// upload of sha holds its lock, here or on another server.
func (s *Server) tryLockContent(ctx context.Context, sha string) (unlock func(), ok bool, err error) {
	ch, mine := s.claim(sha)
	if !mine {
		return nil, false, nil
	}
	return s.lockShared(ctx, sha, ch, false)
}

// claim takes this server's lock of sha if it is free (mine); otherwise
// ch is closed when it is released.
func (s *Server) claim(sha string) (ch chan struct{}, mine bool) {
	s.shaMu.Lock()
	defer s.shaMu.Unlock()
	if ch, busy := s.shaBusy[sha]; busy {
		return ch, false
	}
	ch = make(chan struct{})
	s.shaBusy[sha] = ch
	return ch, true
}

func (s *Server) unclaim(sha string, ch chan struct{}) {
	s.shaMu.Lock()
	delete(s.shaBusy, sha)
	s.shaMu.Unlock()
	close(ch)
}

// lockShared takes the shared store's lock of sha, this server's being
// held (ch), waiting for it when wait is set; ok is false when it was not
// waited for and another server holds it. Unless ok, this server's lock is
// released.
func (s *Server) lockShared(ctx context.Context, sha string, ch chan struct{}, wait bool) (unlock func(), ok bool, err error) {
	sh, shared := s.store.(SharedStore)
	if !shared {
		return func() { s.unclaim(sha, ch) }, true, nil
	}
	var u func()
	if wait {
		u, err = sh.LockContent(ctx, sha)
		ok = err == nil
	} else {
		u, ok, err = sh.TryLockContent(ctx, sha)
	}
	if !ok || err != nil {
		s.unclaim(sha, ch)
		return nil, false, err
	}
	return func() { u(); s.unclaim(sha, ch) }, true, nil
}

// received is one file received in full into a temporary file, not yet
// stored.
type received struct {
	tmp, sha, name string
	size           int64
}

// ingest stores and analyses a received file unless its content is already
// stored. Nothing is left in blobs/ when it fails.
func (s *Server) ingest(ctx context.Context, f received, format string) (stored, error) {
	epoch := s.lockEpoch()
	unlock, err := s.lockContent(ctx, f.sha)
	if err != nil {
		return stored{}, s.lockError(ctx, f.name, err)
	}
	defer unlock()
	if rec, err := s.store.BySHA(ctx, f.sha); err == nil {
		return s.duplicate(ctx, rec, []received{f})
	} else if !errors.Is(err, ErrNotFound) {
		return stored{}, err
	}
	u := Upload{Path: f.tmp, Name: f.name, Format: format}
	rep, err := s.analyze(ctx, f.name, []Upload{u}, func() (Reports, error) { return s.cfg.Analyze(ctx, u) })
	if err != nil {
		return stored{}, err
	}
	rec := Record{ID: f.sha[:IDLen], Kind: KindTrace, SHA256: f.sha, Name: f.name, Size: f.size, Created: time.Now().UTC()}
	return s.keep(ctx, rec, rep, []received{f}, epoch)
}

// ingestJob stores and analyses received files, the ranks of one job named
// name, as one job unless the same ranks are already stored as one.
func (s *Server) ingestJob(ctx context.Context, name string, files []received, format string) (stored, error) {
	rec := Record{Kind: KindJob, SHA256: jobSHA(files), Name: name, Created: time.Now().UTC()}
	rec.ID = rec.SHA256[:IDLen]
	epoch := s.lockEpoch()
	unlock, err := s.lockContent(ctx, rec.SHA256)
	if err != nil {
		return stored{}, s.lockError(ctx, name, err)
	}
	defer unlock()
	if old, err := s.store.BySHA(ctx, rec.SHA256); err == nil {
		return s.duplicate(ctx, old, files)
	} else if !errors.Is(err, ErrNotFound) {
		return stored{}, err
	}
	ranks := make([]Upload, len(files))
	for i, f := range files {
		// Named as the command line names the files of a directory.
		ranks[i] = Upload{Path: f.tmp, Name: path.Join(name, f.name), Format: format}
		rec.Files = append(rec.Files, File{Name: f.name, SHA256: f.sha, Size: f.size})
		rec.Size += f.size
	}
	rep, err := s.analyze(ctx, name, ranks, func() (Reports, error) { return s.cfg.AnalyzeJob(ctx, name, ranks) })
	if err != nil {
		return stored{}, err
	}
	// A rank's blob may be another record's too: hold it while storing.
	unlockRanks, err := s.lockAll(ctx, rec.blobSHAs())
	if err != nil {
		return stored{}, s.lockError(ctx, name, err)
	}
	defer unlockRanks()
	return s.keep(ctx, rec, rep, files, epoch)
}

// jobSHA is the hex SHA-256 of a job's ranks' SHA-256s, sorted: the same
// ranks make the same job, in whatever order they were uploaded.
func jobSHA(files []received) string {
	shas := make([]string, len(files))
	for i, f := range files {
		shas[i] = f.sha
	}
	slices.Sort(shas)
	h := sha256.Sum256([]byte(strings.Join(shas, "\n")))
	return hex.EncodeToString(h[:])
}

// keep moves a new record's files into blobs/ and stores the record with
// its reports. The caller holds the locks of the record's content and of
// its files' blobs, taken in the lock epoch given.
func (s *Server) keep(ctx context.Context, rec Record, rep Reports, files []received, epoch uint64) (stored, error) {
	rec.Verdict, rec.Confidence, rec.Format = rep.Verdict, rep.Confidence, rep.Format
	drop := func(files []received) {
		for _, f := range files {
			s.dropBlob(ctx, f.sha, epoch)
		}
	}
	for i, f := range files {
		if err := s.blobs.commit(ctx, f.tmp, f.sha); err != nil {
			drop(files[:i])
			return stored{}, err
		}
	}
	rec, err := s.store.Put(ctx, rec, rep)
	if errors.Is(err, ErrExists) { // stored meanwhile by another server on this store
		return s.duplicate(ctx, rec, nil)
	}
	if err != nil {
		drop(files)
		return stored{}, err
	}
	if err := s.stillWhole(ctx, rec, epoch); err != nil {
		return stored{}, err
	}
	s.metrics.uploads.Add(1)
	return stored{rec: rec, report: rep.JSON}, nil
}

// stillWhole checks, when the locks taken in epoch may have been lost
// since, that the record just stored has all its blobs: another server,
// deleting a record that shared one, may have removed it meanwhile. A
// record that lacks one is taken back, and the upload fails, to be sent
// again.
func (s *Server) stillWhole(ctx context.Context, rec Record, epoch uint64) error {
	if s.lockEpoch() == epoch {
		return nil
	}
	for _, sha := range rec.blobSHAs() {
		if ok, err := s.blobs.keep.exists(ctx, sha); err != nil || !ok {
			s.store.Delete(ctx, rec.ID)
			return errorf(http.StatusServiceUnavailable, "%s: the server lost its connection to the database while storing the upload, and file %s with it: send the upload again", rec.Name, sha)
		}
	}
	return nil
}

// lockEpoch is the store's LockEpoch: 0 for a store that one server holds.
func (s *Server) lockEpoch() uint64 {
	if sh, ok := s.store.(SharedStore); ok {
		return sh.LockEpoch()
	}
	return 0
}

// dropBlob removes the blob sha unless a record still holds it. The caller
// holds the blob's lock, taken in epoch: if the locks may have been lost
// since, an upload elsewhere may be storing the blob, and it is left, for
// the sweep of a later start to remove if no record holds it then. A blob
// that this server is reading (a download) is removed once the reads have
// ended (dropLater).
func (s *Server) dropBlob(ctx context.Context, sha string, epoch uint64) error {
	used, err := s.store.Referenced(ctx, sha)
	if err != nil || used || s.lockEpoch() != epoch {
		return err
	}
	_, err = s.removeBlob(ctx, sha)
	return err
}

// removeBlob removes the blob sha, which no record holds, under its
// content's lock, and reports whether it did. It leaves a blob that a
// download reads: on another server sharing the store, which removes it
// once its reads end (dropLater), or on this one (blobs.remove).
func (s *Server) removeBlob(ctx context.Context, sha string) (bool, error) {
	if sh, ok := s.store.(SharedStore); ok {
		release, ok, err := sh.TryRemoval(ctx, sha)
		if !ok || err != nil {
			return false, err
		}
		defer release()
	}
	deferred, err := s.blobs.remove(ctx, sha)
	return !deferred && err == nil, err
}

// dropLater is dropBlob, in the background under the blob's lock, for a
// blob whose removal may have waited for the reads of it here to end
// (blobs.idle). A removal that fails, or comes after Close, leaves the
// blob to the sweep of a later start.
func (s *Server) dropLater(sha string) {
	s.later.Lock()
	defer s.later.Unlock()
	if s.later.closed {
		return
	}
	s.later.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		used, err := s.store.Referenced(ctx, sha) // mostly: no lock to take
		if used {
			return
		}
		epoch := s.lockEpoch()
		var unlock func()
		if err == nil {
			unlock, err = s.lockContent(ctx, sha)
		}
		if err == nil {
			err = s.dropBlob(ctx, sha, epoch)
			unlock()
		}
		if err != nil && s.cfg.Log != nil {
			s.cfg.Log.Printf("removing blob %s once its downloads ended: %v (the next start removes it)", sha, err)
		}
	})
}

// lockAll takes the locks of every content in shas, in sorted order so that
// two callers never wait on each other.
func (s *Server) lockAll(ctx context.Context, shas []string) (unlock func(), err error) {
	shas = slices.Compact(slices.Sorted(slices.Values(shas)))
	var unlocks []func()
	unlock = func() {
		for _, u := range slices.Backward(unlocks) {
			u()
		}
	}
	for _, sha := range shas {
		u, err := s.lockContent(ctx, sha)
		if err != nil {
			unlock()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return unlock, nil
}

// receiveUpload is receive for a file read from the request: the bytes it
// read are counted in the metrics as uploaded, whether it was received
// whole or not. A trace taken from an archive is received with receive:
// its bytes were counted as the archive's.
func (s *Server) receiveUpload(r io.Reader, name string) (received, error) {
	f, err := s.receive(r, name)
	s.metrics.bytes.Add(f.size)
	return f, err
}

// receive streams r into a temporary file, hashing it on the way. The
// caller removes the file (a no-op once it is committed). On error the
// file is gone, and the result holds only the size: the bytes read from r,
// which a failed write to the disk leaves more than the bytes written.
func (s *Server) receive(r io.Reader, name string) (received, error) {
	f, err := s.blobs.create()
	if err != nil {
		return received{}, err
	}
	h := sha256.New()
	src := &counting{r: r}
	_, err = io.Copy(io.MultiWriter(s.blobs.quota(f, name), h), src)
	size := src.n
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && size == 0 {
		err = errorf(http.StatusBadRequest, "%s: empty file, expected a trace (%s)", name, formats.Titles())
	}
	if err != nil {
		s.blobs.drop(f.Name())
		return received{size: size}, s.receiveError(err, name, size)
	}
	return received{tmp: f.Name(), sha: hex.EncodeToString(h.Sum(nil)), name: name, size: size}, nil
}

// counting counts the bytes read through it.
type counting struct {
	r io.Reader
	n int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
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
		return errorf(http.StatusRequestTimeout, "%s: upload timed out after %d bytes: it came slower than %s/s (the server's --min-upload-rate) or took longer than %v (--upload-timeout)",
			name, size, humanSize(s.cfg.MinUploadRate), s.cfg.UploadTimeout)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "%s: upload cut off after %d bytes", name, size)
	case errors.As(err, new(flate.CorruptInputError)), errors.Is(err, gzip.ErrChecksum):
		// Only a gzipped archive is decompressed on receiving.
		return errorf(http.StatusBadRequest, "%s: corrupt gzip data after %d bytes: %v", name, size, err)
	}
	return fmt.Errorf("%s: receiving upload after %d bytes: %w", name, size, err)
}

// duplicate answers an upload whose content is stored as rec. files, if
// given, are the new copies, used to restore blobs lost from disk.
func (s *Server) duplicate(ctx context.Context, rec Record, files []received) (stored, error) {
	for _, f := range files {
		if ok, err := s.blobs.keep.exists(ctx, f.sha); err == nil && !ok {
			s.blobs.commit(ctx, f.tmp, f.sha)
		}
	}
	rep, err := s.store.JSON(ctx, rec.ID)
	if err != nil {
		return stored{}, err
	}
	s.metrics.duplicates.Add(1)
	return stored{rec: rec, duplicate: true, report: rep}, nil
}

// analyze runs an analysis of the upload called name (an Analyzer's or a
// JobAnalyzer's) of files, once admitted, and turns its errors into HTTP
// errors. A panic in it fails this upload alone, with 500: the server goes
// on. An analysis whose client went away is not kept: it fails as
// abandoned, whatever it returned.
func (s *Server) analyze(ctx context.Context, name string, files []Upload, analysis func() (Reports, error)) (Reports, error) {
	release, err := s.acquire(ctx, name, files)
	if err != nil {
		return Reports{}, err
	}
	defer release()
	s.metrics.inFlight.Add(1)
	start := time.Now()
	var rep Reports
	err = run.Protect("analysing", func() error {
		var err error
		rep, err = analysis()
		return err
	})
	s.metrics.analysis(time.Since(start), err != nil)
	s.metrics.inFlight.Add(-1)
	var pe *run.PanicError
	switch {
	case ctx.Err() != nil:
		return Reports{}, errorf(http.StatusBadRequest, "%s: upload abandoned by the client: %v", name, ctx.Err())
	case err == nil:
		return rep, nil
	case errors.As(err, &pe):
		if s.cfg.Log != nil {
			s.cfg.Log.Printf("%s: %v\n%s", name, pe, pe.Stack)
		}
		return Reports{}, errorf(http.StatusInternalServerError, "%s", oneLine(run.Named(name, err).Error()))
	case errors.Is(err, trace.ErrLimit):
		return Reports{}, errorf(http.StatusRequestEntityTooLarge, "%s", oneLine(err.Error()))
	}
	return Reports{}, errorf(http.StatusUnprocessableEntity, "%s", oneLine(err.Error()))
}

// cleanName makes a display name safe to store and show: one line, no
// control characters, at most 200 bytes.
func cleanName(s, fallback string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
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
