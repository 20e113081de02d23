//go:build !linux

package testservers

import "syscall"

// dieWithParent does nothing: only Linux signals a child when its parent
// dies.
func dieWithParent(*syscall.SysProcAttr, syscall.Signal) {}
