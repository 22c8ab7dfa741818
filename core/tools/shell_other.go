//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

func ownProcessGroup(*exec.Cmd) {}

// killGroup kills the process; without process groups its children may
// survive.
func killGroup(pid int, _ bool) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// Without process groups nothing is tracked past its command.
func groupAlive(int) bool { return false }

func signalGroup(int, bool) {}
