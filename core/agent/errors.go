package agent

import "errors"

var (
	// ErrAborted is the cause a run's context is cancelled with by
	// [Agent.Abort]. Its text is what an aborted assistant message carries
	// as errorMessage, the same words pi uses, hence the capital.
	ErrAborted = errors.New("Request was aborted")

	// ErrBusy: a prompt or continuation was started while a run is active.
	// Queue the message with [Agent.Steer] or [Agent.FollowUp] instead.
	ErrBusy = errors.New("agent is already processing a prompt")

	// ErrEmptyPrompt: a prompt was started without a message.
	ErrEmptyPrompt = errors.New("prompt needs at least one message")

	// ErrNoMessages: there is nothing to continue from.
	ErrNoMessages = errors.New("no messages to continue from")

	// ErrContinueFromAssistant: the last message is an assistant reply and
	// no queued message could follow it.
	ErrContinueFromAssistant = errors.New("cannot continue from message role: assistant")
)
