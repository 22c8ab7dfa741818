//go:build darwin

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// probe looks once for sandbox-exec ("" when it is there, else why not).
var probe = sync.OnceValue(func() string {
	if _, err := os.Stat(seatbeltExec); err != nil {
		return "this Mac has no " + seatbeltExec + ": " + err.Error()
	}
	return ""
})

// check is what enforces p on this Mac, or why it cannot be: Seatbelt,
// through sandbox-exec, confines the files and the network alike.
func check(Policy) ([]string, error) {
	if why := probe(); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, why)
	}
	return []string{LayerSeatbelt}, nil
}

// prepare writes the profile once; each command starts under it.
func prepare(p Policy, write []string, _ options) (enforcer, error) {
	profile, err := seatbeltProfile(p, write)
	if err != nil {
		return nil, err
	}
	return seatbeltEnforcer{profile}, nil
}

// seatbeltEnforcer starts each command under sandbox-exec with the
// profile: sandbox-exec applies it to itself and executes the command,
// in the same process.
type seatbeltEnforcer struct{ profile string }

func (e seatbeltEnforcer) start(cmd *exec.Cmd) error {
	cmd.Args = seatbeltArgs(e.profile, cmd.Path, cmd.Args)
	cmd.Path = seatbeltExec
	return cmd.Start()
}

// ByDefault reports whether the dialects that confine by default
// (jsonrpc, acp) do so here. Not on macOS yet: the Seatbelt profile is
// tested as text on Linux and has not run on a Mac in CI, so it is used
// only when asked for (--sandbox, settings); the default stays off.
func ByDefault() bool { return false }
