package sandbox

import "errors"

var (
	// ErrUnknownMode is a sandbox mode that is not off, read-only or
	// workspace-write.
	ErrUnknownMode = errors.New("unknown sandbox mode")
	// ErrUnavailable: this machine cannot enforce the mode, so commands
	// are refused rather than run unconfined.
	ErrUnavailable = errors.New("gopi's sandbox cannot be enforced here, so commands are refused")
	// ErrOutside is a write the sandbox does not allow.
	ErrOutside = errors.New("gopi's sandbox denied the write")
)
