// Package shared holds what package trace shares with tracegap's readers,
// writers and engine but no program outside tracegap needs: gzip
// sniffing, the wording of file errors, the order of device ids and the
// name of tracegap's annotations. Package trace imports it, so it imports
// nothing of tracegap's.
package shared

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
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

// CompareDevice orders device ids by kind and then by number, so that
// "GPU:2" sorts before "GPU:10".
func CompareDevice(a, b string) int {
	ak, an := splitDevice(a)
	bk, bn := splitDevice(b)
	if c := strings.Compare(ak, bk); c != 0 {
		return c
	}
	if an != bn {
		if an < bn {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func splitDevice(id string) (string, int) {
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return id, -1
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil {
		return id, -1
	}
	return id[:i], n
}

// AnnotationProcess names the process (Chrome JSON) and, after
// "/device:CUSTOM:", the plane (XPlane) that tracegap's annotated traces
// add: its gap and step slices are conclusions, not host work, so readers
// keep its tracks as context and an annotated trace analyses as the
// original did.
const AnnotationProcess = "tracegap"
