package session

import "errors"

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
	// ErrLocked marks a session file another process kept locked too long.
	ErrLocked = errors.New("the session file is locked by another process")
)
