package host

import (
	"slices"
	"sync"
)

// projectRoots are the project's directories besides Cwd: an ACP
// session's additionalDirectories. The approval gate counts files in them
// as the project's, the sandbox lets commands write in them in
// workspace-write, the system prompt names them, and checkpoints record
// them as they record Cwd (see checkpointRoots); relative paths stay
// Cwd's.
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
// besides Cwd, replacing those it had: for the approval gate's calls and
// the sandbox's writable roots from now on, the system prompt of the
// next run and the checkpoints from the next one on.
func (h *Host) SetAdditionalDirs(dirs []string) {
	h.roots.set(dirs)
	if h.opts.Sandbox != nil {
		h.opts.Sandbox.SetRoots(dirs)
	}
	h.refreshSystemPrompt()
}
