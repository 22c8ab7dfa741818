// Package regularfile opens files that gopi reads on its own account
// (settings, context files, skills, templates, models.json, sessions) only
// when they are regular files. A FIFO a model made with bash and named
// AGENTS.md, or a session path that is a device, is refused with an
// error instead of blocking gopi on open or read.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular marks a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading (following symlinks) if it is a regular
// file. The type is checked before the open, which does not block (a path
// swapped for a FIFO in between is caught by a second check on the open
// file).
func Open(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, info); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if info, err = f.Stat(); err == nil {
		err = check(path, info)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads path whole if it is a regular file (see Open).
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func check(path string, info fs.FileInfo) error {
	if info.Mode().IsRegular() {
		return nil
	}
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(info.Mode()))}
}

// Kind names what a file mode is, for error messages: "a named pipe",
// "a character device", "a directory"...
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// Missing reports whether err says a path is not there: it does not exist,
// or a folder on its way is a file (ENOTDIR), as when the agent directory
// is set under a regular file. Either way there is nothing to read.
func Missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
