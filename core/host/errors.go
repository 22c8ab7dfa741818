package host

import (
	"errors"

	"github.com/gopi-dev/gopi/core/api"
)

// notYet is the failure of a command gopi does not serve yet; its text
// is what the client reads.
type notYet string

func (e notYet) Error() string {
	return string(e) + " is not implemented in this version of gopi yet"
}
func (e notYet) Unwrap() error { return api.ErrNotImplemented }

// errStreaming is pi's answer to a prompt sent during a run without a
// streamingBehavior.
var errStreaming = errors.New("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.")
