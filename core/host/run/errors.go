package run

import "errors"

// The texts below are pi's answers, word for word: clients show them and
// some match them, so they change only when pi's do.
var (
	// ErrStreaming answers a prompt sent during a run without a
	// streamingBehavior.
	ErrStreaming = errors.New("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")
	// ErrCompactionAborted is the cause a compaction or tree summary is
	// cancelled with (abort, or the host closing).
	ErrCompactionAborted = errors.New("Compaction cancelled")
	// ErrCompactionRunning answers a compaction asked during another.
	ErrCompactionRunning = errors.New("A compaction is already running")
	// ErrNothingToCompact: the branch is too short to summarise anything.
	ErrNothingToCompact = errors.New("Nothing to compact (session too small)")
)
