package gate

import "errors"

// pi's texts for a call the extensions stopped (their capitals are pi's:
// the model reads them as they are).
var (
	// ErrExtensionFailed blocks a call whose tool_call handlers failed.
	ErrExtensionFailed = errors.New("Extension failed, blocking execution")
	// ErrBlocked is a block without a reason.
	ErrBlocked = errors.New("Blocked by extension")
)
