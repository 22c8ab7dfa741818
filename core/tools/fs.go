package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// FS is the file system the file tools work on (pi's Read/Write/Edit/Ls
// operations). Paths are absolute. Implement it to run the tools against a
// remote machine or an editor's buffers; [LocalFS] is the local disk.
type FS interface {
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error)
	ReadFile(ctx context.Context, name string) ([]byte, error)
	// WriteFile creates or replaces name, keeping the mode of an
	// existing file.
	WriteFile(ctx context.Context, name string, data []byte) error
	MkdirAll(ctx context.Context, dir string) error
}

// LocalFS is [FS] on the local operating system.
type LocalFS struct{}

var _ FS = LocalFS{}

func (LocalFS) Stat(_ context.Context, name string) (fs.FileInfo, error) { return os.Stat(name) }
func (LocalFS) ReadDir(_ context.Context, name string) ([]fs.DirEntry, error) {
	return os.ReadDir(name)
}
func (LocalFS) ReadFile(_ context.Context, name string) ([]byte, error) { return os.ReadFile(name) }
func (LocalFS) WriteFile(_ context.Context, name string, data []byte) error {
	return os.WriteFile(name, data, 0o644)
}
func (LocalFS) MkdirAll(_ context.Context, dir string) error { return os.MkdirAll(dir, 0o755) }

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
