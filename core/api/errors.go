package api

import (
	"errors"
	"fmt"
)

var (
	// ErrUnknownCommand: no such command type.
	ErrUnknownCommand = errors.New("unknown command")
	// ErrInvalidParams: a command's fields are missing or of the wrong type.
	ErrInvalidParams = errors.New("invalid params")
	// ErrAborted is the cause given to contexts cancelled by abort.
	ErrAborted = errors.New("aborted by the client")
	// ErrShutdown is the cause given when the connection ends.
	ErrShutdown = errors.New("connection closed")
	// ErrNotStarted is wrapped by the answer to a command cancelled (or
	// left behind by the connection's end) before its turn came.
	ErrNotStarted = errors.New("cancelled before it started")
	// ErrNotImplemented marks a command gopi does not serve yet.
	ErrNotImplemented = errors.New("not implemented")
	// ErrIDTooLong: a request's id is longer than MaxID (IDTooLong).
	ErrIDTooLong = errors.New("id too long")
)

// ParamError says which field of a command was wrong.
type ParamError struct {
	Command string
	Field   string
	Reason  string
}

func (e *ParamError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("invalid %s command: %s", e.Command, e.Reason)
	}
	return fmt.Sprintf("invalid %s command: field %q %s", e.Command, e.Field, e.Reason)
}

func (e *ParamError) Unwrap() error { return ErrInvalidParams }
