//go:build !linux

package sandbox

import (
	"runtime"
	"sync"
)

var probe = sync.OnceValue(probeKernel)

func probeKernel() support {
	return support{why: "gopi's sandbox works on Linux only for now (" + runtime.GOOS + " is not supported yet)"}
}
