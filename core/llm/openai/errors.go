package openai

import (
	"errors"

	"github.com/gopi-dev/gopi/core/llm"
)

var (
	// errNoChatRequest and errNoRespRequest fail a call without a model
	// or request.
	errNoChatRequest = errors.New("openai-completions: no model or request")
	errNoRespRequest = errors.New("openai-responses: no model or request")

	// errChatEndedEarly is a Chat Completions stream cut before any
	// finish_reason.
	errChatEndedEarly = llm.TransportFailure("stream ended before the model finished (no finish_reason)", nil)

	// errRespEndedEarly is a Responses stream cut before the response
	// completed.
	errRespEndedEarly = llm.TransportFailure("stream ended before the response completed", nil)

	// errFinishReason is a finish_reason that is not a clean end (a
	// content filter, ...); the error names it.
	errFinishReason = errors.New("Provider finish_reason")

	// errIncomplete is a failed response that says only why it is
	// incomplete; the error carries the reason.
	errIncomplete = errors.New("incomplete")

	// errNoDetails is a failed response that says nothing more.
	errNoDetails = errors.New("response failed without error details")

	// errRespFailed and errRespCancelled end a response completed with
	// that status.
	errRespFailed    = errors.New("response failed")
	errRespCancelled = errors.New("response cancelled")
)
