package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracegap/tracegap/internal/objects"
	"github.com/tracegap/tracegap/internal/testservers"
)

// TestBucketBlobs runs the blob store kept in a bucket on each provider
// --blobs takes: file://, and real servers for s3://, gs:// and azblob://
// (internal/testservers), each reached through the environment a user
// would set.
func TestBucketBlobs(t *testing.T) {
	for _, c := range []struct {
		scheme string
		start  func(testing.TB) bucketServer
	}{
		{"file", nil},
		{"s3", func(t testing.TB) bucketServer { return testservers.S3(t) }},
		{"gs", func(t testing.TB) bucketServer { return testservers.GCS(t) }},
		{"azblob", func(t testing.TB) bucketServer { return testservers.Azure(t) }},
	} {
		t.Run(c.scheme, func(t *testing.T) {
			dir := "file://" + filepath.ToSlash(t.TempDir()) + "/blobs"
			if c.start != nil {
				s := c.start(t)
				s.UseEnv(t)
				s.Bucket(t, "blobstore")
				dir = c.scheme + "://blobstore/uploads"
			}
			testBlobStore(t, dir)
		})
	}
}

// bucketServer is an object store's server, as internal/testservers
// gives it.
type bucketServer interface {
	UseEnv(t testing.TB)
	Bucket(t testing.TB, name string)
}

// testBlobStore puts two blobs in the store at the directory URL dir,
// beside an object not named as a blob, and checks each is there, reads
// back whole and at offsets, is walked, and is gone once removed.
func testBlobStore(t *testing.T, dir string) {
	ctx := context.Background()
	b, err := openBucketBlobs(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	blobs := map[string][]byte{}
	for _, content := range []string{"the first upload", "the second upload, a little longer"} {
		sha := putBlob(t, b, []byte(content))
		blobs[sha] = []byte(content)
	}
	stray := objects.Join(string(b), "ab/not-a-blob")
	if err := objects.WriteFile(ctx, stray, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	for sha, want := range blobs {
		checkBlob(t, b, sha, want)
	}
	if got, want := walked(t, b), slices.Sorted(maps.Keys(blobs)); !slices.Equal(got, want) {
		t.Errorf("walk gave %q, want the blobs %q", got, want)
	}
	gone := slices.Sorted(maps.Keys(blobs))[0]
	for range 2 { // a missing blob is no error
		if err := b.remove(ctx, gone); err != nil {
			t.Fatalf("remove: %v", err)
		}
	}
	if ok, err := b.exists(ctx, gone); ok || err != nil {
		t.Errorf("exists after remove = %v, %v; want false", ok, err)
	}
	if _, err := b.open(ctx, gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open after remove: %v, want fs.ErrNotExist", err)
	}
	if got := walked(t, b); len(got) != 1 || got[0] == gone {
		t.Errorf("walk after remove gave %q, want the other blob", got)
	}
}

// putBlob stores content as a blob through a temporary file, as an
// upload is, and returns its SHA-256.
func putBlob(t *testing.T, b bucketBlobs, content []byte) string {
	t.Helper()
	sum := sha256.Sum256(content)
	sha := hex.EncodeToString(sum[:])
	path := filepath.Join(t.TempDir(), "upload")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.put(context.Background(), sha, path); err != nil {
		t.Fatalf("put: %v", err)
	}
	return sha
}

// checkBlob checks the blob sha exists and reads as want: whole, and
// from an offset after a seek.
func checkBlob(t *testing.T, b bucketBlobs, sha string, want []byte) {
	t.Helper()
	ctx := context.Background()
	if ok, err := b.exists(ctx, sha); !ok || err != nil {
		t.Errorf("exists(%s) = %v, %v; want true", sha, ok, err)
	}
	f, err := b.open(ctx, sha)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer f.Close()
	got, err := io.ReadAll(f)
	if err != nil || string(got) != string(want) {
		t.Errorf("read %q, %v; want %q", got, err, want)
	}
	if _, err := f.Seek(4, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(f)
	if err != nil || string(got) != string(want[4:]) {
		t.Errorf("read after seek %q, %v; want %q", got, err, want[4:])
	}
	p := make([]byte, 5)
	if n, err := f.ReadAt(p, 2); n != 5 || err != nil || string(p) != string(want[2:7]) {
		t.Errorf("ReadAt(5, 2) = %d, %v, %q; want %q", n, err, p[:n], want[2:7])
	}
}

// walked returns the blobs a walk gives, sorted.
func walked(t *testing.T, b bucketBlobs) []string {
	t.Helper()
	var got []string
	if err := b.walk(context.Background(), func(sha string) error { got = append(got, sha); return nil }); err != nil {
		t.Fatalf("walk: %v", err)
	}
	slices.Sort(got)
	return got
}
