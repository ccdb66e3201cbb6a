//go:build !linux

package redisserver

import "os/exec"

// dieWithParent does nothing where the kernel cannot tie a process's life
// to its parent's: Stop is then the only way the server ends.
func dieWithParent(*exec.Cmd) {}
