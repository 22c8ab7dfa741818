// Package homedir owns the one expansion of a leading "~" that gopi
// applies, as pi does, to paths from settings.json (shellPath,
// extensions) and the command line (--session, --fork, --export). Call
// [Expand].
package homedir

import (
	"os"
	"path/filepath"
	"strings"
)

// Expand replaces a leading "~" (the whole path, or "~/" before the
// rest) with the user's home directory. Any other path ("~user/x"
// included) is returned unchanged, and so is every path when the home
// directory cannot be found.
func Expand(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}
