package ext

import (
	"errors"
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

// hostUnsupported: the pipe to the host is two inherited file descriptors
// besides stdio, which Go cannot hand to a child process on Windows.
func hostUnsupported() error {
	return errors.New("pi extensions are not available on Windows yet: the extension host's pipe needs inherited file descriptors, which Windows processes started from Go do not get")
}
