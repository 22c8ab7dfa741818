package host

// This file changes the project's directories besides Cwd (ACP's
// additionalDirectories): the gate, the sandbox and the system prompt
// follow them.

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
	h.prompts.refresh()
}
