package compaction

import "errors"

var (
	// ErrAlreadyCompacted rejects a branch whose newest entry is already a
	// compaction: there is nothing new to fold in.
	ErrAlreadyCompacted = errors.New("already compacted")
	// ErrNothingToCompact marks a branch too small (or too recently
	// compacted) for a cut to drop anything.
	ErrNothingToCompact = errors.New("nothing to compact")
	// ErrNoEntryID marks a first kept entry without an id (a session that
	// was never migrated to version 3).
	ErrNoEntryID = errors.New("first kept entry has no id")
	// ErrSummaryFailed marks a summarisation request the model answered
	// with an error, an abort of its own, or no text at all.
	ErrSummaryFailed = errors.New("summary failed")
	// ErrNoModel: a summary was asked for without a model.
	ErrNoModel = errors.New("no model")

	// errNoPreparation: Compact was called without a preparation.
	errNoPreparation = errors.New("no preparation")
	// errSiblingFailed cancels one summary request when the other failed.
	errSiblingFailed = errors.New("the other summary request failed")
)
