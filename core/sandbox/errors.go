package sandbox

import "errors"

var (
	// ErrUnknownMode is a sandbox mode that is not off, read-only or
	// workspace-write.
	ErrUnknownMode = errors.New("unknown sandbox mode")
	// ErrUnavailable: this machine cannot enforce the mode, so commands
	// are refused rather than run unconfined.
	ErrUnavailable = errors.New("gopi's sandbox cannot be enforced here, so commands are refused")
	// ErrConfine: a command could not be confined as the mode says, so
	// it was not started.
	ErrConfine = errors.New("gopi's sandbox could not confine the command, so it did not run")
	// ErrPath is a writable directory the sandbox cannot name in its
	// rules (macOS: a control character the profile has no escape for).
	ErrPath = errors.New("a path gopi's sandbox cannot express")
	// ErrOutside is a write the sandbox does not allow.
	ErrOutside = errors.New("gopi's sandbox denied the write")
)
