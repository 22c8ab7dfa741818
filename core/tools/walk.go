package tools

import (
	"context"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// walkEntry is one file or directory met by walkTree.
type walkEntry struct {
	abs string
	// rel is the slash-separated path below the walk's root.
	rel   string
	isDir bool
}

// ignoreFiles are the per-directory ignore files the walk honours, as rg
// and fd do.
var ignoreFiles = []string{".gitignore", ".ignore"}

// walkTree visits everything below root in lexical order, skipping .git
// directories and whatever .gitignore and .ignore files exclude, including
// those of enclosing directories up to the repository root and the
// repository's .git/info/exclude. Symbolic links are visited but not
// followed. visit returns false to stop the walk. Unreadable directories
// are skipped.
func walkTree(ctx context.Context, fsys FS, root string, visit func(walkEntry) bool) error {
	w := &walker{fsys: fsys, visit: visit}
	// Ignore rules are matched against paths relative to the repository
	// root when root lies inside one, so an enclosing .gitignore applies.
	base, prefix := root, []string(nil)
	if gitRoot, ok := findGitRoot(ctx, fsys, root); ok {
		base = gitRoot
		if rel, err := filepath.Rel(gitRoot, root); err == nil && rel != "." {
			prefix = strings.Split(filepath.ToSlash(rel), "/")
		}
		w.patterns = append(w.patterns, w.readIgnore(ctx, filepath.Join(gitRoot, ".git", "info", "exclude"), nil)...)
		for i := range prefix {
			dir := filepath.Join(append([]string{base}, prefix[:i]...)...)
			for _, name := range ignoreFiles {
				w.patterns = append(w.patterns, w.readIgnore(ctx, filepath.Join(dir, name), prefix[:i])...)
			}
		}
	}
	_, err := w.dir(ctx, root, prefix, "", w.patterns)
	return err
}

type walker struct {
	fsys     FS
	visit    func(walkEntry) bool
	patterns []gitignore.Pattern
}

// findGitRoot returns the nearest directory at or above dir holding .git.
func findGitRoot(ctx context.Context, fsys FS, dir string) (string, bool) {
	for {
		if _, err := fsys.Stat(ctx, filepath.Join(dir, ".git")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func (w *walker) readIgnore(ctx context.Context, name string, domain []string) []gitignore.Pattern {
	data, err := w.fsys.ReadFile(ctx, name)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// dir walks one directory; comps are its path components relative to the
// ignore base, rel its path relative to the walk root. It reports false
// when the walk was stopped.
func (w *walker) dir(ctx context.Context, abs string, comps []string, rel string, patterns []gitignore.Pattern) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	entries, err := w.fsys.ReadDir(ctx, abs)
	if err != nil {
		return true, nil
	}
	for _, e := range entries {
		for _, name := range ignoreFiles {
			if e.Name() == name && !e.IsDir() {
				patterns = append(patterns[:len(patterns):len(patterns)], w.readIgnore(ctx, filepath.Join(abs, name), comps)...)
			}
		}
	}
	matcher := gitignore.NewMatcher(patterns)
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		isDir := e.IsDir()
		sub := append(comps[:len(comps):len(comps)], name)
		if matcher.Match(sub, isDir) {
			continue
		}
		entry := walkEntry{abs: filepath.Join(abs, name), rel: path.Join(rel, name), isDir: isDir}
		if !w.visit(entry) {
			return false, nil
		}
		if isDir {
			more, err := w.dir(ctx, entry.abs, sub, entry.rel, patterns)
			if err != nil || !more {
				return more, err
			}
		}
	}
	return true, nil
}

// isBinary reports whether data looks like a binary file (a NUL byte
// early on), which searches skip as rg does.
func isBinary(data []byte) bool {
	n := min(len(data), 8000)
	return strings.IndexByte(string(data[:n]), 0) >= 0
}
