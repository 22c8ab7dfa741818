package host

// This file runs the client's own shell commands (pi's bash command, which
// an extension's user_bash may answer instead) and keeps their output for
// the next prompt.

import (
	"context"
	"fmt"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/core/tools"
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
	ctx, cancel := context.WithCancel(ctx)
	h.mu.Lock()
	if h.bashCancel != nil {
		h.mu.Unlock()
		cancel()
		return nil, errBashRunning
	}
	h.bashCancel = cancel
	store := h.store
	h.mu.Unlock()
	return func() (api.BashResult, error) {
		defer func() {
			h.mu.Lock()
			h.bashCancel = nil
			h.mu.Unlock()
			cancel()
		}()
		// Close cancels h.ctx; a closing connection cancels ctx.
		stop := context.AfterFunc(h.ctx, cancel)
		defer stop()
		return h.runBash(ctx, p, store)
	}, nil
}

func (h *Host) runBash(ctx context.Context, p api.BashParams, store *session.Store) (api.BashResult, error) {
	// An extension may answer the command itself (user_bash).
	if res, ok, err := h.ext.userBash(ctx, p); err != nil {
		return api.BashResult{}, err
	} else if ok {
		h.recordBash(store, &llm.BashExecutionMessage{
			Command: p.Command, Output: res.Output, ExitCode: res.ExitCode, Cancelled: res.Cancelled,
			Truncated: res.Truncated, FullOutputPath: res.FullOutputPath, Timestamp: time.Now().UnixMilli(),
			ExcludeFromContext: p.ExcludeFromContext,
		})
		return res, nil
	}
	command := p.Command
	if prefix := h.opts.Settings.ShellCommandPrefix; prefix != "" {
		command = prefix + "\n" + command
	}
	id := api.CommandID(ctx)
	res, err := tools.RunShell(ctx, tools.ShellOptions{
		Command:    command,
		Dir:        h.opts.Cwd,
		Shell:      h.opts.Settings.shell(),
		Sanitize:   true,
		TempPrefix: "gopi-bash",
		// Every piece of output goes to the client as it comes (pi 1.5's
		// bash_execution_update); the response may carry a truncated tail.
		OnChunk: func(chunk string) { h.emit(api.BashExecutionUpdate{ID: id, Delta: chunk}) },
	})
	if err != nil {
		return api.BashResult{}, fmt.Errorf("running bash command: %w", err)
	}
	h.recordBash(store, &llm.BashExecutionMessage{
		Command:        p.Command,
		Output:         res.Output,
		ExitCode:       res.ExitCode,
		Cancelled:      res.Cancelled,
		Truncated:      res.Truncated,
		FullOutputPath: res.FullOutputPath,
		Timestamp:      time.Now().UnixMilli(),

		ExcludeFromContext: p.ExcludeFromContext,
	})
	return api.BashResult{
		Output:         res.Output,
		ExitCode:       res.ExitCode,
		Cancelled:      res.Cancelled,
		Truncated:      res.Truncated,
		FullOutputPath: res.FullOutputPath,
	}, nil
}

// AbortBash stops the running bash command, if any (its process group is
// killed; the bash response then reports cancelled).
func (h *Host) AbortBash(_ context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bashCancel != nil {
		h.bashCancel()
	}
	return nil
}

// recordBash adds a bash result to the transcript, or holds it until the
// running prompt ends so it cannot land between a tool call and its result.
// A result whose session was replaced meanwhile (new_session, switch,
// fork) goes to the session it ran in, not into the new one.
func (h *Host) recordBash(store *session.Store, m *llm.BashExecutionMessage) {
	if store != h.Store() {
		_, err := store.AppendMessage(m)
		_ = h.saved(store, "a bash result", err)
		return
	}
	if h.agent.IsStreaming() {
		h.run.HoldBash(m)
		return
	}
	h.appendMessage(m)
}

// flushPendingBash adds bash results held during a run (called when the
// run settles, and before the next prompt starts).
func (h *Host) flushPendingBash() {
	for _, m := range h.run.TakeBash() {
		h.appendMessage(m)
	}
}

// appendMessage adds a message outside a run to the transcript and the
// session.
func (h *Host) appendMessage(m llm.Message) {
	h.agent.AppendMessage(m)
	store := h.Store()
	_, err := store.AppendMessage(m)
	_ = h.saved(store, "a message", err)
}
