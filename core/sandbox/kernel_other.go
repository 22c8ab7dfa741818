//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"runtime"
	"sync"
)

// Supported reports whether gopi has a sandbox for this system at all:
// not yet here.
func Supported() bool { return false }

var probe = sync.OnceValue(probeKernel)

func probeKernel() support {
	return support{why: "gopi's sandbox works on Linux only for now (" + runtime.GOOS + " is not supported yet)"}
}

func prepare(int, bool, []string) (*os.File, uint32, [][]byte, error) {
	return nil, 0, nil, errors.New("no sandbox on " + runtime.GOOS)
}
