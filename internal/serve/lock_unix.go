//go:build unix

package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// dirLock is an exclusive lock on a data directory, held while a server
// uses it: a second server on the same directory would delete the first's
// uploads in flight as stale (openBlobs) and race it on the blobs. The
// lock is flock(2) on a file in the directory, so the kernel releases it
// when the process dies, however it dies.
type dirLock struct{ f *os.File }

const lockName = "lock"

func lockDir(dir string) (*dirLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("locking data directory %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another tracegap serve: stop it or give another --data-dir", dir)
		}
		return nil, fmt.Errorf("locking data directory %s: %w", dir, err)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() error { return l.f.Close() } // closing drops the flock
