package anthropic

import (
	"errors"

	"github.com/gopi-dev/gopi/core/llm"
)

var (
	// errNoRequest fails a call without a model or request.
	errNoRequest = errors.New("anthropic: missing model or request")

	// errNoBody is an answer without a body to stream.
	errNoBody = llm.TransportFailure("anthropic: the response has no body", nil)

	// errEndedEarly is a stream whose body ended cleanly but before
	// message_stop: a proxy or server gave up. The wording keeps it
	// retryable for the agent ("ended without").
	errEndedEarly = llm.TransportFailure("anthropic stream ended unexpectedly: the response ended without message_stop", nil)

	// errStopped: the consumer stopped reading; nothing more is to be said.
	errStopped = errors.New("anthropic: the consumer stopped")

	// errStreamEvent is an error event whose body is not the API's error
	// JSON; the error carries the body.
	errStreamEvent = errors.New("received error while streaming")

	// errUnknownStop ends a message with a stop reason gopi does not know.
	errUnknownStop = errors.New("unhandled stop reason")
)
