package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

// Pin is what a path led to at one moment: the file there, or, when
// there was none, the nearest directory above it that existed and the
// names that lead from that directory down to the file. Reading or
// writing through a Pin works on that file, or creates it in that
// directory, and on nothing else: when the path leads elsewhere since
// (a link put in the file's place or a directory's, a file replaced by
// another), the Pin refuses with a [*ChangedError] and touches nothing.
//
// The checks are made on what is opened, not on the path before it is
// opened: an existing file is opened without following a link and
// compared with the pinned one before a byte is written; a new file is
// created with O_EXCL inside the pinned directory, opened and compared
// first, each directory on the way opened without following a link.
type Pin struct {
	path string
	// file is what was at path, a link there not followed; nil when
	// there was nothing.
	file fs.FileInfo
	// When file is nil: dir is the nearest directory above path that
	// existed, dirInfo what it was, and rest the names from dir down to
	// path, the file's own last.
	dir     string
	dirInfo fs.FileInfo
	rest    []string
	// err is why path could not be pinned; every use returns it.
	err error
}

// PinPath pins what the absolute path leads to now.
func PinPath(path string) Pin {
	p := Pin{path: filepath.Clean(path)}
	info, err := os.Lstat(p.path)
	if err == nil {
		p.file = info
		return p
	}
	if !errors.Is(err, fs.ErrNotExist) {
		p.err = err
		return p
	}
	rest := []string{filepath.Base(p.path)}
	for dir := filepath.Dir(p.path); ; dir = filepath.Dir(dir) {
		info, err := os.Stat(dir)
		switch {
		case err == nil:
			slices.Reverse(rest)
			p.dir, p.dirInfo, p.rest = dir, info, rest
			return p
		case !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir:
			p.err = err
			return p
		}
		rest = append(rest, filepath.Base(dir))
	}
}

// Path is the pinned path.
func (p Pin) Path() string { return p.path }

// Check reports whether the path still leads to what was pinned: nil, a
// [*ChangedError], or the error that kept it from being pinned or
// checked. It opens no file; [Pin.Verify] and [Pin.Write] check what
// they open.
func (p Pin) Check() error {
	if p.err != nil {
		return p.err
	}
	if p.file != nil {
		if info, err := os.Lstat(p.path); err == nil && sameFile(info, p.file) {
			return nil
		}
		return p.fileChanged()
	}
	root, err := p.openDir(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a directory on the way is still missing
	}
	if err != nil {
		return err
	}
	defer root.Close()
	name := p.rest[len(p.rest)-1]
	if _, err := root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return p.appeared(root, name)
}

// Verify reports whether f, opened at the path (links followed), is the
// pinned file: nil, or a [*ChangedError] when the path led elsewhere.
func (p Pin) Verify(f *os.File) error {
	if p.err != nil {
		return p.err
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if p.file != nil && sameFile(info, p.file) {
		return nil
	}
	if p.file == nil {
		now := "a file where there was none"
		if li, err := os.Lstat(p.path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			now = linkPhrase(p.path, func() (string, error) { return os.Readlink(p.path) })
		}
		return &ChangedError{Path: p.path, Now: now}
	}
	if c := p.fileChanged(); c != nil {
		return c
	}
	return &ChangedError{Path: p.path, Now: "another file"}
}

// MkdirAll makes the directories a new file's path lacked when it was
// pinned, below the pinned directory, following no link; a directory
// made meanwhile is used. Nothing is made outside the pinned directory.
func (p Pin) MkdirAll() error {
	if p.err != nil {
		return p.err
	}
	if p.file != nil {
		return nil
	}
	root, err := p.openDir(true)
	if err != nil {
		return err
	}
	return root.Close()
}

// Write puts data in the pinned file as [WriteKeepingFile] does: an
// existing file is rewritten in place, keeping its inode, hard links,
// owner and mode; a new one is created with the permission bits perm
// (its directory must exist: see [Pin.MkdirAll]). When the path leads
// elsewhere now, or a file appeared where there was none, nothing is
// written and the error is a [*ChangedError].
func (p Pin) Write(data []byte, perm fs.FileMode) error {
	if p.err != nil {
		return p.err
	}
	if p.file != nil {
		f, err := os.OpenFile(p.path, os.O_WRONLY|nonBlock|noFollow, 0)
		if err != nil {
			if c := p.fileChanged(); c != nil {
				return c
			}
			return err
		}
		if err := p.Verify(f); err != nil {
			f.Close()
			return err
		}
		return rewriteOpen(f, p.path, data)
	}
	root, err := p.openDir(false)
	if err != nil {
		return err
	}
	defer root.Close()
	name := p.rest[len(p.rest)-1]
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return p.appeared(root, name)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(name)
	}
	return err
}

// openDir opens the pinned directory of a new file and, below it, each
// directory on the way to the file, following no link; with create it
// makes those missing. It fails with a [*ChangedError] when one of them
// is not the directory it was (or, made meanwhile, is a link).
func (p Pin) openDir(create bool) (*os.Root, error) {
	root, err := os.OpenRoot(p.dir)
	var info fs.FileInfo
	if err == nil {
		if info, err = root.Stat("."); err == nil && !sameFile(info, p.dirInfo) {
			err = &ChangedError{Path: p.dir, Now: "another directory"}
			if c := p.dirChanged(); c != nil {
				err = c
			}
		}
		if err != nil {
			root.Close()
		}
	} else if c := p.dirChanged(); c != nil {
		err = c
	}
	if err != nil {
		return nil, err
	}
	here := p.dir
	for _, name := range p.rest[:len(p.rest)-1] {
		here = filepath.Join(here, name)
		info, err = root.Lstat(name)
		if create && errors.Is(err, fs.ErrNotExist) {
			if err = root.Mkdir(name, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				info, err = root.Lstat(name)
			}
		}
		var sub *os.Root
		switch {
		case err != nil:
		case info.Mode()&fs.ModeSymlink != 0:
			err = &ChangedError{Path: here, Now: linkPhrase(here, func() (string, error) { return root.Readlink(name) })}
		case !info.IsDir():
			err = fmt.Errorf("%s is %s, not a directory", here, kindOf(info.Mode()))
		default:
			if sub, err = root.OpenRoot(name); err == nil {
				var got fs.FileInfo
				if got, err = sub.Stat("."); err == nil && !sameFile(got, info) {
					err = &ChangedError{Path: here, Now: "another directory"}
				}
				if err != nil {
					sub.Close()
				}
			}
		}
		root.Close()
		if err != nil {
			return nil, err
		}
		root = sub
	}
	return root, nil
}

// fileChanged says what the pinned file's path is now; nil when it is
// still the pinned file.
func (p Pin) fileChanged() *ChangedError {
	info, err := os.Lstat(p.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &ChangedError{Path: p.path, Now: "gone"}
	case err != nil:
		return nil
	case sameFile(info, p.file):
		return nil
	case info.Mode()&fs.ModeSymlink != 0:
		return &ChangedError{Path: p.path, Now: linkPhrase(p.path, func() (string, error) { return os.Readlink(p.path) })}
	case info.IsDir():
		return &ChangedError{Path: p.path, Now: "a directory"}
	}
	return &ChangedError{Path: p.path, Now: "another file"}
}

// appeared says what is at name, in the new file's directory root, where
// nothing was.
func (p Pin) appeared(root *os.Root, name string) *ChangedError {
	now := "a file where there was none"
	if info, err := root.Lstat(name); err == nil {
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			now = linkPhrase(p.path, func() (string, error) { return root.Readlink(name) })
		case info.IsDir():
			now = "a directory where there was none"
		}
	}
	return &ChangedError{Path: p.path, Now: now}
}

// dirChanged says what the pinned directory's path is now; nil when it
// still leads to that directory, or what it is cannot be told.
func (p Pin) dirChanged() *ChangedError {
	dir := p.dir
	if info, err := os.Stat(dir); err == nil && sameFile(info, p.dirInfo) {
		return nil
	}
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &ChangedError{Path: dir, Now: "gone"}
	case err != nil:
		return nil
	case info.Mode()&fs.ModeSymlink != 0:
		return &ChangedError{Path: dir, Now: linkPhrase(dir, func() (string, error) { return os.Readlink(dir) })}
	case !info.IsDir():
		return &ChangedError{Path: dir, Now: kindOf(info.Mode())}
	}
	return &ChangedError{Path: dir, Now: "another directory"}
}

// linkPhrase is "a link to" the absolute destination of the link at
// path, which readlink reads.
func linkPhrase(path string, readlink func() (string, error)) string {
	dest, err := readlink()
	if err != nil {
		return "a link"
	}
	if !filepath.IsAbs(dest) {
		dest = filepath.Join(filepath.Dir(path), dest)
	}
	return "a link to " + dest
}

// kindOf names what a file mode is: "a regular file", "a named pipe"...
func kindOf(m fs.FileMode) string {
	if m.IsRegular() {
		return "a regular file"
	}
	return regularfile.Kind(m)
}

// sameFile reports whether a and b are the same file: its device and
// inode, and its type, since a number a removed file freed may be given
// to a link made in its place.
func sameFile(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Mode().Type() == b.Mode().Type()
}
