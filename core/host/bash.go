package host

// This file runs the client's own shell commands (pi's bash command, which
// an extension's user_bash may answer instead) and keeps their output for
// the next prompt.

import (
	"context"

	"github.com/gopi-dev/gopi/core/api"
)

// Bash runs a command for the user (not the model) and records it as a
// bashExecution message, which reaches the model with the next prompt. No
// event is emitted for it. When the output was truncated the full output
// file is complete before Bash returns.
func (h *Host) Bash(ctx context.Context, p api.BashParams) (api.BashResult, error) {
	finish, err := h.StartBash(ctx, p)
	if err != nil {
		return api.BashResult{}, err
	}
	return finish()
}

var _ api.BashStarter = (*Host)(nil)

// StartBash registers the command at once, so an abort_bash that follows
// it finds it (even before it runs), and returns the function that runs
// it.
func (h *Host) StartBash(ctx context.Context, p api.BashParams) (func() (api.BashResult, error), error) {
	return h.shell.start(ctx, p)
}

// AbortBash stops the running bash command, if any (its process group is
// killed; the bash response then reports cancelled).
func (h *Host) AbortBash(_ context.Context) error {
	h.shell.abort()
	return nil
}
