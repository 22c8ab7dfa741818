package host

// This file owns the session's events passed on to extensions: the client's
// events, those only extensions see, the session switch and fork hooks,
// and user_bash.

import (
	"context"
	"fmt"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
)

// notify passes an event the client sees on to the extensions
// that listen to it.
func (e *extRoom) notify(ev api.Event) {
	h := e.h
	m := e.manager()
	if m.Empty() || !m.Ready() {
		return
	}
	typ := ev.EventType()
	if typ == "agent_start" {
		// A new run: ctx.signal is a fresh AbortSignal until it ends.
		m.Notify(ext.HostRunStart, ext.Empty{})
		e.mu.Lock()
		e.turnIndex = 0
		e.mu.Unlock()
	}
	if !m.Handles(typ) {
		return
	}
	if typ == "message_end" || typ == "turn_end" {
		// Called and waited for: in extMessageEnd, and as the actionable
		// boundary (turnBoundary).
		return
	}
	if typ == "turn_start" {
		// Awaited, as in pi, with what its handlers sent: a message
		// they hold for the turn's end (sendMessage, triggerTurn false)
		// is in place before the turn's request goes.
		e.mu.Lock()
		index := e.turnIndex
		e.mu.Unlock()
		ev := ext.TurnStartEvent{TurnIndex: index, Timestamp: time.Now().UnixMilli()}
		if err := m.EmitDelivered(h.ctx, ev, nil); err != nil {
			e.failed(typ, err)
		}
		return
	}
	var st *ext.State
	switch typ {
	case "agent_start", "agent_end", "turn_end", "message_end", "tool_execution_end":
		st = e.snapshot()
	}
	m.NotifyEvent(ev, st)
}

// event passes an event that only extensions see (model_select,
// thinking_level_select) to those that listen to it.
func (e *extRoom) event(ev ext.Event) {
	m := e.manager()
	if m.Empty() || !m.Handles(ev.EventType()) {
		return
	}
	m.NotifyEvent(ev, e.snapshot())
}

// sessionBefore asks extensions whether a session switch or fork may go
// ahead (session_before_switch / session_before_fork); true means one
// cancelled it.
func (e *extRoom) sessionBefore(ctx context.Context, ev ext.Event) bool {
	m := e.manager()
	typ := ev.EventType()
	if err := e.waitLoaded(ctx); err != nil || !m.Handles(typ) {
		return false
	}
	r, err := ext.EmitFor[ext.CancelResult](ctx, m, ev, e.snapshot())
	if err != nil {
		e.failed(typ, err)
		return false
	}
	return r.Cancel
}

// sessionReplaced tells extensions the session changed: session_shutdown
// for the old one, session_start for the new.
func (e *extRoom) sessionReplaced(ctx context.Context, reason, previous, target string) {
	m := e.manager()
	if m.Empty() || !m.Ready() {
		return
	}
	if m.Handles(ext.EventSessionShutdown) {
		ev := ext.SessionShutdownEvent{Reason: reason, TargetSessionFile: target}
		if _, err := m.Emit(ctx, ev, nil); err != nil {
			e.failed(ext.EventSessionShutdown, err)
		}
	}
	if m.Handles(ext.EventSessionStart) {
		ev := ext.SessionStartEvent{Reason: reason, PreviousSessionFile: previous}
		if _, err := m.Emit(ctx, ev, e.snapshot()); err != nil {
			e.failed(ext.EventSessionStart, err)
		}
	}
}

// userBash runs user_bash for the client's bash command: an extension
// that returns { result } answers it (nothing runs, the result is
// recorded); { operations } (a JavaScript backend, such as SSH) cannot
// run in gopi, so the command is refused rather than run locally against
// the extension's intent. A handler that throws refuses it too, as in pi.
func (e *extRoom) userBash(ctx context.Context, p api.BashParams) (api.BashResult, bool, error) {
	h := e.h
	m := e.manager()
	if err := e.waitLoaded(ctx); err != nil || !m.Handles(ext.EventUserBash) {
		return api.BashResult{}, false, nil
	}
	ev := ext.UserBashEvent{Command: p.Command, ExcludeFromContext: p.ExcludeFromContext, Cwd: h.opts.Cwd}
	r, err := m.UserBash(ctx, ev, e.snapshot())
	if err != nil {
		return api.BashResult{}, false, fmt.Errorf("user_bash: %w", err)
	}
	switch {
	case r == nil:
	case r.Result != nil:
		return *r.Result, true, nil
	case r.Operations != nil:
		return api.BashResult{}, false, fmt.Errorf("user_bash: %w", errBashOperations)
	}
	return api.BashResult{}, false, nil
}
