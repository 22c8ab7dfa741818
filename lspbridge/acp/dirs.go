package acp

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// additionalDirs checks the additionalDirectories of session/new, load,
// resume or fork: the session's further workspace roots, each an absolute
// path of an existing directory. They come back cleaned, without repeats
// and without cwd itself; a bad one is -32602 naming its place.
func additionalDirs(dirs []string, cwd string) ([]string, error) {
	var out []string
	for i, d := range dirs {
		field := "additionalDirectories[" + strconv.Itoa(i) + "]"
		if !filepath.IsAbs(d) {
			return nil, errorf(codeInvalidParams, "invalid params: %q must be an absolute path, not %q", field, d)
		}
		info, err := os.Stat(d)
		switch {
		case err != nil:
			return nil, errorf(codeInvalidParams, "invalid params: %q: %s is not a directory gopi can reach: %v", field, d, err)
		case !info.IsDir():
			return nil, errorf(codeInvalidParams, "invalid params: %q: %s is not a directory", field, d)
		}
		d = filepath.Clean(d)
		if d != cwd && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}
