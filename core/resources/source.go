package resources

import (
	"os"
	"path/filepath"
	"strings"
)

// Location says where a prompt template or skill was found, as get_commands
// reports it.
type Location string

const (
	LocationUser    Location = "user"    // under the agent directory (or ~/.agents/skills)
	LocationProject Location = "project" // under the project (.pi/ or .agents/skills)
	LocationPath    Location = "path"    // an explicit path from the command line or settings
)

// Scope is pi's sourceInfo.scope.
type Scope string

const (
	ScopeUser      Scope = "user"
	ScopeProject   Scope = "project"
	ScopeTemporary Scope = "temporary"
)

// Origin is pi's sourceInfo.origin.
type Origin string

const (
	OriginTopLevel Origin = "top-level"
	OriginPackage  Origin = "package"
)

// Values of SourceInfo.Source that this package produces: "auto" for files
// found in the default directories, "local" for explicit paths (pi's
// metadata for auto-discovered and explicitly listed local files).
const (
	SourceAuto  = "auto"
	SourceLocal = "local"
)

// SourceInfo is pi's sourceInfo for a resource: where it came from. BaseDir
// may be empty.
type SourceInfo struct {
	Path    string
	Source  string
	Scope   Scope
	Origin  Origin
	BaseDir string
}

// location maps a scope to the get_commands location.
func (s SourceInfo) location() Location {
	switch s.Scope {
	case ScopeUser:
		return LocationUser
	case ScopeProject:
		return LocationProject
	default:
		return LocationPath
	}
}

// Discovery says which default folders [LoadSkillsFrom] and
// [LoadTemplatesFrom] search besides the paths they are given.
type Discovery int

const (
	// DiscoverAll searches the project's folders and the user's.
	DiscoverAll Discovery = iota
	// DiscoverUser searches the user's folders only: the project is
	// not trusted.
	DiscoverUser
	// DiscoverNone searches no folder: only the given paths load
	// (pi's --no-skills and --no-prompt-templates).
	DiscoverNone
)

// configDirName is the per-project directory (pi's CONFIG_DIR_NAME).
const configDirName = ".pi"

// resolvePath expands a leading "~" and makes p absolute against cwd, as pi
// does for explicit resource paths.
func resolvePath(p, cwd string) string {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "~") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/"))
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// absDir makes dir absolute; a failure leaves it as given (it then simply
// matches nothing on disk).
func absDir(dir string) string {
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// isUnder reports whether target is root or inside it.
func isUnder(target, root string) bool {
	if root == "" {
		return false
	}
	root = filepath.Clean(root)
	if target == root {
		return true
	}
	return strings.HasPrefix(target, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// canonical resolves symlinks so the same file reached twice loads once.
func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// statFollow stats p following symlinks; a broken link reports ok=false.
func statFollow(p string) (isDir, isFile, ok bool) {
	st, err := os.Stat(p)
	if err != nil {
		return false, false, false
	}
	return st.IsDir(), st.Mode().IsRegular(), true
}
