package host

import (
	"slices"
	"sync"
)

// projectRoots are the project's directories besides Cwd: an ACP
// session's additionalDirectories. The approval gate counts files in them
// as the project's, and the system prompt names them; relative paths
// stay Cwd's, and checkpoints record Cwd's tree alone.
type projectRoots struct {
	mu   sync.Mutex // guards dirs
	dirs []string
}

func (r *projectRoots) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.dirs)
}

func (r *projectRoots) set(dirs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dirs = slices.Clone(dirs)
}

// AdditionalDirs are the project's directories besides Cwd.
func (h *Host) AdditionalDirs() []string { return h.roots.get() }

// SetAdditionalDirs makes dirs (absolute paths) the project's directories
// besides Cwd, replacing those it had: for the approval gate's calls from
// now on and the system prompt of the next run.
func (h *Host) SetAdditionalDirs(dirs []string) {
	h.roots.set(dirs)
	h.refreshSystemPrompt()
}
