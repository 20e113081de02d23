package serve

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// blobs keeps uploaded files on disk, named by the SHA-256 of their bytes:
// blobs/ab/ab12...ef. An upload is written to tmp/ first and renamed into
// place only once it has been read completely and analysed, so a cut
// connection or a failed analysis leaves nothing in blobs/.
type blobs struct {
	dir string // <data-dir>/blobs
	tmp string // <data-dir>/tmp, on the same file system so rename is atomic

	// The temporary files of all requests together hold at most max
	// bytes (Config.MaxTemp): a write past it fails, with 507, before
	// it reaches the disk. held is each open temporary file's bytes.
	max  int64
	mu   sync.Mutex
	used int64
	held map[string]int64
}

const tmpPattern = "upload-*"

// openBlobs prepares the blob directories under dataDir and removes the
// temporary files a crashed server left behind.
func openBlobs(dataDir string, maxTemp int64) (*blobs, error) {
	b := &blobs{dir: filepath.Join(dataDir, "blobs"), tmp: filepath.Join(dataDir, "tmp"), max: maxTemp, held: map[string]int64{}}
	for _, d := range []string{b.dir, b.tmp} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("creating data directory: %w", err)
		}
	}
	stale, err := filepath.Glob(filepath.Join(b.tmp, tmpPattern))
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", b.tmp, err)
	}
	for _, p := range stale {
		os.Remove(p)
	}
	return b, nil
}

// create opens a new temporary file for an incoming upload.
func (b *blobs) create() (*os.File, error) {
	f, err := os.CreateTemp(b.tmp, tmpPattern)
	if err != nil {
		return nil, fmt.Errorf("creating temporary file: %w", err)
	}
	return f, nil
}

// path returns where the blob with the given hex SHA-256 lives.
func (b *blobs) path(sha string) string {
	return filepath.Join(b.dir, sha[:2], sha)
}

// commit moves a complete temporary file into place as the blob sha.
func (b *blobs) commit(tmp, sha string) error {
	dst := b.path(sha)
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return fmt.Errorf("storing blob %s: %w", sha, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("storing blob %s: %w", sha, err)
	}
	b.release(tmp)
	return nil
}

// drop removes the temporary file tmp, if it is still there, and gives
// its bytes back to the quota.
func (b *blobs) drop(tmp string) {
	if tmp == "" {
		return
	}
	os.Remove(tmp)
	b.release(tmp)
}

func (b *blobs) release(tmp string) {
	b.mu.Lock()
	b.used -= b.held[tmp]
	delete(b.held, tmp)
	b.mu.Unlock()
}

// reserve counts n more bytes for the temporary file tmp, which receives
// the upload name, or fails with 507 when the quota has no room for them.
func (b *blobs) reserve(tmp, name string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max > 0 && b.used+n > b.max {
		return errorf(http.StatusInsufficientStorage, "%s: the server's temporary space is full: uploads being received hold %s of %s (the server's --max-temp), retry later",
			name, humanSize(b.used), humanSize(b.max))
	}
	b.used += n
	b.held[tmp] += n
	return nil
}

// inUse returns the bytes the temporary files hold.
func (b *blobs) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// quota returns f, a temporary file receiving the upload name, as a
// writer whose writes are counted against the quota first.
func (b *blobs) quota(f *os.File, name string) io.Writer {
	return &quotaWriter{b: b, f: f, name: name}
}

type quotaWriter struct {
	b    *blobs
	f    *os.File
	name string
}

func (w *quotaWriter) Write(p []byte) (int, error) {
	if err := w.b.reserve(w.f.Name(), w.name, int64(len(p))); err != nil {
		return 0, err
	}
	return w.f.Write(p)
}

// open opens the blob sha for reading.
func (b *blobs) open(sha string) (*os.File, error) {
	if !validSHA(sha) {
		return nil, fmt.Errorf("invalid blob name %q: expected 64 hex digits", sha)
	}
	return os.Open(b.path(sha))
}

// remove deletes the blob sha; a missing blob is not an error.
func (b *blobs) remove(sha string) error {
	if !validSHA(sha) {
		return fmt.Errorf("invalid blob name %q: expected 64 hex digits", sha)
	}
	if err := os.Remove(b.path(sha)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing blob %s: %w", sha, err)
	}
	return nil
}

// temps lists the temporary files present (tests check that failed uploads
// leave none).
func (b *blobs) temps() []string {
	m, _ := filepath.Glob(filepath.Join(b.tmp, tmpPattern))
	return m
}

func validSHA(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}
