package acp

import (
	"context"
	"fmt"
	"path/filepath"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
)

// Forker makes a session's fork: a new runtime on a copy of src's current
// branch (root to leaf), with a session id of its own, built from cfg; src
// is not changed. It is session/fork (the unstable schema's
// ForkSessionRequest), as pi's clone.
type Forker func(ctx context.Context, src Runtime, cfg SessionConfig) (Runtime, error)

// fork is session/fork: the session sessionId names, open on this
// connection, is copied into a new session, which is added and answered
// as session/new answers; the original goes on as it was. Its response
// has NewSessionResponse's fields (the unstable schema's
// ForkSessionResponse).
func (a *conn) fork(m *message) error {
	if a.opts.Fork == nil {
		return errorf(codeMethodNotFound, "method not found: %s", *m.Method)
	}
	servers, err := clientServers(m.Params)
	if err != nil {
		return err
	}
	var p sdk.UnstableForkSessionRequest
	if err := decodeParams(m, &p, "sessionId", "cwd"); err != nil {
		return err
	}
	if !filepath.IsAbs(p.Cwd) {
		return errorf(codeInvalidParams, "invalid params: \"cwd\" must be an absolute path, not %q", p.Cwd)
	}
	cwd := filepath.Clean(p.Cwd)
	dirs, err := additionalDirs(p.AdditionalDirectories, cwd)
	if err != nil {
		return err
	}
	src, err := a.session(p.SessionId)
	if err != nil {
		return err
	}
	if src.cwd != cwd {
		return errorf(codeInvalidParams, "invalid params: \"cwd\": session %s works in %s, not in %s; a fork stays in its session's directory", src.id, src.cwd, cwd)
	}
	if src.busy() {
		return errorf(codeInvalidRequest, "session %s is answering a prompt: fork it once the prompt is answered", src.id)
	}
	cfg := a.lend(SessionConfig{Cwd: cwd, MCPServers: servers, AdditionalDirs: dirs})
	rt, err := a.opts.Fork(a.ctx, src.rt, cfg)
	if err != nil {
		return errorf(codeInternalError, "forking session %s: %v", src.id, err)
	}
	if err := inherit(a.ctx, src.rt, rt); err != nil {
		a.discard(rt)
		return errorf(codeInternalError, "forking session %s: %v", src.id, err)
	}
	return a.open(m.ID, cfg, rt)
}

// inherit gives the fork its original's settings as they are now, which
// may differ from what the copied branch records (a model picked on the
// command line is not in it): the model, the thinking level and the
// sandbox and approval modes (its session mode).
func inherit(ctx context.Context, src, fork Runtime) error {
	st, err := src.GetState(ctx)
	if err != nil {
		return fmt.Errorf("reading the session's state: %w", err)
	}
	if st.Model != nil {
		if _, err := fork.SetModel(ctx, api.SetModelParams{Provider: st.Model.Provider, ModelID: st.Model.ID}); err != nil {
			return fmt.Errorf("setting the fork's model: %w", err)
		}
		if err := fork.SetThinkingLevel(ctx, api.ThinkingParams{Level: st.ThinkingLevel}); err != nil {
			return fmt.Errorf("setting the fork's thinking level: %w", err)
		}
	}
	if err := fork.SetSandboxMode(src.SandboxMode()); err != nil {
		return fmt.Errorf("setting the fork's sandbox: %w", err)
	}
	if err := fork.SetApprovalMode(src.ApprovalMode()); err != nil {
		return fmt.Errorf("setting the fork's mode: %w", err)
	}
	return nil
}
