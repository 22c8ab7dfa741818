package agent

import (
	"errors"
	"fmt"
	"strings"
)

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

	// ErrNoModel: a run reached the model with none selected.
	ErrNoModel = errors.New("no model selected")

	// ErrNoProvider: no provider streams the model's API; the error names
	// the API.
	ErrNoProvider = errors.New("no provider for API")

	// ErrRunPanicked: the run itself panicked; the error carries the value.
	ErrRunPanicked = errors.New("agent run failed")

	// ErrStreamPanicked: the model stream panicked; the error carries the
	// value.
	ErrStreamPanicked = errors.New("model stream failed")

	// ErrNoFinalEvent: the model stream ended without a done or error
	// event.
	ErrNoFinalEvent = errors.New("model stream ended without a final event")

	// ErrNoFinalMessage: the model stream's final event carried no
	// message; the error names the event.
	ErrNoFinalMessage = errors.New("no message")
)

// Details of a SchemaError or ValidationError.
var (
	errSchemaKind    = errors.New("a schema is an object or a boolean")
	errTrailingValue = errors.New("more than one JSON value")
)

// SchemaError is a tool whose parameter schema cannot be used, in pi's
// words; the model reads it as the tool's result.
type SchemaError struct {
	Tool string
	Err  error
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("Tool %q has an invalid parameter schema: %v", e.Tool, e.Err)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// ValidationError is a tool call whose arguments do not fit the tool's
// schema, in pi's words: every problem, one per line, then the arguments
// as received. The model reads it as the tool's result.
type ValidationError struct {
	Tool string
	// Problems are the lines that say what is wrong ("  - path: ...").
	Problems []string
	// Arguments are the arguments the model sent, as shown back to it.
	Arguments string
	// Err is the decoding error when the arguments were not JSON.
	Err error
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("Validation failed for tool %q:\n%s\n\nReceived arguments:\n%s", e.Tool, strings.Join(e.Problems, "\n"), e.Arguments)
}

func (e *ValidationError) Unwrap() error { return e.Err }
