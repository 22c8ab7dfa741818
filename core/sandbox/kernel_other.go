//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
)

// check refuses every mode: gopi has no sandbox for this OS.
func check(Policy) ([]string, error) {
	return nil, fmt.Errorf("%w: gopi's sandbox works on Linux and macOS only (%s is not supported yet)", ErrUnavailable, runtime.GOOS)
}

// ByDefault reports whether the dialects that confine by default
// (jsonrpc, acp) do so here: not without a sandbox.
func ByDefault() bool { return false }

// prepare is never reached: check refuses first.
func prepare(Policy, []string, options) (enforcer, error) {
	return nil, errors.New("no sandbox on " + runtime.GOOS)
}
