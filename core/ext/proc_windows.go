package ext

import (
	"os/exec"
	"syscall"
)

// hostProcAttr: Windows has no process groups to kill; the host exits when
// its pipe from gopi closes.
func hostProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the host process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
