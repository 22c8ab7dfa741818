package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gopi-dev/gopi/internal/atomicfile"
)

// Target is the file or directory a file tool's call works on, as the
// local disk has it now: what an approval question names.
type Target struct {
	// Abs is the path argument made absolute, as the tool opens it.
	Abs string
	// Real is Abs with every symbolic link followed, those of its
	// directories and of the file itself; a dangling link gives the file a
	// write through it would create. "" when it cannot be worked out (a
	// link loop, a directory that cannot be searched), in which case the
	// call fails too.
	Real string
	// Linked: Real is reached through a symbolic link (one in the
	// project's own path does not count).
	Linked bool
	// Outside: Real is not inside the project: neither in the project
	// directory nor in one of the extra roots CallTarget was given.
	Outside bool

	root string // the project directory, its links followed
	// pin is what the path a read, edit or write opens once approved led
	// to when the target was worked out (pinned); see [PinCall].
	pin    atomicfile.Pin
	pinned bool
}

// Shown is Real as a question names it: relative to the project directory
// when inside it, else absolute (an extra root's files too).
func (t Target) Shown() string {
	if t.root != "" && t.Real != "" {
		if rel, ok := within(t.root, t.Real); ok {
			return rel
		}
	}
	return t.Real
}

// CallTarget works out where a read, edit, write, ls, grep or find call
// with a path argument lands on the local disk, cwd being the project
// directory (relative paths are its) and roots more directories that
// belong to the project (an ACP session's additionalDirectories). ok is
// false for other calls and for calls without a path.
func CallTarget(ctx context.Context, cwd, toolName string, args json.RawMessage, roots ...string) (t Target, ok bool) {
	switch toolName {
	case NameRead, NameEdit, NameWrite, NameLs, NameGrep, NameFind:
	default:
		return Target{}, false
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return Target{}, false
	}
	t.Abs = ResolvePath(a.Path, cwd)
	if toolName == NameRead {
		t.Abs = resolveExisting(ctx, LocalFS{}, a.Path, cwd)
	}
	root, err := RealPath(cwd)
	if err != nil {
		root = filepath.Clean(cwd)
	}
	t.root = root
	defer func() {
		if pinnedTool(toolName) {
			t.pin, t.pinned = atomicfile.PinPath(t.opened()), true
		}
	}()
	if t.Real, err = RealPath(t.Abs); err != nil {
		t.Real = ""
		return t, true
	}
	// The path as written, with the project's own links followed: a link
	// in the path to the project is no news.
	plain := t.Abs
	if rel, ok := within(filepath.Clean(cwd), t.Abs); ok {
		plain = filepath.Join(root, rel)
	}
	t.Linked = t.Real != plain
	_, inside := within(root, t.Real)
	for _, r := range roots {
		if inside {
			break
		}
		real, err := RealPath(r)
		if err != nil {
			real = filepath.Clean(r)
		}
		_, inside = within(real, t.Real)
	}
	t.Outside = !inside
	return t, true
}

// within reports whether p is dir or below it, and p relative to dir.
func within(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// maxLinks bounds the symbolic links RealPath follows, as the kernel does.
const maxLinks = 40

// RealPath is the absolute path abs with every symbolic link followed:
// its directories' and its own, as the kernel follows them when the path
// is opened. Unlike [filepath.EvalSymlinks] it accepts a path that does
// not exist (yet): the missing part is kept as written, and a dangling
// link gives the file that writing through it would create.
func RealPath(abs string) (string, error) {
	p := filepath.Clean(abs)
	for range maxLinks {
		dir, err := realDir(filepath.Dir(p))
		if err != nil {
			return "", err
		}
		p = filepath.Join(dir, filepath.Base(p))
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(dir, dest)
		}
		p = filepath.Clean(dest)
	}
	return "", fmt.Errorf("resolve %s: %w", abs, errLinkLoop)
}

// realDir follows the links of dir's existing part; the rest does not
// exist yet, so it holds none.
func realDir(dir string) (string, error) {
	r, err := filepath.EvalSymlinks(dir)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(dir)
	if parent == dir {
		return dir, nil
	}
	rp, err := realDir(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(dir)), nil
}
