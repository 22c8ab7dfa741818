// Package homedir expands a leading "~" the way pi does for the paths it
// reads from settings and the command line.
package homedir

import (
	"os"
	"path/filepath"
	"strings"
)

// Expand turns a leading "~" (the whole path, or "~/" before the rest)
// into the user's home directory. Anything else, "~user/" included, and
// any path when the home directory is unknown, comes back as it is.
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
