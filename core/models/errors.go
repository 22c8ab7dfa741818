package models

import "errors"

// Sentinels for pattern resolution; the errors returned wrap one of them
// and read as pi's messages.
var (
	ErrNoModels        = errors.New("no models")
	ErrUnknownProvider = errors.New("unknown provider")
	ErrModelNotFound   = errors.New("model not found")
)

// resolveError carries pi's user-facing text and a sentinel to test for.
type resolveError struct {
	msg  string
	kind error
}

func (e *resolveError) Error() string { return e.msg }
func (e *resolveError) Unwrap() error { return e.kind }
