//go:build unix

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ttyWidth returns the width in columns of the terminal w is, 0 when w is
// no terminal.
func ttyWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(w) {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
