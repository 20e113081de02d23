package serve

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/tracegap/tracegap/internal/trace/formats"
	"github.com/tracegap/tracegap/trace"
)

// A tarred TensorBoard log directory (.tar, .tar.gz, .tgz) uploaded in a
// multipart form is analysed as the traces it holds: its files named as a
// registered format's are received as if uploaded one by one, so that the
// ranks of one job become one job. Its bounds keep an archive bomb from
// filling the disk or the CPU:
const (
	// maxArchiveEntries caps the entries read, traces or not.
	maxArchiveEntries = 10000
	// maxArchiveTraces caps the traces taken from one archive.
	maxArchiveTraces = 256
)

// The bytes the archives of one request expand to, skipped entries
// included, are capped together by the server's MaxUpload, as their traces
// would be uploaded in one request; so are their traces by
// maxArchiveTraces. A request of many small archives is bounded as one of
// a single big one.

// expansion is what the archives of one request may still expand to.
type expansion struct {
	bytes  int64
	traces int
}

// isArchive reports whether an uploaded file's name is a tar's.
func isArchive(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".tar") || strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".tgz")
}

// isTrace reports whether an archive entry is named as a trace of a
// registered format, gzipped or not.
func isTrace(name string) bool {
	n := strings.TrimSuffix(strings.ToLower(name), ".gz")
	for _, f := range trace.Formats() {
		for _, s := range f.Suffixes {
			if strings.HasSuffix(n, s) {
				return true
			}
		}
	}
	return false
}

// expandArchives replaces every received archive among parts by the traces
// it holds, or by its error.
func (s *Server) expandArchives(parts []part) []part {
	left := &expansion{bytes: s.cfg.MaxUpload}
	out := make([]part, 0, len(parts))
	for _, p := range parts {
		if p.err != nil || !isArchive(p.f.name) {
			out = append(out, p)
			continue
		}
		traces, err := s.expand(p.f, left)
		s.blobs.drop(p.f.tmp)
		if err != nil {
			out = append(out, part{f: received{name: p.f.name}, err: err})
			continue
		}
		out = append(out, traces...)
	}
	return out
}

// expand receives the traces in archive f, each named by its path in it,
// within what the request's archives may still expand to (left). On error
// nothing it received is left behind.
func (s *Server) expand(f received, left *expansion) (traces []part, err error) {
	defer func() {
		if err != nil {
			for _, p := range traces {
				s.blobs.drop(p.f.tmp)
			}
			traces = nil
		}
	}()
	file, err := os.Open(f.tmp)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var r io.Reader = file
	limit, byRatio := left.bytes, false
	if !strings.HasSuffix(strings.ToLower(f.name), ".tar") {
		gz, err := gzip.NewReader(file)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "%s: expected a gzipped tar: %v", f.name, err)
		}
		defer gz.Close()
		r = gz
		// As trace.Read bounds a gzipped trace's expansion.
		if most := trace.RatioGrace + f.size*trace.DefaultMaxRatio; most < limit {
			limit, byRatio = most, true
		}
	}
	budget := &io.LimitedReader{R: r, N: limit + 1}
	defer func() { left.bytes = max(left.bytes-(limit+1-budget.N), 0) }()
	tooBig := func() error {
		if byRatio {
			return errorf(http.StatusRequestEntityTooLarge, "%s: expands more than %dx its %d bytes: not a real archive of traces (real ones expand 5-30x), likely a decompression bomb", f.name, trace.DefaultMaxRatio, f.size)
		}
		return errorf(http.StatusRequestEntityTooLarge, "%s: expands past %d bytes with the request's other archives (the server's --max-upload)", f.name, s.cfg.MaxUpload)
	}
	tr := tar.NewReader(budget)
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if budget.N <= 0 {
			return traces, tooBig()
		}
		if err != nil {
			return traces, errorf(http.StatusBadRequest, "%s: reading the tar: %v", f.name, err)
		}
		if n == maxArchiveEntries {
			return traces, errorf(http.StatusRequestEntityTooLarge, "%s: more than %d entries in the tar", f.name, maxArchiveEntries)
		}
		name, err := entryName(h.Name)
		if err != nil {
			return traces, errorf(http.StatusBadRequest, "%s: %v", f.name, err)
		}
		if !isTrace(name) {
			continue
		}
		if sparse(h) {
			return traces, errorf(http.StatusBadRequest, "%s: entry %q: a sparse file, expected a plain file", f.name, name)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if left.traces == maxArchiveTraces {
			return traces, errorf(http.StatusRequestEntityTooLarge, "%s: more than %d traces in the request's tars", f.name, maxArchiveTraces)
		}
		// Not receiveUpload: the archive's bytes were counted as uploaded.
		rf, err := s.receive(tr, name)
		if budget.N <= 0 {
			s.blobs.drop(rf.tmp)
			return traces, tooBig()
		}
		if err != nil {
			return traces, errorf(statusOf(err), "%s: %v", f.name, err)
		}
		traces = append(traces, part{f: rf})
		left.traces++
	}
	// A tar ends before its gzip stream does (the stream's trailer, any
	// padding): read to the end, within the budget, so that a stream
	// whose checksum is wrong is refused like other corrupt data.
	if _, err := io.Copy(io.Discard, budget); err != nil {
		return traces, errorf(http.StatusBadRequest, "%s: after the tar: %v", f.name, err)
	}
	if budget.N <= 0 {
		return traces, tooBig()
	}
	if len(traces) == 0 {
		return nil, errorf(http.StatusUnprocessableEntity, "%s: no trace in the tar: expected files named as %s", f.name, formats.Titles())
	}
	return traces, nil
}

// sparse reports whether a tar entry is a GNU sparse file, old style or
// PAX. The tar reader expands its holes from nothing, so that its bytes
// would escape the bound on the stream's; a profiler writes no holes.
func sparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// entryName returns an archive entry's name as a safe relative path: one
// line, slashes for separators, no "." elements (the folder itself is "."). A name that is absolute
// (/x, C:x, \\host\x) or climbs out of the folder it is extracted into
// (a ".." element) is refused, whatever the entry is: such a name in an
// upload is hostile, and a job's download (rawJob) writes the names kept.
func entryName(raw string) (string, error) {
	n := cleanName(strings.ReplaceAll(raw, `\`, "/"), "")
	if strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':' && isLetter(n[0])) {
		return "", fmt.Errorf("entry %q: absolute name, expected a path relative to the tar's folder", raw)
	}
	for _, el := range strings.Split(n, "/") {
		if el == ".." {
			return "", fmt.Errorf("entry %q: a \"..\" in the name, expected a path inside the tar's folder", raw)
		}
	}
	// "./", the folder itself, is "." and named as no trace.
	return path.Clean(n), nil
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
