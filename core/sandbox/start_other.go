//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
)

// startConfined is never reached off Linux: [New] finds a problem there,
// and [Sandbox.Start] refuses before it.
func startConfined(*exec.Cmd, *os.File, uint32, [][]byte) error {
	return errors.New("no thread confinement off Linux")
}

func needsLauncher(*exec.Cmd) bool { return false }
