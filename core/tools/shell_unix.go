//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd as the leader of a new process group.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup signals the process group led by pid: SIGTERM, or SIGKILL
// when hard is set. Falls back to the leader alone.
func killGroup(pid int, hard bool) {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		_ = syscall.Kill(pid, sig)
	}
}
