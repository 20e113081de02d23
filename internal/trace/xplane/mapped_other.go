//go:build !linux

package xplane

import (
	"errors"
	"os"
)

func mapFile(*os.File, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) {}

func unmapPages([]byte, int, int) {}
