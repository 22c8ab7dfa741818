//go:build !unix

package main

import (
	"errors"
	"os"
	"runtime"
)

// peakRSS is not measured here: the process accounting has no peak
// resident set on this OS.
func peakRSS(*os.ProcessState) (int64, error) {
	return 0, errors.New("no peak resident set on " + runtime.GOOS)
}
