//go:build unix

package inputs

import (
	"errors"
	"syscall"
)

// isLoop reports whether err says a path's symbolic links loop.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
