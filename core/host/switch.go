package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// SwitchSession aborts any run and continues the session saved at
// p.SessionPath (relative paths are taken from the cwd). Files of every
// version pi wrote load; older ones are upgraded in place, and damaged
// lines are skipped and reported. The conversation, model and thinking
// level become the file's; a model that is unknown or has no credentials
// leaves the current one in place. The cwd and tools stay the host's.
func (h *Host) SwitchSession(ctx context.Context, p api.SwitchSessionParams) (api.CancelledResult, error) {
	path := p.SessionPath
	if !filepath.IsAbs(path) {
		path = filepath.Join(h.opts.Cwd, path)
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return api.CancelledResult{}, fmt.Errorf("%w: %s", errSessionNotFound, api.Clip(path, api.ClipName))
	case err != nil:
		return api.CancelledResult{}, fmt.Errorf("opening session: %w", api.ClipPathError(err))
	case info.IsDir():
		return api.CancelledResult{}, fmt.Errorf("%w: %s is a directory", errNotSessionFile, api.Clip(path, api.ClipName))
	}
	if h.ext.sessionBefore(ctx, ext.SessionBeforeSwitchEvent{Reason: "resume", TargetSessionFile: path}) {
		return api.CancelledResult{Cancelled: true}, nil
	}
	if err := h.Abort(ctx); err != nil {
		return api.CancelledResult{}, err
	}
	previous := h.Store().File()
	next, rep, err := session.Open(path)
	if err != nil {
		return api.CancelledResult{}, fmt.Errorf("opening session: %w", err)
	}
	for _, d := range rep.Damaged {
		h.diagnostics.add(fmt.Errorf("session %s: skipped %w", path, d))
	}
	for _, k := range rep.Kept {
		h.diagnostics.add(fmt.Errorf("session %s: kept an entry gopi cannot read, %w", path, k))
	}
	if err := h.adopt(next); err != nil {
		return api.CancelledResult{}, err
	}
	h.ext.sessionReplaced(ctx, "resume", previous, path)
	return api.CancelledResult{}, nil
}

// Fork aborts any run and continues in a new session holding the
// conversation before the user message p.EntryID (any branch of the
// session tree); the response carries that message's text to edit and
// resend. The new session's file sits beside the current one (in memory
// when the current one is) and names it as parentSession.
func (h *Host) Fork(ctx context.Context, p api.ForkParams) (api.ForkResult, error) {
	if !forkable(h.Store(), p.EntryID) {
		return api.ForkResult{}, errForkEntry
	}
	if h.ext.sessionBefore(ctx, ext.SessionBeforeForkEvent{EntryID: p.EntryID}) {
		return api.ForkResult{Cancelled: true}, nil
	}
	if err := h.Abort(ctx); err != nil {
		return api.ForkResult{}, err
	}
	previous := h.Store().File()
	next, text, err := h.Store().Fork(p.EntryID)
	if errors.Is(err, session.ErrEntryNotFound) || errors.Is(err, session.ErrNotForkable) {
		return api.ForkResult{}, errForkEntry
	}
	if err != nil {
		return api.ForkResult{}, fmt.Errorf("forking the session: %w", err)
	}
	if err := h.adopt(next); err != nil {
		return api.ForkResult{}, err
	}
	h.ext.sessionReplaced(ctx, "fork", previous, "")
	return api.ForkResult{Text: text}, nil
}

// forkable reports whether id is a user message entry of store: what
// Fork accepts. get_fork_messages lists those of them with text.
func forkable(store *session.Store, id string) bool {
	e, ok := store.Entry(id)
	if !ok {
		return false
	}
	me, ok := e.(*session.MessageEntry)
	if !ok {
		return false
	}
	_, ok = me.Message().(*llm.UserMessage)
	return ok
}

// Clone aborts any run and continues in a copy of the active branch (root
// to leaf), saved beside the current session with it as parentSession.
func (h *Host) Clone(ctx context.Context) (api.CancelledResult, error) {
	if h.Store().Leaf() == "" {
		return api.CancelledResult{}, errCloneEmpty
	}
	if h.ext.sessionBefore(ctx, ext.SessionBeforeForkEvent{EntryID: h.Store().Leaf(), Position: "at"}) {
		return api.CancelledResult{Cancelled: true}, nil
	}
	if err := h.Abort(ctx); err != nil {
		return api.CancelledResult{}, err
	}
	previous := h.Store().File()
	next, err := h.Store().Clone()
	if errors.Is(err, session.ErrNotForkable) {
		return api.CancelledResult{}, errCloneEmpty
	}
	if err != nil {
		return api.CancelledResult{}, fmt.Errorf("cloning the session: %w", err)
	}
	if err := h.adopt(next); err != nil {
		return api.CancelledResult{}, err
	}
	h.ext.sessionReplaced(ctx, "fork", previous, "")
	return api.CancelledResult{}, nil
}

// adopt makes next the current session: queued messages and held bash
// results are dropped (they belonged to the old conversation), the
// transcript becomes next's, and a session with a conversation brings
// back its model and thinking level, as pi's resume does. A model that is
// unknown or lacks credentials is reported and the current one kept. An
// empty session (new_session, a fork before the first message) starts
// like a new conversation at startup, as in pi: with the command line's
// model, else the default one (see freshChoice), not the model and level
// the last session ended on.
func (h *Host) adopt(next *session.Store) error {
	sc := next.Context()
	h.agent.ClearQueues()
	h.agent.ReplaceMessages(sc.Messages)
	h.log.replace(next)
	h.run.DropBash()
	h.run.Reset()

	model := h.agent.Model()
	level := h.agent.ThinkingLevel()
	if len(sc.Messages) > 0 {
		if ref := sc.Model; ref != nil {
			reg := h.opts.Registry
			if m, ok := reg.Find(ref.Provider, ref.ModelID); ok && reg.HasAuth(&m) {
				model = &m
			} else if model != nil {
				h.diagnostics.add(errCouldNotRestore(ref.Provider, ref.ModelID, model))
			}
		}
		level = h.opts.defaultThinkingFor(h.agent.Model())
		if hasThinkingEntry(next.Path()) {
			level = sc.ThinkingLevel
		}
	} else if m, l, err := h.opts.freshChoice(h.opts.freshSettings(), true); err == nil {
		model, level = m, l
	}
	if model == nil {
		return nil
	}
	return h.models.set(model, level)
}

// errCouldNotRestore is the diagnostic for a conversation whose model is
// unknown or has no credentials, going on with model instead.
func errCouldNotRestore(provider, id string, model *llm.Model) error {
	return fmt.Errorf("could not restore model %s/%s; using %s/%s", provider, id, model.Provider, model.ID)
}

// hasThinkingEntry reports whether the branch set a thinking level (a
// session without one continues at the default level, as in pi).
func hasThinkingEntry(path []session.Entry) bool {
	for _, e := range path {
		if _, ok := e.(*session.ThinkingLevelChangeEntry); ok {
			return true
		}
	}
	return false
}
