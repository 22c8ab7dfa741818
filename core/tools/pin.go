package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Pin is the file an approved edit or write was shown: the path it must
// change, resolved through every link when the question was asked, and
// the file that was there then (its device and inode), or none. The tool
// checks the pin just before it touches the path, and refuses when the
// path no longer reaches that file: a link put in its place or on its way
// while the question waited, the file replaced by another. What the user
// approved is the file they were shown, never where a link points later.
type Pin struct {
	path    string
	existed bool
	id      fileID
}

// fileID tells one file from another on this machine.
type fileID struct{ dev, ino uint64 }

// errPinMoved: a pinned path no longer reaches the file the question
// showed; the error says what it reaches now.
var errPinMoved = errors.New("changed while the question waited")

// PinTarget pins the target of an edit or write about to be asked about
// (t is its [CallTarget]). Only the local disk is pinned: a client's file
// system (ACP's) writes where the editor says. ok is false for other
// tools and when the target cannot be worked out (the call then fails on
// its own).
func PinTarget(toolName string, t Target, opts ...Option) (Pin, bool) {
	if toolName != NameEdit && toolName != NameWrite || t.Real == "" {
		return Pin{}, false
	}
	if _, local := newConfig(opts).fs.(LocalFS); !local {
		return Pin{}, false
	}
	p := Pin{path: t.Real}
	info, err := os.Lstat(t.Real)
	switch {
	case err == nil:
		p.existed, p.id = true, idOf(info)
	case !errors.Is(err, fs.ErrNotExist):
		return Pin{}, false
	}
	return p, true
}

type pinKey struct{}

// WithPin makes the edit or write run under ctx hold to p.
func WithPin(ctx context.Context, p Pin) context.Context {
	return context.WithValue(ctx, pinKey{}, p)
}

// checkPin fails when ctx pins abs (as the tool resolves it, or the file
// it reaches) and abs no longer reaches the pinned file.
func checkPin(ctx context.Context, abs string) error {
	p, ok := ctx.Value(pinKey{}).(Pin)
	if !ok {
		return nil
	}
	return p.check(abs)
}

func (p Pin) check(abs string) error {
	// The call's path is the pinned one itself after the gate replaced
	// a linked path by its target; a path that resolves elsewhere now
	// went through a link that was not there.
	real, err := RealPath(abs)
	if err != nil {
		return fmt.Errorf("%s %w: %w", abs, errPinMoved, err)
	}
	if real != p.path {
		return fmt.Errorf("%s %w: it now leads to %s; nothing was written", abs, errPinMoved, real)
	}
	info, err := os.Lstat(p.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if p.existed {
			return fmt.Errorf("%s %w: the file is gone; nothing was written", abs, errPinMoved)
		}
		return nil
	case err != nil:
		return fmt.Errorf("%s %w: %w", abs, errPinMoved, err)
	case info.Mode()&fs.ModeSymlink != 0:
		dest, _ := os.Readlink(p.path)
		return fmt.Errorf("%s %w: it is now a link to %s; nothing was written", abs, errPinMoved, dest)
	case !p.existed:
		return fmt.Errorf("%s %w: a file appeared there that the question did not show; nothing was written", abs, errPinMoved)
	case idOf(info) != p.id:
		return fmt.Errorf("%s %w: it was replaced by another file; nothing was written", abs, errPinMoved)
	}
	return nil
}

// WithPath is a call's arguments with its "path" replaced by path.
func WithPath(args json.RawMessage, path string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args, false
	}
	b, err := json.Marshal(path)
	if err != nil {
		return args, false
	}
	m["path"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return args, false
	}
	return out, true
}
