//go:build !unix

package inputs_test

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }
