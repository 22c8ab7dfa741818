package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gopi-dev/gopi/internal/atomicfile"
)

// Pin is the file an approved read, edit or write may work on: what its
// path led to when the approval question was asked, the file there or,
// when there was none, the directory the file was to be made in. Handed
// to the tool with [WithPin], it makes [LocalFS] refuse the call when the
// path leads elsewhere since: a link put in the file's place or in a
// directory's on the way, the file replaced by another or removed, a
// file or link made where there was none. The refusal wraps
// [ErrChangedSinceApproval] and says what the path is now; nothing is
// read or written.
type Pin struct {
	p atomicfile.Pin
}

// pinnedTool reports whether the tool's approved calls are pinned.
func pinnedTool(toolName string) bool {
	return toolName == NameRead || toolName == NameEdit || toolName == NameWrite
}

// PinCall is the approved call of a read, edit or write whose target t
// ([CallTarget]) the question named, made to work on that file: when a
// link led to it, the path becomes the file's real one, so a link
// changed afterwards cannot send the call elsewhere; and the pin of the
// file as t found it, which [WithPin] hands the tool. ok is false for
// other calls.
func PinCall(toolName string, args json.RawMessage, t Target) (pinned json.RawMessage, p Pin, ok bool) {
	if !pinnedTool(toolName) || !t.pinned {
		return args, Pin{}, false
	}
	pinned = args
	if t.Linked && t.Real != "" {
		var m map[string]json.RawMessage
		if json.Unmarshal(args, &m) != nil || m == nil {
			return args, Pin{}, false
		}
		path, err := json.Marshal(t.Real)
		if err != nil {
			return args, Pin{}, false
		}
		m["path"] = path
		if pinned, err = json.Marshal(m); err != nil {
			return args, Pin{}, false
		}
	}
	return pinned, Pin{p: t.pin}, true
}

// opened is the path an approved call of the target's tool opens: its
// real one when a link led to it (see [PinCall]), else Abs.
func (t Target) opened() string {
	if t.Linked && t.Real != "" {
		return t.Real
	}
	return t.Abs
}

type pinKey struct{}

// WithPin gives the tool that runs with ctx the pin of the file its call
// was approved for.
func WithPin(ctx context.Context, p Pin) context.Context {
	return context.WithValue(ctx, pinKey{}, p)
}

// pinFor is the pin ctx holds for the file at name, if any.
func pinFor(ctx context.Context, name string) (atomicfile.Pin, bool) {
	p, ok := ctx.Value(pinKey{}).(Pin)
	if !ok || p.p.Path() != filepath.Clean(name) {
		return atomicfile.Pin{}, false
	}
	return p.p, true
}

// CheckPin reports whether name, when it is the file ctx holds a pin for
// (see [WithPin]), still leads to the pinned file. [LocalFS] checks
// every read and write itself, on the file it opened; an [FS] that
// hands the work to another program (an editor writing its buffer) calls
// CheckPin first.
func CheckPin(ctx context.Context, name string) error {
	if p, ok := pinFor(ctx, name); ok {
		return pinError(p.Check())
	}
	return nil
}

// pinError words a pin's refusal for the model; other errors pass as
// they are.
func pinError(err error) error {
	var c *atomicfile.ChangedError
	if !errors.As(err, &c) {
		return err
	}
	return changedError{c}
}

// changedError is a pin's refusal as the model reads it.
type changedError struct{ c *atomicfile.ChangedError }

func (e changedError) Error() string {
	return fmt.Sprintf("%s changed while the approval question waited (it is now %s); "+
		"the approval was for the file the question named, so nothing was read or written", e.c.Path, e.c.Now)
}

func (e changedError) Unwrap() error { return e.c }
