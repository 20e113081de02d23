//go:build !unix

package trace_test

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }
