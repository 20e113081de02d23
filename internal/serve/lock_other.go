//go:build !unix

package serve

// dirLock does not lock on systems without flock(2): one server per data
// directory is then the operator's to ensure.
type dirLock struct{}

func lockDir(dir string) (*dirLock, error) { return &dirLock{}, nil }

func (l *dirLock) release() error { return nil }
