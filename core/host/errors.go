package host

import "errors"

// errStreaming is pi's answer to a prompt sent during a run without a
// streamingBehavior.
var errStreaming = errors.New("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")
