package google

import "errors"

var (
	// errNoRequest fails a call without a model or request.
	errNoRequest = errors.New("google: missing model or request")

	// errPromptBlocked: Gemini refused the prompt; the error carries its
	// block reason.
	errPromptBlocked = errors.New("google: prompt blocked")

	// errNoFinishReason is a stream that ended without saying why.
	errNoFinishReason = errors.New("google: stream ended without a finish reason")

	// errFinishReason is a finish reason that is not a clean stop (safety,
	// recitation, ...); the error names it and Gemini's message.
	errFinishReason = errors.New("google: generation stopped with finish reason")
)
