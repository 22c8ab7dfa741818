package checkpoint

import (
	"path/filepath"
	"slices"
	"strings"
)

// pathspecs limit a git command to the scope, without its excluded
// folders.
func (r *Repo) pathspecs() []string {
	out := []string{":(top)"}
	if r.prefix != "" {
		out[0] = ":(top,literal)" + r.prefix
	}
	for _, e := range r.exclude {
		out = append(out, ":(top,exclude,literal)"+e)
	}
	return out
}

// excludes are the folders of dirs below the scope's directory, links
// followed, relative to the top and sorted.
func (r *Repo) excludes(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		rel, ok := below(r.g.top, d)
		if !ok || rel == "" {
			continue
		}
		if _, in := relTo(r.prefix, rel); in && rel != r.prefix {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// excluded reports whether p (relative to the top) is in an excluded
// folder.
func (r *Repo) excluded(p string) bool {
	return inAny(r.exclude, p)
}

// inAny reports whether p (slash-separated) is one of dirs or below one.
func inAny(dirs []string, p string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// below is dir, its links followed, relative to root (slash-separated,
// "" for root itself), and whether it is root or below it.
func below(root, dir string) (string, bool) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}
