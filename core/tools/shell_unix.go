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

// signalGroup signals the group pgid and nothing else: SIGTERM, or
// SIGKILL when hard is set.
func signalGroup(pgid int, hard bool) {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pgid, sig)
}

// groupAlive reports whether a process of the group pgid still runs. A
// group gopi may not signal (EPERM) is not one of its own any more.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil {
		return false
	}
	return groupRunning(pgid)
}
