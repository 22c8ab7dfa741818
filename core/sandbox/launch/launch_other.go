//go:build !linux

package launch

import "runtime"

func launch([]string) string {
	return "gopi's launcher works on Linux only (not " + runtime.GOOS + ")"
}
