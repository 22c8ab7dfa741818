package run

import "errors"

// The texts below are pi's answers, word for word: clients show them and
// some match them, so they change only when pi's do.
var (
	// ErrStreaming answers a prompt sent during a run without a
	// streamingBehavior.
	ErrStreaming = errors.New("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")
)
