//go:build !linux

package testservers

import "syscall"

// dieWithParent does nothing: only Linux stops a child with its parent.
func dieWithParent(*syscall.SysProcAttr) {}
