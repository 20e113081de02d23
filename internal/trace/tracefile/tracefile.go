// Package tracefile holds what opening a trace file involves besides
// package trace's own API, for package trace and the engine alike:
// telling gzip by its magic bytes, and wording an error of the file
// system. Package trace imports it, so it imports nothing of tracegap's.
package tracefile

import (
	"errors"
	"fmt"
	"io/fs"
)

// IsGzip reports whether head, a file's first bytes, starts a gzip
// stream (its magic bytes 1f 8b).
func IsGzip(head []byte) bool { return len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b }

// FileError names the file name once in err, an error from opening or
// stating it: an error from the file system names the file by the path
// it was given ("open X: no such file or directory"), which need not be
// the name the user knows it by, so its cause alone follows name, and
// every command words a missing file alike: "X: no such file or
// directory".
func FileError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", name, err)
}
