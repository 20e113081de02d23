//go:build !unix

package cli

import "io"

// ttyWidth returns 0: the width of a terminal is read on Unix only
// (COLUMNS still sets it; see textWidth).
func ttyWidth(io.Writer) int { return 0 }
