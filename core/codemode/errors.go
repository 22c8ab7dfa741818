package codemode

import (
	"errors"
	"fmt"
)

// ErrSource marks a script the tool refuses before it runs: empty, or
// with a bad options line. The error's text is what the model reads.
var ErrSource = errors.New("codemode: bad script source")

// ErrNoModel is what models.classify() and models.generateImages()
// reject with: gopi runs no classifier or image models.
var ErrNoModel = errors.New("gopi has no classifier or image models")

// sourceError is a refused script's reason; it is an [ErrSource].
type sourceError struct{ msg string }

func (e *sourceError) Error() string        { return e.msg }
func (e *sourceError) Is(target error) bool { return target == ErrSource }

func sourceErrorf(format string, args ...any) error {
	return &sourceError{msg: fmt.Sprintf(format, args...)}
}
