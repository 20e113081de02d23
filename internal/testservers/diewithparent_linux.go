package testservers

import "syscall"

// dieWithParent has the kernel send the server sig should the test binary
// die without calling Stop, so that no server outlives it.
func dieWithParent(a *syscall.SysProcAttr, sig syscall.Signal) { a.Pdeathsig = sig }
