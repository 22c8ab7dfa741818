//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// peakRSS is the finished process's peak resident set, as getrusage
// reports it (KiB on Linux).
func peakRSS(ps *os.ProcessState) (int64, error) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, errors.New("no rusage on this system")
	}
	return ru.Maxrss, nil
}
