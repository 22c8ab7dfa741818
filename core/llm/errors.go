package llm

import "errors"

// ErrInvalidThinkingLevel rejects a thinking level name that is none of
// [ThinkingLevels]; the error names it.
var ErrInvalidThinkingLevel = errors.New("invalid thinking level")

// ErrRefused ends a reply the model declined to write (Anthropic's
// stop_reason "refusal"). A provider wraps it with its own words; the
// reply is a StopError marked [AssistantMessage.Refused].
var ErrRefused = errors.New("the model declined to answer")

// Decoding errors; each is wrapped with the place it was found.
var (
	errUnknownContentType = errors.New("unknown type")
	errNoRole             = errors.New("missing role")
	errNotJSON            = errors.New("not valid JSON")
	errNotObject          = errors.New("want a JSON object")
	errNotString          = errors.New("not a string")
	errContentShape       = errors.New("content: want an array of blocks or a string")
	errSectionsShape      = errors.New("sections: want an object")
)
