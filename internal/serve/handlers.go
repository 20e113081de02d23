package serve

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/tracegap/tracegap/internal/inputs"
	"github.com/tracegap/tracegap/internal/run"
	"github.com/tracegap/tracegap/internal/trace/tracefile"
	"github.com/tracegap/tracegap/trace"
)

// uploadResult is one upload's entry in a POST /api/v1/traces answer.
type uploadResult struct {
	ID        string          `json:"id,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Name      string          `json:"name"`
	Duplicate bool            `json:"duplicate"`
	Report    json.RawMessage `json:"report,omitempty"`
	Error     string          `json:"error,omitempty"`
	Status    int             `json:"status,omitempty"`
}

func resultOf(st stored) uploadResult {
	return uploadResult{ID: st.rec.ID, Kind: st.rec.Kind, Name: st.rec.Name, Duplicate: st.duplicate, Report: st.report}
}

// handleUpload is POST /api/v1/traces: a raw body is one trace, a multipart
// form is one trace per file part, or one job when the parts are the ranks
// of one job.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if isMultipart(r) {
		results, code := s.uploadMultipart(w, r)
		if code >= 400 {
			w.Header().Set("Connection", "close") // as reject does
		}
		if len(results) == 0 {
			s.reject(w, r, &httpError{status: code, msg: "multipart upload has no file part"})
			return
		}
		writeJSON(w, code, results)
		return
	}
	st, err := s.uploadRaw(w, r)
	if err != nil {
		s.reject(w, r, err)
		return
	}
	code := http.StatusCreated
	if st.duplicate {
		code = http.StatusOK
	}
	w.Header().Set("Location", "/api/v1/traces/"+st.rec.ID)
	writeJSON(w, code, resultOf(st))
}

// reject answers a refused upload. The connection is closed after the
// answer: what is left of the body is not read (a client stalling in it
// would hold the connection).
func (s *Server) reject(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("Connection", "close")
	s.metrics.rejected.Add(1)
	s.fail(w, r, err)
}

func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}

func (s *Server) uploadRaw(w http.ResponseWriter, r *http.Request) (stored, error) {
	if err := s.authorize(r, ""); err != nil {
		return stored{}, err
	}
	format, err := formatParam(r)
	if err != nil {
		return stored{}, err
	}
	body, err := s.limitBody(w, r)
	if err != nil {
		return stored{}, err
	}
	name := cleanName(r.URL.Query().Get("name"), "upload")
	f, err := s.receiveUpload(r.Body, name)
	if err != nil {
		return stored{}, err
	}
	defer s.blobs.drop(f.tmp) // a no-op once committed
	body.done()
	return s.ingest(r.Context(), f, format)
}

// uploadMultipart stores every file part of a multipart form: as one job
// when the server analyses jobs and the parts are the ranks of one job
// (run.LooksLikeJob, as the command line decides), named by ?name= (by
// default "job (N ranks)"); else each as its own trace. A "token" field
// placed before the files authorizes a browser form, which cannot send an
// Authorization header. The status is the first failure's, else 201 when
// something new was stored, else 200.
func (s *Server) uploadMultipart(w http.ResponseWriter, r *http.Request) ([]uploadResult, int) {
	fail := func(err error) ([]uploadResult, int) {
		return []uploadResult{{Error: s.public(err), Status: statusOf(err)}}, statusOf(err)
	}
	format, err := formatParam(r)
	if err != nil {
		return fail(err)
	}
	if r.Header.Get("Authorization") != "" { // else a token field must come before the files
		if err := s.authorize(r, ""); err != nil {
			return fail(err)
		}
	}
	body, err := s.limitBody(w, r)
	if err != nil {
		return fail(err)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return fail(errorf(http.StatusBadRequest, "reading multipart form: %v", err))
	}
	parts := s.expandArchives(s.receiveParts(r, mr))
	body.done()
	defer func() {
		for _, p := range parts {
			if p.err == nil {
				s.blobs.drop(p.f.tmp) // a no-op once committed
			}
		}
	}()
	if files, ok := s.job(parts); ok {
		name := cleanName(r.URL.Query().Get("name"), fmt.Sprintf("job (%d ranks)", len(files)))
		st, err := s.ingestJob(r.Context(), name, files, format)
		res, code := s.partResult(name, st, err)
		return []uploadResult{res}, code
	}
	var results []uploadResult
	code := 0
	for _, p := range parts {
		err := p.err
		var st stored
		if err == nil {
			st, err = s.ingest(r.Context(), p.f, format)
		}
		res, c := s.partResult(p.f.name, st, err)
		results, code = append(results, res), firstCode(code, c)
	}
	if code == 0 {
		code = http.StatusBadRequest
	}
	return results, code
}

// part is one file part of a multipart form, received or refused.
type part struct {
	f   received // f.name is set either way
	err error
}

// receiveParts receives every file part of a multipart form into a
// temporary file, stopping at the first refusal that the rest of the body
// would meet too.
func (s *Server) receiveParts(r *http.Request, mr *multipart.Reader) []part {
	var parts []part
	token := ""
	for n := 1; ; n++ {
		p, err := mr.NextPart()
		if err == io.EOF {
			return parts
		}
		if err != nil {
			return append(parts, part{err: s.partError(err)})
		}
		if n > s.cfg.MaxParts {
			p.Close()
			return s.tooManyParts(parts)
		}
		if p.FileName() == "" {
			if p.FormName() == "token" {
				token = readField(p)
			}
			p.Close()
			continue
		}
		name := cleanName(path.Base(strings.ReplaceAll(p.FileName(), `\`, "/")), "upload")
		pt := part{f: received{name: name}}
		if pt.err = s.authorize(r, token); pt.err != nil {
			return append(parts, pt) // not a byte more read
		}
		if f, err := s.receiveUpload(p, name); err != nil {
			pt.err = err
		} else {
			pt.f = f
		}
		p.Close()
		parts = append(parts, pt)
		if c := statusOf(pt.err); pt.err != nil && (c == http.StatusUnauthorized || c == http.StatusRequestEntityTooLarge || c == http.StatusInsufficientStorage) {
			return parts
		}
	}
}

// tooManyParts refuses a multipart form of more than MaxParts parts whole:
// the files received so far are dropped, none is analysed.
func (s *Server) tooManyParts(parts []part) []part {
	for _, p := range parts {
		if p.err == nil {
			s.blobs.drop(p.f.tmp)
		}
	}
	err := errorf(http.StatusRequestEntityTooLarge, "multipart form: more than %d parts, expected at most %d (the server's --max-parts)", s.cfg.MaxParts, s.cfg.MaxParts)
	return []part{{f: received{name: "multipart form"}, err: err}}
}

// partError is the error of a multipart form that cannot be read on: a
// malformed part (a NUL in its header, say) is the client's error.
func (s *Server) partError(err error) error {
	var mb *http.MaxBytesError
	var ne net.Error
	if errors.As(err, &mb) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) {
		return s.receiveError(err, "multipart form", 0)
	}
	return errorf(http.StatusBadRequest, "reading multipart form: %v", err)
}

// job returns the received files when they are the ranks of one job that
// the server analyses as one.
func (s *Server) job(parts []part) ([]received, bool) {
	if s.cfg.AnalyzeJob == nil || len(parts) < 2 {
		return nil, false
	}
	files := make([]received, len(parts))
	paths := make([]string, len(parts))
	for i, p := range parts {
		if p.err != nil {
			return nil, false
		}
		files[i], paths[i] = p.f, p.f.tmp
	}
	return files, run.LooksLikeJob(paths)
}

// partResult is the answer entry and status of one stored part (or job).
func (s *Server) partResult(name string, st stored, err error) (uploadResult, int) {
	if err != nil {
		s.metrics.rejected.Add(1)
		return uploadResult{Name: name, Error: s.public(err), Status: statusOf(err)}, statusOf(err)
	}
	if st.duplicate {
		return resultOf(st), http.StatusOK
	}
	return resultOf(st), http.StatusCreated
}

// firstCode keeps the first error status; among successes 201 beats 200.
func firstCode(cur, next int) int {
	switch {
	case cur >= 400:
		return cur
	case next >= 400 || cur == 0:
		return next
	case next == http.StatusCreated:
		return next
	}
	return cur
}

func readField(p *multipart.Part) string {
	b, _ := io.ReadAll(io.LimitReader(p, 4096))
	return strings.TrimSpace(string(b))
}

// listAnswer is the GET /api/v1/traces answer.
type listAnswer struct {
	Traces     []Record `json:"traces"`
	Total      int      `json:"total"`
	NextCursor string   `json:"next_cursor,omitempty"`
	Page       int      `json:"page,omitempty"`
}

const (
	defaultPageSize = 20
	maxPageSize     = 200
)

// listQuery reads ?limit=, ?cursor= and ?page=.
func listQuery(r *http.Request) (ListQuery, int, error) {
	q := ListQuery{Limit: defaultPageSize}
	v := r.URL.Query()
	num := func(key string, min int) (int, error) {
		n, err := strconv.Atoi(v.Get(key))
		if err != nil || n < min {
			return 0, errorf(http.StatusBadRequest, "invalid %s %q: expected an integer of at least %d", key, v.Get(key), min)
		}
		return n, nil
	}
	var err error
	if v.Has("limit") {
		if q.Limit, err = num("limit", 1); err != nil {
			return q, 0, err
		}
		q.Limit = min(q.Limit, maxPageSize)
	}
	page := 0
	switch {
	case v.Has("cursor") && v.Has("page"):
		return q, 0, errorf(http.StatusBadRequest, "give either cursor or page, not both")
	case v.Has("cursor"):
		n, err := num("cursor", 1)
		if err != nil {
			return q, 0, err
		}
		q.Before = int64(n)
	case v.Has("page"):
		if page, err = num("page", 1); err != nil {
			return q, 0, err
		}
		// A page past any there can be is empty, as any page past the
		// last is, rather than an offset that overflows.
		q.Offset = math.MaxInt
		if page-1 <= math.MaxInt/q.Limit {
			q.Offset = (page - 1) * q.Limit
		}
	}
	return q, page, nil
}

func (s *Server) list(r *http.Request) (listAnswer, ListQuery, error) {
	q, page, err := listQuery(r)
	if err != nil {
		return listAnswer{}, q, err
	}
	// One more than a page tells whether another page follows.
	recs, total, err := s.store.List(r.Context(), ListQuery{Limit: q.Limit + 1, Before: q.Before, Offset: q.Offset})
	if err != nil {
		return listAnswer{}, q, err
	}
	a := listAnswer{Traces: recs, Total: total, Page: page}
	if len(recs) > q.Limit {
		a.Traces = recs[:q.Limit]
		a.NextCursor = strconv.FormatInt(a.Traces[q.Limit-1].Seq, 10)
	}
	if a.Traces == nil {
		a.Traces = []Record{}
	}
	return a, q, nil
}

// handleList is GET /api/v1/traces: newest first, a page at a time.
func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	a, _, err := s.list(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// handleReport is GET /api/v1/traces/{id}: the v1 JSON report.
func (s *Server) handleReport(w http.ResponseWriter, r *http.Request) {
	b, err := s.store.JSON(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, notFound(err, r.PathValue("id")))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func notFound(err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return errorf(http.StatusNotFound, "no trace with id %q", id)
	}
	return err
}

// handleRaw is GET /api/v1/traces/{id}/raw: the file as uploaded; a job's
// rank files in a tar.
func (s *Server) handleRaw(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec, err := s.store.Get(r.Context(), id)
	if err != nil {
		s.fail(w, r, notFound(err, id))
		return
	}
	if rec.Kind == KindJob {
		s.rawJob(w, r, rec)
		return
	}
	f, err := s.openRaw(r, rec, rec.SHA256, "trace "+id+": opening stored file")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": rawName(rec, f)}))
	w.Header().Set("ETag", `"`+rec.SHA256+`"`)
	http.ServeContent(w, r, "", rec.Created, f)
}

// openRaw opens the blob sha of rec for its download, failing with what
// it was doing. A blob not found because rec has been deleted since it
// was read is a 404, as rec is now.
func (s *Server) openRaw(r *http.Request, rec Record, sha, what string) (blobFile, error) {
	f, err := s.blobs.open(r.Context(), sha)
	if err == nil {
		return f, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, gerr := s.store.Get(r.Context(), rec.ID); errors.Is(gerr, ErrNotFound) {
			return nil, notFound(gerr, rec.ID)
		}
	}
	return nil, fmt.Errorf("%s: %w", what, err)
}

// rawName names a trace's download: its upload's name, with its format's
// suffix added when the name has none (an upload named "w0"), so that the
// file saved is read where a directory of traces is.
func rawName(rec Record, blob io.ReaderAt) string {
	f, err := trace.LookupFormat(rec.Format)
	if err != nil {
		return rec.Name
	}
	magic := make([]byte, 2)
	_, err = blob.ReadAt(magic, 0)
	return inputs.FileName(rec.Name, f, err == nil && tracefile.IsGzip(magic))
}

// distinctNames returns names with each one that repeats an earlier one
// given "-2", "-3" ... after its base's stem (logs/w.pt.trace.json.gz
// becomes logs/w-2.pt.trace.json.gz): a job's ranks may be uploaded under
// one name (path.Base of their paths, or a tar's entry twice), and a tar
// holding a name twice extracts to one file. Each name's next number is
// kept, so that a job of thousands of ranks of one name takes time in
// proportion to their number.
func distinctNames(names []string) []string {
	out := make([]string, len(names))
	taken := make(map[string]bool, len(names))
	next := map[string]int{}
	for i, name := range names {
		n := name
		for k := max(next[name], 2); taken[n]; k++ {
			n, next[name] = numbered(name, k), k+1
		}
		taken[n], out[i] = true, n
	}
	return out
}

// numbered returns name with -k after its base's stem.
func numbered(name string, k int) string {
	dir, base := path.Split(name)
	stem, ext, _ := strings.Cut(base, ".")
	if ext != "" {
		ext = "." + ext
	}
	return fmt.Sprintf("%s%s-%d%s", dir, stem, k, ext)
}

// rawJob writes a job's rank files, as uploaded, as a tar. Every blob is
// opened before the answer starts, so that a missing one is an error
// rather than a cut tar.
func (s *Server) rawJob(w http.ResponseWriter, r *http.Request, rec Record) {
	files := make([]blobFile, len(rec.Files))
	names := make([]string, len(rec.Files))
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}()
	for i, file := range rec.Files {
		// A record stored before upload names were checked may hold a
		// name that would leave the folder the tar is extracted into.
		name, err := entryName(file.Name)
		if err != nil {
			s.fail(w, r, fmt.Errorf("job %s: stored file name not safe to download: %w", rec.ID, err))
			return
		}
		names[i] = name
		f, err := s.openRaw(r, rec, file.SHA256, "job "+rec.ID+": opening stored file "+file.Name)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		files[i] = f
	}
	names = distinctNames(names)
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(rec.Name) + ".tar"}))
	w.Header().Set("ETag", `"`+rec.SHA256+`"`)
	tw := tar.NewWriter(w)
	for i, file := range rec.Files {
		hdr := &tar.Header{Name: names[i], Size: file.Size, Mode: 0o644, ModTime: rec.Created, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return // the client went away; the status is sent
		}
		if _, err := io.Copy(tw, files[i]); err != nil {
			return
		}
	}
	tw.Close()
}

// handleDelete is DELETE /api/v1/traces/{id}: the record, its reports, and
// the blobs no other record holds.
func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	if err := s.authorize(r, ""); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.deleteTrace(r, r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// deleteTrace deletes record id, its reports and the blobs no other record
// holds; the caller has authorized the request.
func (s *Server) deleteTrace(r *http.Request, id string) error {
	rec, err := s.store.Get(r.Context(), id)
	if err != nil {
		return notFound(err, id)
	}
	// Not while an upload of the same content is deciding it is a duplicate.
	epoch := s.lockEpoch()
	unlock, err := s.lockContent(r.Context(), rec.SHA256)
	if err != nil {
		return s.lockError(r.Context(), "deleting "+id, err)
	}
	defer unlock()
	if rec, err = s.store.Delete(r.Context(), id); err != nil {
		return notFound(err, id)
	}
	return s.dropBlobs(r, rec, epoch)
}

// dropBlobs removes the blobs of a deleted record that no other record
// holds. The caller holds the lock of rec's content, taken in epoch: a
// trace's blob; a job's rank blobs are locked here, as a job upload locks
// them.
func (s *Server) dropBlobs(r *http.Request, rec Record, epoch uint64) error {
	if rec.Kind != KindJob {
		return s.dropBlob(r.Context(), rec.SHA256, epoch)
	}
	unlock, err := s.lockAll(r.Context(), rec.blobSHAs())
	if err != nil {
		return s.lockError(r.Context(), "deleting "+rec.ID, err)
	}
	defer unlock()
	for _, sha := range rec.blobSHAs() {
		if err := s.dropBlob(r.Context(), sha, epoch); err != nil {
			return err
		}
	}
	return nil
}

// handleHealth is GET /healthz: 200 when the store answers.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if err := s.store.Ping(r.Context()); err != nil {
		s.fail(w, r, errorf(http.StatusServiceUnavailable, "store: %v", err))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}

// handleMetrics is GET /metrics in the Prometheus text format.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	running, used, waiting := s.admit.state()
	s.metrics.slots.Store(int64(running))
	s.metrics.memory.Store(used)
	s.metrics.queued.Store(int64(waiting))
	s.metrics.write(w)
}
