package render

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tracegap/tracegap/internal/trace/tracefile"
)

// WriteFile writes the output file at path, the one way every -o and
// --junit output is written. A new path or a regular file is written
// atomically: write fills a temporary file in the same directory, which
// then replaces it, so that on error the file is left as it was. A
// symbolic link is followed and its target written so, in the target's
// directory: the link stays. Anything else that exists (a device such as
// /dev/null, a FIFO, a socket) is written in place, since replacing it
// with a regular file would break whatever reads it.
func WriteFile(path string, write func(io.Writer) error) error {
	// What exists and is no regular file is written as it is, reached
	// through any links by the kernel: /dev/stdout is a link to
	// /proc/self/fd/1, whose target ("pipe:[N]") is no path resolve
	// could follow.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return writeInPlace(path, path, write)
	}
	target, st, err := resolve(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	switch {
	case st == nil || st.Mode().IsRegular():
		return writeAtomic(path, target, st, write)
	case st.IsDir():
		return fmt.Errorf("creating %s: is a directory, expected a file name", path)
	}
	return writeInPlace(path, target, write)
}

// maxLinks bounds the symbolic links resolve follows, as the kernel does.
const maxLinks = 40

// resolve follows the symbolic links at path to what they name, which may
// not exist yet (st nil then).
func resolve(path string) (target string, st fs.FileInfo, err error) {
	for range maxLinks {
		st, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return path, st, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", nil, errors.New("too many levels of symbolic links")
}

// writeAtomic writes target (what path names) through a temporary file
// renamed over it, keeping an existing file's permissions. Errors name
// path, as the user gave it.
func writeAtomic(path, target string, st fs.FileInfo, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	// Made through tracefile, so that an interrupt removes it too.
	f, err := tracefile.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return createError(path, dir, err)
	}
	// Remove the temporary file unless it was renamed: also when write
	// panics (out of memory under run.Protect), when err is not set.
	renamed := false
	defer func() {
		if renamed {
			tracefile.ForgetTemp(f.Name())
		} else {
			tracefile.RemoveTemp(f)
		}
	}()
	if err = write(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; a report is no secret.
	perm := fs.FileMode(0o644)
	if st != nil {
		perm = st.Mode().Perm()
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), target); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	renamed = true
	return nil
}

// createError says why the temporary file in dir could not be created,
// in words about path, the file the user named: the temporary file's name
// is no business of theirs.
func createError(path, dir string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if _, serr := os.Stat(dir); errors.Is(err, fs.ErrNotExist) && errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("creating %s: the folder %s does not exist: create it first, or give another path", path, filepath.Clean(dir))
	}
	return fmt.Errorf("creating %s: %w", path, err)
}

// writeInPlace writes to target, an existing file that is not a regular
// one, as it is: no temporary file, no rename.
func writeInPlace(path, target string, write func(io.Writer) error) error {
	f, err := os.OpenFile(target, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
