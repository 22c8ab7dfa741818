package resources

import (
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/gopi-dev/gopi/internal/regularfile"
)

// ignoreFileNames are read in every directory walked for skills and
// prompts, as pi does.
var ignoreFileNames = []string{".gitignore", ".ignore", ".fdignore"}

// ignorer collects gitignore rules while a directory tree is walked; go-git's
// matcher applies them with git's semantics (nested files scoped to their
// directory, the last matching rule deciding, negation, directory-only
// patterns, **).
type ignorer struct {
	patterns []gitignore.Pattern
}

// addDir reads the ignore files of dir (rel is dir relative to the root,
// "" for the root itself).
func (ig *ignorer) addDir(dir, rel string) {
	var domain []string
	if rel != "" {
		domain = strings.Split(filepath.ToSlash(rel), "/")
	}
	for _, name := range ignoreFileNames {
		b, err := regularfile.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(normalizeNewlines(string(b)), "\n") {
			if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			ig.patterns = append(ig.patterns, gitignore.ParsePattern(line, domain))
		}
	}
}

// ignored reports whether rel (slash or OS separated, relative to the
// root) is excluded.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	if len(ig.patterns) == 0 {
		return false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	return gitignore.NewMatcher(ig.patterns).Match(parts, isDir)
}
