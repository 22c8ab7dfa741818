package resources

import "errors"

// ErrCollision marks a template or skill left out because an earlier one
// (higher precedence) has the same name.
var ErrCollision = errors.New("name collision")

// LoadError is a problem with one template or skill file (or an explicit
// path). Skipped says whether the resource was left out; otherwise it loaded
// and the error is a warning.
type LoadError struct {
	Path    string
	Err     error
	Skipped bool
}

func (e *LoadError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }
