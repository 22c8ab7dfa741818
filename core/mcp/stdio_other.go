//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

// Without process groups (Windows) the server alone is stopped: what it
// started itself may outlive it.
func ownGroup(*exec.Cmd) {}

func terminateGroup(pid int) { killProcess(pid) }
func killGroup(pid int)      { killProcess(pid) }

func killProcess(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
