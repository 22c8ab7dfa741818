package atomicfile

import (
	"errors"
	"fmt"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

var (
	// ErrNotRegular marks a path that exists and is not a regular file.
	ErrNotRegular = regularfile.ErrNotRegular
	// ErrChanged marks a pinned path that no longer leads to what it led
	// to when it was pinned (see [Pin]); the error is a [*ChangedError].
	ErrChanged = errors.New("not the file that was pinned")
)

// ChangedError says how a pinned path changed: which path (the file's,
// or a directory's on the way to it) and what it is now.
type ChangedError struct {
	// Path is the path that changed.
	Path string
	// Now is what Path is now, as a phrase: "a link to /etc/passwd",
	// "another file", "gone".
	Now string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed since it was pinned: it is now %s", e.Path, e.Now)
}

// Is makes errors.Is(err, ErrChanged) hold.
func (e *ChangedError) Is(target error) bool { return target == ErrChanged }
