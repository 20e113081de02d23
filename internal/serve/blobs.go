package serve

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// blobs keeps uploaded files, named by the SHA-256 of their bytes, in a
// blobStore: the data directory's blobs/ (blobs/ab/ab12...ef) or a bucket.
// An upload is written to the data directory's tmp/ first and stored only
// once it has been read completely and analysed, so a cut connection or a
// failed analysis leaves nothing stored.
type blobs struct {
	keep blobStore
	tmp  string // <data-dir>/tmp, on blobs/' file system so that rename is atomic

	// The temporary files of all requests together hold at most max
	// bytes (Config.MaxTemp): a write past it fails, with 507, before
	// it reaches the disk. held is each open temporary file's bytes.
	max  int64
	mu   sync.Mutex
	used int64
	held map[string]int64

	// reads keeps a blob in a bucket that is being read on this server
	// from being removed (a bucket's object, unlike an open file, is gone
	// for the reads that follow): remove defers it, and idle is called
	// with its SHA-256 once the last read has ended. Blobs on disk are
	// not counted: an open file is read to its end whatever happens to
	// its name. hold, when set, tells the servers sharing the store of
	// each read (SharedStore.HoldRead); the end of a read held so calls
	// idle too, since another server may have left the removal to this
	// one.
	reads readers
	idle  func(sha string)
	hold  func(ctx context.Context, sha string) (release func(), err error)
}

// readers counts the open reads of each blob, and the blobs being removed
// (those open refuses) or whose removal waits for their reads to end.
type readers struct {
	mu       sync.Mutex
	open     map[string]int
	removing map[string]int
	waiting  map[string]bool
	// waking counts the ends of reads calling idle; ended is signalled
	// after each end (quiet waits on it).
	waking int
	ended  sync.Cond
}

const tmpPattern = "upload-*"

// openBlobs prepares the temporary directory under dataDir, removing the
// temporary files a crashed server left behind, over the store keep (nil:
// the data directory's blobs/).
func openBlobs(dataDir string, keep blobStore, maxTemp int64) (*blobs, error) {
	if keep == nil {
		keep = diskBlobs(filepath.Join(dataDir, "blobs"))
	}
	b := &blobs{keep: keep, tmp: filepath.Join(dataDir, "tmp"), max: maxTemp, held: map[string]int64{},
		reads: readers{open: map[string]int{}, removing: map[string]int{}, waiting: map[string]bool{}}}
	b.reads.ended.L = &b.reads.mu
	if err := os.MkdirAll(b.tmp, 0o750); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
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

// commit stores a complete temporary file as the blob sha.
func (b *blobs) commit(ctx context.Context, tmp, sha string) error {
	if err := b.keep.put(ctx, sha, tmp); err != nil {
		return fmt.Errorf("storing blob %s: %w", sha, err)
	}
	b.drop(tmp) // gone already where it was renamed into place
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

// open opens the blob sha for reading; until the blob is closed, remove
// leaves it. A blob being removed is not found.
func (b *blobs) open(ctx context.Context, sha string) (blobFile, error) {
	if !validSHA(sha) {
		return nil, fmt.Errorf("invalid blob name %q: expected 64 hex digits", sha)
	}
	if _, ok := b.keep.(diskBlobs); ok {
		return b.keep.open(ctx, sha)
	}
	var release func()
	if b.hold != nil {
		var err error
		if release, err = b.hold(ctx, sha); err != nil {
			return nil, fmt.Errorf("reading blob %s: %w", sha, err)
		}
	}
	r := &b.reads
	r.mu.Lock()
	if r.removing[sha] > 0 {
		r.mu.Unlock()
		if release != nil {
			release()
		}
		return nil, fmt.Errorf("blob %s is being removed: %w", sha, fs.ErrNotExist)
	}
	r.open[sha]++
	r.mu.Unlock()
	f := &readBlob{b: b, sha: sha, release: release}
	var err error
	if f.blobFile, err = b.keep.open(ctx, sha); err != nil {
		f.end()
		return nil, err
	}
	return f, nil
}

// readBlob is an open blob that counts as a read until it is closed.
type readBlob struct {
	blobFile
	b       *blobs
	sha     string
	release func() // of the read's hold, or nil
	once    sync.Once
}

func (f *readBlob) Close() error {
	err := f.blobFile.Close()
	f.end()
	return err
}

// end ends the read, once.
func (f *readBlob) end() {
	f.once.Do(func() {
		if f.release != nil {
			f.release()
		}
		f.b.closed(f.sha, f.release != nil)
	})
}

// closed ends a read of the blob sha, calling idle if it was the last
// here and a removal waits for it, or may (held: another server's).
func (b *blobs) closed(sha string, held bool) {
	r := &b.reads
	r.mu.Lock()
	r.open[sha]--
	last := r.open[sha] == 0
	if last {
		delete(r.open, sha)
	}
	wake := last && (r.waiting[sha] || held)
	if wake {
		delete(r.waiting, sha)
		r.waking++
	}
	r.mu.Unlock()
	if wake && b.idle != nil {
		b.idle(sha)
	}
	r.mu.Lock()
	if wake {
		r.waking--
	}
	r.ended.Broadcast()
	r.mu.Unlock()
}

// quiet waits until no blob is being read here and idle has been called
// for every removal the reads held back (tests).
func (b *blobs) quiet() {
	r := &b.reads
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.open) > 0 || r.waking > 0 {
		r.ended.Wait()
	}
}

// remove deletes the blob sha; a missing blob is not an error. While a
// read of it is open here, it is not removed: deferred reports so, and
// idle is called once the reads have ended, for the caller to decide
// again (a record may hold the blob by then).
func (b *blobs) remove(ctx context.Context, sha string) (deferred bool, err error) {
	if !validSHA(sha) {
		return false, fmt.Errorf("invalid blob name %q: expected 64 hex digits", sha)
	}
	r := &b.reads
	r.mu.Lock()
	if r.open[sha] > 0 {
		r.waiting[sha] = true
		r.mu.Unlock()
		return true, nil
	}
	r.removing[sha]++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.removing[sha]--; r.removing[sha] == 0 {
			delete(r.removing, sha)
		}
		r.mu.Unlock()
	}()
	if err := b.keep.remove(ctx, sha); err != nil {
		return false, fmt.Errorf("removing blob %s: %w", sha, err)
	}
	return false, nil
}

// local returns a file on disk holding the blob sha, for the analysis of
// the upload called name: the blob itself where the store is a directory,
// else a temporary copy, counted against the quota, which done removes.
func (b *blobs) local(ctx context.Context, sha, name string) (path string, done func(), err error) {
	if p, ok := b.keep.(diskBlobs); ok {
		return p.path(sha), func() {}, nil
	}
	src, err := b.open(ctx, sha)
	if err != nil {
		return "", nil, err
	}
	defer src.Close()
	f, err := b.create()
	if err != nil {
		return "", nil, err
	}
	_, err = io.Copy(b.quota(f, name), src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.drop(f.Name())
		return "", nil, fmt.Errorf("copying blob %s: %w", sha, err)
	}
	return f.Name(), func() { b.drop(f.Name()) }, nil
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
