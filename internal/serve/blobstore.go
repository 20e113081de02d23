package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/untrusted"
)

// blobStore is where stored blobs live, each named by its SHA-256: a
// directory on disk (diskBlobs, the default) or a prefix in a bucket
// (bucketBlobs), which several servers share.
type blobStore interface {
	// put stores the complete file at path as the blob sha; the file
	// may be gone after (renamed into place).
	put(ctx context.Context, sha, path string) error
	open(ctx context.Context, sha string) (blobFile, error)
	exists(ctx context.Context, sha string) (bool, error)
	// remove deletes the blob sha; a missing one is not an error.
	remove(ctx context.Context, sha string) error
	// walk calls fn with every blob's SHA-256; files of other names are
	// left out.
	walk(ctx context.Context, fn func(sha string) error) error
	// claim marks the store as holding the blobs of the store whose id
	// (Store.ID) is given, or fails when it holds another store's: two
	// stores sharing one would each sweep the other's blobs away. With
	// write false, an unmarked store is not marked.
	claim(ctx context.Context, id string, write bool) error
	// String names the store for messages.
	String() string
}

// blobFile is an open blob: read as a stream, at offsets, or served with
// http.ServeContent.
type blobFile interface {
	io.ReadSeekCloser
	io.ReaderAt
}

// blobKey is where the blob sha lives under a store's root: ab/ab12...ef,
// so that no directory holds more than a 256th of them.
func blobKey(sha string) string { return sha[:2] + "/" + sha }

// diskBlobs keeps blobs in a directory, which the temporary files share a
// file system with.
type diskBlobs string

func (d diskBlobs) path(sha string) string {
	return filepath.Join(string(d), filepath.FromSlash(blobKey(sha)))
}

func (d diskBlobs) put(_ context.Context, sha, path string) error {
	dst := d.path(sha)
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return err
	}
	return os.Rename(path, dst)
}

func (d diskBlobs) open(_ context.Context, sha string) (blobFile, error) { return os.Open(d.path(sha)) }

func (d diskBlobs) exists(_ context.Context, sha string) (bool, error) {
	_, err := os.Stat(d.path(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (d diskBlobs) remove(_ context.Context, sha string) error {
	if err := os.Remove(d.path(sha)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (d diskBlobs) walk(_ context.Context, fn func(sha string) error) error {
	err := filepath.WalkDir(string(d), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.Type().IsRegular() || !validSHA(e.Name()) {
			return nil
		}
		return fn(e.Name())
	})
	if errors.Is(err, fs.ErrNotExist) { // nothing stored yet
		return nil
	}
	return err
}

// claim implements blobStore: a data directory's blobs/ is its database's.
func (d diskBlobs) claim(context.Context, string, bool) error { return nil }

func (d diskBlobs) String() string { return string(d) }

// bucketBlobs keeps blobs under a directory URL of an object store
// (gs://, s3://, azblob://, file://), through internal/objects.
type bucketBlobs string

// openBucketBlobs checks that the directory URL raw can be listed, so that
// a server with a wrong URL or no credentials fails at start.
func openBucketBlobs(ctx context.Context, raw string) (bucketBlobs, error) {
	raw = objects.Join(raw, "") // a directory's URL: ending with a slash
	if _, err := objects.List(ctx, raw); err != nil {
		return "", fmt.Errorf("blob store %s: %w", raw, err)
	}
	return bucketBlobs(raw), nil
}

func (b bucketBlobs) url(sha string) string { return objects.Join(string(b), blobKey(sha)) }

// put implements blobStore; a blob the bucket holds already (a job's rank
// stored before) is not sent again.
func (b bucketBlobs) put(ctx context.Context, sha, path string) error {
	if ok, err := b.exists(ctx, sha); ok && err == nil {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return objects.WriteFile(ctx, b.url(sha), func(w io.Writer) error {
		_, err := io.Copy(w, f)
		return err
	})
}

func (b bucketBlobs) open(ctx context.Context, sha string) (blobFile, error) {
	return objects.Open(ctx, b.url(sha))
}

func (b bucketBlobs) exists(ctx context.Context, sha string) (bool, error) {
	o, err := objects.Open(ctx, b.url(sha))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, o.Close()
}

func (b bucketBlobs) remove(ctx context.Context, sha string) error {
	return objects.Remove(ctx, b.url(sha))
}

func (b bucketBlobs) walk(ctx context.Context, fn func(sha string) error) error {
	return objects.Walk(ctx, string(b), func(name string) error {
		if dir, sha, ok := strings.Cut(name, "/"); ok && validSHA(sha) && dir == sha[:2] {
			return fn(sha)
		}
		return nil
	})
}

// storeMarker is the object, at the root of a bucket's blobs, that names
// the store they are of.
const storeMarker = "tracegap-store-id"

func (b bucketBlobs) claim(ctx context.Context, id string, write bool) error {
	got, err := b.marker(ctx)
	if errors.Is(err, fs.ErrNotExist) && write {
		err = objects.WriteFile(ctx, objects.Join(string(b), storeMarker), func(w io.Writer) error {
			_, err := io.WriteString(w, id)
			return err
		})
		if err == nil {
			got, err = b.marker(ctx) // two stores marking it at once: one wins
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && !write:
		return nil
	case err != nil:
		return fmt.Errorf("blob store %s: reading its owner (%s): %w", b, storeMarker, err)
	case got != id:
		return fmt.Errorf("blob store %s holds the files of another database (store id %s, this one's %s): give each deployment a --blobs of its own", b, untrusted.Terminal(got), id)
	}
	return nil
}

// marker reads the id the store is marked with.
func (b bucketBlobs) marker(ctx context.Context) (string, error) {
	o, err := objects.Open(ctx, objects.Join(string(b), storeMarker))
	if err != nil {
		return "", err
	}
	defer o.Close()
	id, err := io.ReadAll(io.LimitReader(o, 64))
	return strings.TrimSpace(string(id)), err
}

func (b bucketBlobs) String() string { return string(b) }
