package lspbridge

import (
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
)

// coalescer merges a run of text or thinking deltas of one content block
// into one message_update, held for at most window: an editor then parses
// one notification per window instead of one per delta. Neovim's LSP
// client reads each message by copying the rest of its buffer, so 10,000
// one-word notifications kept the editor busy for most of a second; merged
// at 16 ms they are a few dozen. Any other event sends what is held
// first, so order is kept; the merged event carries the latest usage.
type coalescer struct {
	window time.Duration
	send   func(api.Event) // writes one event; called with mu held

	mu    sync.Mutex // guards held, timer; serialises sends
	held  *agent.Event
	timer *time.Timer
}

func newCoalescer(window time.Duration, send func(api.Event)) *coalescer {
	return &coalescer{window: window, send: send}
}

// mergeable reports whether ev is a lean text or thinking delta.
func mergeable(ev api.Event) (agent.Event, bool) {
	e, ok := ev.(agent.Event)
	if !ok || e.Type != agent.EventMessageUpdate || e.Message != nil || e.AssistantEvent == nil {
		return e, false
	}
	// The stream event types by their wire names: lspbridge does not
	// import core/llm (docs/architecture.md).
	switch string(e.AssistantEvent.Type) {
	case "text_delta", "thinking_delta":
		return e, true
	}
	return e, false
}

// emit sends ev, or holds it to merge with the deltas that follow.
func (c *coalescer) emit(ev api.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := mergeable(ev)
	if !ok {
		c.flushLocked()
		c.send(ev)
		return
	}
	if h := c.held; h != nil && h.AssistantEvent.Type == e.AssistantEvent.Type && h.AssistantEvent.ContentIndex == e.AssistantEvent.ContentIndex {
		se := *h.AssistantEvent
		se.Delta += e.AssistantEvent.Delta
		h.AssistantEvent = &se
		h.Usage = e.Usage
		return
	}
	c.flushLocked()
	se := *e.AssistantEvent
	e.AssistantEvent = &se
	c.held = &e
	if c.timer == nil {
		c.timer = time.AfterFunc(c.window, c.flush)
	} else {
		c.timer.Reset(c.window)
	}
}

// flush sends what is held (the window ended, or the bridge closes).
func (c *coalescer) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
}

func (c *coalescer) flushLocked() {
	if c.held == nil {
		return
	}
	ev := *c.held
	c.held = nil
	c.send(ev)
}

// stop sends what is held and ends the timer.
func (c *coalescer) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.flushLocked()
}
