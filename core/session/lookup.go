package session

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// idPattern is pi's rule for session ids chosen by the user.
var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`) })

// CheckID reports whether id can name a session (pi's --session-id).
func CheckID(id string) error {
	if !idPattern().MatchString(id) {
		return fmt.Errorf("session id %q: %w", id, ErrBadID)
	}
	return nil
}

// FindByID returns the session file in dir whose header has exactly id,
// reading only the headers; "" when there is none. A non-empty cwd also
// requires the header's cwd to be that directory (for a directory that
// holds the sessions of several). A missing or unreadable dir finds
// nothing.
func FindByID(dir, id, cwd string) string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, de := range des {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		p := filepath.Join(dir, de.Name())
		h, ok := ReadHeader(p)
		if !ok || h.ID != id || (cwd != "" && !SameDir(h.Cwd, cwd)) {
			continue
		}
		return p
	}
	return ""
}

// ReadHeader reads the header of the session file at path without
// loading its entries; false when the file cannot be read or does not
// start with a session header with an id.
func ReadHeader(path string) (Header, bool) {
	h, ok := readHeader(path)
	return h, ok && h.ID != ""
}

// SameDir reports whether a and b name the same directory once made
// absolute and cleaned (symlinks are not followed, as in pi).
func SameDir(a, b string) bool {
	abs := func(p string) string {
		if q, err := filepath.Abs(p); err == nil {
			return q
		}
		return filepath.Clean(p)
	}
	return abs(a) == abs(b)
}
