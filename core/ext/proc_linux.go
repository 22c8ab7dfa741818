package ext

import (
	"os/exec"
	"syscall"
)

// hostProcAttr puts the host in a process group of its own (so what its
// extensions start can be killed with it) and has the kernel kill it if
// gopi dies without closing it.
func hostProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the host's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// hostUnsupported is nil: the host runs here.
func hostUnsupported() error { return nil }
