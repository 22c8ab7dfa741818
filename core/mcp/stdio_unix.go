//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that stopping
// the server stops what it started too.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// terminateGroup and killGroup signal the process group pid leads.
func terminateGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }
func killGroup(pid int)      { _ = syscall.Kill(-pid, syscall.SIGKILL) }
