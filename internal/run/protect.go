package run

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// PanicError is a panic turned into an error: a bug met while reading or
// analysing one input, reported as that input's failure.
type PanicError struct {
	// What was being done ("analysing", "reading").
	What string
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, for a log.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error while %s: %v", e.What, e.Value)
}

// Protect calls f and returns its error or, when f panics, a *PanicError
// saying what was being done. It is how one input's bug is kept from
// taking down the other inputs, or the service.
func Protect(what string, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{What: what, Value: v, Stack: debug.Stack()}
		}
	}()
	return f()
}

// Named returns err naming the input name once: prefixed with it, unless
// its message starts with it already, or with a file under it (a rank's
// in the directory that names a job).
func Named(name string, err error) error {
	msg := err.Error()
	under := name != "" && strings.HasPrefix(msg, strings.TrimSuffix(name, "/")+"/")
	if strings.HasPrefix(msg, name+":") || under {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}
