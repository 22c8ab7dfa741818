package session

import (
	"errors"
	"fmt"
)

var (
	// ErrNotSession marks a file whose first line is not a session header.
	ErrNotSession = errors.New("not a session file")
	// ErrEntryNotFound marks an entry id the session does not hold.
	ErrEntryNotFound = errors.New("entry not found")
	// ErrNotForkable marks a fork point that is not a user message, or a
	// clone of a session with no current entry.
	ErrNotForkable = errors.New("invalid entry for forking")
	// ErrSummaryMessage rejects summary messages appended as plain
	// messages: they belong in compaction and branch_summary entries.
	ErrSummaryMessage = errors.New("summary messages must be appended as their own entries")
	// ErrSessionDir marks a sessions folder that cannot be made.
	ErrSessionDir = errors.New("create session dir")
	// ErrLocked marks a session file another process kept locked too long.
	ErrLocked = errors.New("the session file is locked by another process")
	// ErrBadID rejects a session id pi would not accept.
	ErrBadID = errors.New("a session id must be letters, digits, '.', '_' or '-', starting and ending with a letter or digit")
	// ErrBadReplacement rejects a context edit whose replacement is not
	// null, a string or an array.
	ErrBadReplacement = errors.New("a context edit's replacement must be null or hold string or array content")
	// ErrOffBranch marks a context edit's target that is not on the active
	// branch; the error names the entry.
	ErrOffBranch = errors.New("is not on the active branch")
	// ErrNotEditable marks a context edit's target that gives the model no
	// content to edit; the error names the entry.
	ErrNotEditable = errors.New("does not contribute editable model content")
	// ErrNotPreviewable marks an entry type PreviewContext does not take;
	// the error names the type.
	ErrNotPreviewable = errors.New("cannot be previewed")
	// ErrReplaced marks a session file that kept being replaced while gopi
	// waited to write it; the error names the file and the attempts.
	ErrReplaced = errors.New("was replaced")
)

// Why a line of a session file is skipped as damaged, or a message left
// out; each is wrapped with the place it was found.
var (
	errNotObject    = errors.New("not a JSON object")
	errSecondHeader = errors.New("second session header")
	errNoID         = errors.New("entry without an id")
	errNoMessage    = errors.New("message entry without a message")
	errNilMessage   = errors.New("nil message")
	errNotString    = errors.New("must be a string")
	errTrailingData = errors.New("data after the object")
)

// errNoHeader is a file with something in it but no session header first.
var errNoHeader = fmt.Errorf("%w: it does not start with a session header, and gopi leaves it as it is", ErrNotSession)
