// Package atomicfile replaces a file's contents all at once: readers see
// the old file or the new one, never half of it.
//
// The path is the user's, so the file keeps what makes it theirs: a
// symlink is written through to its target (the link stays a link), an
// existing file keeps its permission bits, and a file with other hard
// links is rewritten in place so every name still shows the new
// contents. A path that exists and is not a regular file (a FIFO, a
// device, a socket, a directory) is refused before anything opens it.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gopi-dev/gopi/internal/regularfile"
)

// maxLinks bounds how many symlinks Target follows.
const maxLinks = 40

// Target is the file a write to path lands in: path itself, or the end
// of its symlink chain (which need not exist yet). It fails for a path
// that exists and is not a regular file.
func Target(path string) (string, fs.FileInfo, error) {
	for range maxLinks {
		info, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			dest, err := os.Readlink(path)
			if err != nil {
				return "", nil, err
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(path), dest)
			}
			path = dest
			continue
		}
		if !info.Mode().IsRegular() {
			return "", nil, fmt.Errorf("refusing to write %s: it is %s: %w", path, regularfile.Kind(info.Mode()), ErrNotRegular)
		}
		return path, info, nil
	}
	return "", nil, fmt.Errorf("refusing to write %s: too many symbolic links", path)
}

// Write replaces the contents of path (see the package doc) with data:
// through a temporary file in the target's directory (named by pattern,
// as for os.CreateTemp) renamed over it, or in place when the file has
// other hard links. A new file is 0644. On failure the temporary file is
// removed. The directory must exist.
func Write(path string, data []byte, pattern string) error {
	return WritePerm(path, data, pattern, 0o644)
}

// WritePerm is Write where a new file gets the permission bits perm
// (0600 for a file that may hold credentials); an existing one keeps its
// own.
func WritePerm(path string, data []byte, pattern string, perm fs.FileMode) error {
	target, info, err := Target(path)
	if err != nil {
		return err
	}
	mode := perm
	if info != nil {
		mode = info.Mode().Perm()
		if links(info) > 1 {
			return writeInPlace(target, data)
		}
	}
	return replace(target, data, pattern, mode)
}

// WriteKeepingFile is Write for a file the user keeps their own ways
// (a file the write tool changes): an existing file is rewritten in
// place, so its inode, hard links, owner and mode all stay; a new one is
// written as Write does. A reader may see it half written.
func WriteKeepingFile(path string, data []byte, pattern string) error {
	return WriteKeepingFilePerm(path, data, pattern, 0o644)
}

// WriteKeepingFilePerm is WriteKeepingFile where a new file gets the
// permission bits perm (0600 for an export of a conversation).
func WriteKeepingFilePerm(path string, data []byte, pattern string, perm fs.FileMode) error {
	target, info, err := Target(path)
	if err != nil {
		return err
	}
	if info != nil {
		return writeInPlace(target, data)
	}
	return replace(target, data, pattern, perm)
}

func replace(target string, data []byte, pattern string, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(target), pattern)
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// writeInPlace truncates and rewrites target, checking again that what
// it opened is a regular file.
func writeInPlace(target string, data []byte) error {
	f, err := os.OpenFile(target, os.O_WRONLY|nonBlock, 0)
	if err != nil {
		return err
	}
	return rewriteOpen(f, target, data)
}

// rewriteOpen truncates and rewrites f, opened for writing at target, if
// it is a regular file, and closes it.
func rewriteOpen(f *os.File, target string, data []byte) error {
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("refusing to write %s: it is %s: %w", target, regularfile.Kind(info.Mode()), ErrNotRegular)
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
