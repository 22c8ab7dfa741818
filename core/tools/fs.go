package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/gopi-dev/gopi/internal/atomicfile"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// FS is the file system the file tools work on (pi's Read/Write/Edit/Ls
// operations). Paths are absolute. Implement it to run the tools against a
// remote machine or an editor's buffers; [LocalFS] is the local disk.
type FS interface {
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error)
	// ReadFile returns a regular file whole. It refuses anything else
	// (FIFOs, devices, sockets: [ErrNotRegular]) and files over
	// [MaxWholeFile] ([ErrTooLarge]), and stops when ctx ends.
	ReadFile(ctx context.Context, name string) ([]byte, error)
	// Open streams a regular file (refusing others as ReadFile does)
	// without blocking on open; reads fail once ctx ends.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// WriteFile creates or replaces name, keeping the mode of an
	// existing file.
	WriteFile(ctx context.Context, name string, data []byte) error
	MkdirAll(ctx context.Context, dir string) error
}

// LocalFS is [FS] on the local operating system. Its methods honour the
// pin ctx holds ([WithPin]) for the file they are given: an approved call
// works on the file its question named, or fails saying what its path
// leads to now.
type LocalFS struct{}

var _ FS = LocalFS{}

func (LocalFS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	if err := CheckPin(ctx, name); err != nil {
		return nil, err
	}
	return os.Stat(name)
}
func (LocalFS) ReadDir(_ context.Context, name string) ([]fs.DirEntry, error) {
	return os.ReadDir(name)
}

// MaxWholeFile is the largest file the tools read whole (edit, the grep
// fallback, previews): beyond it they say so rather than fill memory.
const MaxWholeFile = 64 << 20

// kindOf names a special file's type for error messages.
func kindOf(m fs.FileMode) string { return regularfile.Kind(m) }

func (LocalFS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	f, err := openPinned(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.Size() > MaxWholeFile {
		return nil, fmt.Errorf("%s is %s, over the %s read whole: %w", name, FormatSize(int(info.Size())), FormatSize(MaxWholeFile), ErrTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx: ctx, f: f}, MaxWholeFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxWholeFile { // it grew since it was opened
		return nil, fmt.Errorf("%s is over the %s read whole: %w", name, FormatSize(MaxWholeFile), ErrTooLarge)
	}
	return data, nil
}

// Open refuses what is not a regular file without blocking on it (see
// internal/regularfile).
func (LocalFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	f, err := openPinned(ctx, name)
	if err != nil {
		return nil, err
	}
	return ctxReader{ctx: ctx, f: f}, nil
}

// openPinned opens name as regularfile.Open does; when ctx holds a pin
// for it, the file opened must be the pinned one.
func openPinned(ctx context.Context, name string) (*os.File, error) {
	p, pinned := pinFor(ctx, name)
	if pinned {
		if err := p.Check(); err != nil {
			return nil, pinError(err)
		}
	}
	f, err := regularfile.Open(name)
	if err != nil || !pinned {
		return f, err
	}
	if err := p.Verify(f); err != nil {
		f.Close()
		return nil, pinError(err)
	}
	return f, nil
}

// ctxReader stops reading once ctx ends, so an abort ends a long read.
type ctxReader struct {
	ctx context.Context
	f   *os.File
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.f.Read(p)
}

func (r ctxReader) Close() error { return r.f.Close() }

// WriteFile writes through symlinks and keeps an existing file's mode,
// owner and inode (rewriting it in place); a path that is not a regular
// file is refused before anything opens it, so a FIFO cannot stall it.
// A pinned file is written only if it is still the pinned one, and a new
// one only where nothing appeared since.
func (LocalFS) WriteFile(ctx context.Context, name string, data []byte) error {
	if p, ok := pinFor(ctx, name); ok {
		return pinError(p.Write(data, newFilePerm))
	}
	return atomicfile.WriteKeepingFilePerm(name, data, ".gopi-write-*.tmp", newFilePerm)
}

// MkdirAll makes dir and its parents; the directory of a pinned new file
// is made below the directory pinned, through no link.
func (LocalFS) MkdirAll(ctx context.Context, dir string) error {
	if p, ok := ctx.Value(pinKey{}).(Pin); ok && filepath.Dir(p.p.Path()) == filepath.Clean(dir) {
		return pinError(p.p.MkdirAll())
	}
	return os.MkdirAll(dir, 0o755)
}

// newFilePerm is the mode of a file the tools create.
const newFilePerm = 0o644

// unicodeSpaces are the space characters models and macOS file names use
// in place of a plain space.
var unicodeSpaces = strings.NewReplacer(
	"\u00a0", " ", "\u2000", " ", "\u2001", " ", "\u2002", " ", "\u2003", " ",
	"\u2004", " ", "\u2005", " ", "\u2006", " ", "\u2007", " ", "\u2008", " ",
	"\u2009", " ", "\u200a", " ", "\u202f", " ", "\u205f", " ", "\u3000", " ",
)

// ExpandPath undoes what models add to paths: a leading "@" (from @file
// mentions), odd Unicode spaces, and "~" for the home directory.
func ExpandPath(p string) string {
	p = strings.TrimPrefix(p, "@")
	p = unicodeSpaces.Replace(p)
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return home + p[1:]
		}
	}
	return p
}

// ResolvePath expands p (see [ExpandPath]) and makes it absolute against cwd.
func ResolvePath(p, cwd string) string {
	p = ExpandPath(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// resolveExisting resolves p like [ResolvePath] and, when that names no
// file, tries the spellings macOS uses in screenshot names: a narrow
// no-break space before AM/PM, decomposed (NFD) accents and a curly
// apostrophe. It returns the first that exists, else the plain resolution.
func resolveExisting(ctx context.Context, fsys FS, p, cwd string) string {
	resolved := ResolvePath(p, cwd)
	exists := func(name string) bool {
		_, err := fsys.Stat(ctx, name)
		return err == nil || !errors.Is(err, fs.ErrNotExist)
	}
	if exists(resolved) {
		return resolved
	}
	nfd := norm.NFD.String(resolved)
	for _, v := range []string{
		amPM(resolved),
		nfd,
		strings.ReplaceAll(resolved, "'", "\u2019"),
		strings.ReplaceAll(nfd, "'", "\u2019"),
	} {
		if v != resolved && exists(v) {
			return v
		}
	}
	return resolved
}

// amPM puts a narrow no-break space before " AM." / " PM." as macOS does.
func amPM(p string) string {
	for _, s := range []string{"AM", "PM", "am", "pm", "Am", "Pm", "aM", "pM"} {
		p = strings.ReplaceAll(p, " "+s+".", "\u202f"+s+".")
	}
	return p
}
