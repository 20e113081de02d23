//go:build !unix

package inputs

// isLoop reports whether err says a path's symbolic links loop: not told
// apart from a broken link here.
func isLoop(error) bool { return false }
