package redisserver

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill the server when the process that
// started it dies: a test binary that panics, or that go test's -timeout
// ends, runs no cleanup, and its server would listen on for good.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
