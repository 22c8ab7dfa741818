package host

// This file owns the session's events passed on to extensions: the client's
// events, those only extensions see, and the session switch and fork
// hooks.

import (
	"context"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
)

// notifyExtensions passes an event the client sees on to the extensions
// that listen to it.
func (h *Host) notifyExtensions(ev api.Event) {
	m := h.exts()
	if m.Empty() || !m.Ready() {
		return
	}
	typ := ev.EventType()
	if typ == "agent_start" {
		// A new run: ctx.signal is a fresh AbortSignal until it ends.
		m.Notify(ext.HostRunStart, ext.Empty{})
		h.ext.mu.Lock()
		h.ext.turnIndex = 0
		h.ext.mu.Unlock()
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
		h.ext.mu.Lock()
		index := h.ext.turnIndex
		h.ext.mu.Unlock()
		ev := ext.TurnStartEvent{TurnIndex: index, Timestamp: time.Now().UnixMilli()}
		if err := m.EmitDelivered(h.ctx, ev, nil); err != nil {
			h.extFailed(typ, err)
		}
		return
	}
	var st *ext.State
	switch typ {
	case "agent_start", "agent_end", "turn_end", "message_end", "tool_execution_end":
		st = h.extSnapshot()
	}
	m.NotifyEvent(ev, st)
}

// extEvent passes an event that only extensions see (model_select,
// thinking_level_select) to those that listen to it.
func (h *Host) extEvent(ev ext.Event) {
	m := h.exts()
	if m.Empty() || !m.Handles(ev.EventType()) {
		return
	}
	m.NotifyEvent(ev, h.extSnapshot())
}

// sessionBefore asks extensions whether a session switch or fork may go
// ahead (session_before_switch / session_before_fork); true means one
// cancelled it.
func (h *Host) sessionBefore(ctx context.Context, ev ext.Event) bool {
	m := h.exts()
	typ := ev.EventType()
	if err := h.extensionsReady(ctx); err != nil || !m.Handles(typ) {
		return false
	}
	r, err := ext.EmitFor[ext.CancelResult](ctx, m, ev, h.extSnapshot())
	if err != nil {
		h.extFailed(typ, err)
		return false
	}
	return r.Cancel
}

// sessionReplaced tells extensions the session changed: session_shutdown
// for the old one, session_start for the new.
func (h *Host) sessionReplaced(ctx context.Context, reason, previous, target string) {
	m := h.exts()
	if m.Empty() || !m.Ready() {
		return
	}
	if m.Handles(ext.EventSessionShutdown) {
		ev := ext.SessionShutdownEvent{Reason: reason, TargetSessionFile: target}
		if _, err := m.Emit(ctx, ev, nil); err != nil {
			h.extFailed(ext.EventSessionShutdown, err)
		}
	}
	if m.Handles(ext.EventSessionStart) {
		ev := ext.SessionStartEvent{Reason: reason, PreviousSessionFile: previous}
		if _, err := m.Emit(ctx, ev, h.extSnapshot()); err != nil {
			h.extFailed(ext.EventSessionStart, err)
		}
	}
}
