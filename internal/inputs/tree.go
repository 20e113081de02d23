package inputs

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tracegap/tracegap/internal/objects"
)

// tree is where a directory of inputs is listed: the local file system,
// or an object store's prefixes (a URL, through internal/objects), which
// list alike, so that Expand finds a job's ranks or a TensorBoard run
// folder in a bucket as it does on disk.
type tree interface {
	// readDir lists dir: each entry's name and type (that of what a
	// symbolic link names; see entryType).
	readDir(dir string) ([]dirEntry, error)
	// isDir reports whether path is a directory.
	isDir(path string) bool
	// join names name in dir.
	join(dir, name string) string
	// open opens path to read its head.
	open(path string) (io.ReadCloser, error)
}

// dirEntry is an entry that a tree lists.
type dirEntry struct {
	name string
	mode fs.FileMode
}

// treeOf returns the tree that path is in.
func treeOf(path string) tree {
	if objects.IsURL(path) {
		return bucketTree{}
	}
	return localTree{}
}

// IsDir reports whether path names a directory: a local one, or a URL
// naming a prefix with objects under it. A path that cannot be looked at
// is not one: reading it says what is wrong.
func IsDir(path string) bool {
	dir, err := isDirArg(path)
	return err == nil && dir
}

// localTree is the local file system.
type localTree struct{}

func (localTree) readDir(dir string) ([]dirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, len(entries))
	for i, e := range entries {
		out[i] = dirEntry{name: e.Name(), mode: entryType(e, filepath.Join(dir, e.Name()))}
	}
	return out, nil
}

func (localTree) isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func (localTree) join(dir, name string) string { return filepath.Join(dir, name) }

func (localTree) open(path string) (io.ReadCloser, error) { return os.Open(path) }

// bucketTree is an object store, whose paths are URLs: an object is a
// regular file and a prefix with objects under it a directory.
type bucketTree struct{}

func (bucketTree) readDir(dir string) ([]dirEntry, error) {
	entries, err := objects.List(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, len(entries))
	for i, e := range entries {
		out[i] = dirEntry{name: e.Name}
		if e.Dir {
			out[i].mode = fs.ModeDir
		}
	}
	return out, nil
}

func (bucketTree) isDir(path string) bool {
	dir, err := objects.IsDir(context.Background(), path)
	return err == nil && dir
}

func (bucketTree) join(dir, name string) string { return objects.Join(dir, name) }

func (bucketTree) open(path string) (io.ReadCloser, error) {
	return objects.Open(context.Background(), path)
}

// Dir returns the directory holding path, as filepath.Dir does, for a URL
// the prefix holding the object (objects.Dir).
func Dir(path string) string {
	if objects.IsURL(path) {
		return objects.Dir(path)
	}
	return filepath.Dir(path)
}
