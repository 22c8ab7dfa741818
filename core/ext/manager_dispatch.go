package ext

// This file owns how a call reaches the extensions: to every running one
// that listens to an event, in order, each brought up to date first; or to
// the one that registered a tool or a command.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// each runs f on every running extension that handles event, in order,
// after bringing its state up to date; it stops at the first error or
// when f says so.
func (m *Manager) each(event string, st *State, f func(mem *member) (stop bool, err error)) error {
	if m.Empty() || !m.Ready() {
		return nil
	}
	for _, mem := range m.exts {
		if _, running := mem.registrations(); !running || (event != "" && !mem.listens(event)) {
			continue
		}
		m.sync(mem, st)
		stop, err := f(mem)
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
	return nil
}

// NotifyEvent passes an event that only informs (agent, turn, message and
// tool events, model_select, ...) to the extensions that listen to it,
// without waiting.
func (m *Manager) NotifyEvent(event Event, st *State) {
	_ = m.each(event.EventType(), st, func(mem *member) (bool, error) {
		mem.ext.Notify(HostEmit, EventParams[Event]{event})
		return false, nil
	})
}

// EmitDelivered runs an event's handlers and waits for them, then for
// what they sent meanwhile (pi.sendMessage, which is delivered in order
// on a goroutine of its own) to reach gopi: when it returns, gopi holds
// every message the handlers sent. pi awaits turn_start's handlers before
// the turn's request.
func (m *Manager) EmitDelivered(ctx context.Context, event Event, st *State) error {
	return m.each(event.EventType(), st, func(mem *member) (bool, error) {
		err := mem.ext.Call(ctx, HostEmit, EventParams[Event]{event}, nil)
		if d, ok := mem.ext.(deliverer); ok {
			d.delivered(ctx)
		}
		return false, err
	})
}

// deliverer is an [Extension] whose notifications to gopi are delivered
// on a goroutine of their own ([NodeHost]); delivered waits for those it
// has read so far.
type deliverer interface {
	delivered(ctx context.Context)
}

// Drain waits until the handlers of every event sent so far with
// NotifyEvent have finished (a dialog an agent_end handler opened is
// answered): pi awaits them before it settles. Bounded like a hook.
func (m *Manager) Drain(ctx context.Context) error {
	return m.each("", nil, func(mem *member) (bool, error) {
		if err := mem.ext.Call(ctx, HostDrain, Empty{}, nil); err != nil && !errors.Is(err, ErrNoMethod) {
			return false, err
		}
		return false, nil // a Go extension handles its events as they come
	})
}

// Notify sends a host method to every running extension.
func (m *Manager) Notify(method Method, params any) {
	_ = m.each("", nil, func(mem *member) (bool, error) {
		mem.ext.Notify(method, params)
		return false, nil
	})
}

// owner is the extension that registered a tool or command.
func (m *Manager) owner(has func(Registrations) bool) *member {
	if m.Empty() || !m.Ready() {
		return nil
	}
	for _, mem := range m.exts {
		if regs, running := mem.registrations(); running && has(regs) {
			return mem
		}
	}
	return nil
}

// ExecuteTool runs an extension's tool; update receives partial results.
func (m *Manager) ExecuteTool(ctx context.Context, name, toolCallID string, params json.RawMessage, update func(json.RawMessage), st *State) (ToolOutput, error) {
	var out ToolOutput
	mem := m.owner(func(r Registrations) bool {
		return slices.ContainsFunc(r.Tools, func(t ToolDef) bool { return t.Name == name })
	})
	if mem == nil {
		return out, fmt.Errorf("%w %s", errNoTool, name)
	}
	m.sync(mem, st)
	p := ExecuteToolParams{Name: name, ToolCallID: toolCallID, Params: params}
	if nh, ok := mem.ext.(*NodeHost); ok {
		err := nh.ExecuteTool(ctx, p, update, &out)
		return out, err
	}
	err := mem.ext.Call(ctx, HostExecuteTool, p, &out)
	return out, err
}

// HasCommand reports whether an extension registered the slash command.
func (m *Manager) HasCommand(name string) bool {
	return m.owner(func(r Registrations) bool {
		return slices.ContainsFunc(r.Commands, func(c Command) bool { return c.Name == name })
	}) != nil
}

// RunCommand runs an extension's slash command to its end.
func (m *Manager) RunCommand(ctx context.Context, name, args string, st *State) error {
	mem := m.owner(func(r Registrations) bool {
		return slices.ContainsFunc(r.Commands, func(c Command) bool { return c.Name == name })
	})
	if mem == nil {
		return fmt.Errorf("%w /%s", errNoCommand, name)
	}
	m.sync(mem, st)
	return mem.ext.Call(ctx, HostCommand, CommandParams{Name: name, Args: args}, nil)
}
