package lspbridge

import (
	"context"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/rpc"
)

const methodEvent = "pi/event"

// Emit sends one event as a pi/event notification, or holds it until
// the client may hear it (before its first message, while initialize is
// answered: holdEvents). Unless the client asked for fullUpdates,
// message_update leaves out the message so far (message,
// assistantMessageEvent.partial): a client rebuilds it from the deltas,
// and a long reply costs bytes in proportion to its length, not its
// square.
func (b *Bridge) Emit(ev api.Event) {
	b.mu.Lock()
	if b.holding {
		b.held = append(b.held, ev)
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	b.emit(ev)
}

// holdEvents keeps events from the client until the response to the
// initialize request id is written, then sends them: what a runtime tells
// its first subscriber of what happened before (its MCP servers' states),
// like any event, must follow the response.
func (b *Bridge) holdEvents(id jsonrpc2.ID) {
	b.mu.Lock()
	b.holding = true
	b.mu.Unlock()
	b.afterResponse(id, b.releaseEvents)
}

// releaseEvents sends the held events in order; those emitted meanwhile
// wait behind them.
func (b *Bridge) releaseEvents() {
	for {
		b.mu.Lock()
		evs := b.held
		b.held = nil
		if len(evs) == 0 {
			b.holding = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		for _, ev := range evs {
			b.emit(ev)
		}
	}
}

// emit is Emit's work, once the event may go.
func (b *Bridge) emit(ev api.Event) {
	b.mu.Lock()
	full, progress, co := b.fullUpdates, b.caps.progress, b.coalesce
	b.mu.Unlock()
	b.observe(ev, progress)
	if !full {
		ev = lean(ev)
	}
	if co != nil {
		co.emit(ev)
		return
	}
	b.send(ev)
}

// send writes one pi/event notification.
func (b *Bridge) send(ev api.Event) {
	var raw []byte
	var err error
	if a, ok := ev.(rpc.Appender); ok {
		// The streaming events' own encoder (the same bytes, faster).
		if b, ok := a.AppendJSON(nil); ok {
			raw = b
		}
	}
	if raw == nil {
		raw, err = marshal(ev)
	}
	if err != nil {
		b.opts.Report(fmt.Errorf("encoding %s event: %w", ev.EventType(), err))
		return
	}
	_ = b.jc.Notify(context.Background(), methodEvent, jsonrpc2.RawMessage(raw))
	if e, ok := ev.(api.SessionWriteError); ok {
		// An editor shows this one to the user: work is not being saved.
		b.Notify(api.UIRequest{Method: api.UINotify, NotifyType: "error",
			Message: "gopi could not save the session (" + e.Error + "); it keeps the entries and retries with the next write."})
	}
}

// lean drops the growing snapshot from a message_update (agent.Event.Lean).
func lean(ev api.Event) api.Event {
	switch v := ev.(type) {
	case agent.Event:
		return v.Lean()
	case *agent.Event:
		return v.Lean()
	}
	return ev
}

// observe follows the run (for $/cancelRequest) and, for clients that
// show progress, feeds it.
func (b *Bridge) observe(ev api.Event, progress bool) {
	switch ev.EventType() {
	case string(agent.EventAgentStart):
		b.running.Store(true)
	case string(agent.EventAgentEnd):
		b.running.Store(false)
	}
	if progress {
		b.prog.observe(ev)
	}
}
