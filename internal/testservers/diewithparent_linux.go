package testservers

import "syscall"

// dieWithParent has the kernel stop the server (SIGQUIT: an immediate
// shutdown) should the test binary die without calling Stop.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGQUIT }
