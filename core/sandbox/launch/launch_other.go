//go:build !linux

package launch

import "runtime"

func launch([]string) string { return "gopi's sandbox works on Linux only (not " + runtime.GOOS + ")" }
