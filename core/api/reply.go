package api

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/gopi-dev/gopi/core/llm"
)

// A command's response and the events its work emits share one stream, and
// clients rely on the response coming first (pi answers "prompt" before
// agent_start). A Server that starts work which emits events registers the
// start with AfterResponse; the [Scheduler] installs the hook in each
// command's context and fires it when the dialect reports the response
// written ([Call.Written]).

type afterKey struct{}

type afterHook struct {
	mu    sync.Mutex
	fired bool
	fs    []func()
}

// withAfterResponse returns a context for one command and the function to
// call after writing that command's response. Calling it more than once
// is harmless.
func withAfterResponse(ctx context.Context) (context.Context, func()) {
	h := &afterHook{}
	return context.WithValue(ctx, afterKey{}, h), func() {
		h.mu.Lock()
		fs := h.fs
		h.fs, h.fired = nil, true
		h.mu.Unlock()
		for _, f := range fs {
			f()
		}
	}
}

// AfterResponse runs f once the response to the command ctx belongs to has
// been sent: later when the command's hook has not fired yet, at once
// otherwise (and for a context no Scheduler made). f must not block for long; start goroutines for
// real work.
func AfterResponse(ctx context.Context, f func()) {
	h, _ := ctx.Value(afterKey{}).(*afterHook)
	if h == nil {
		f()
		return
	}
	h.mu.Lock()
	if !h.fired {
		h.fs = append(h.fs, f)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	f()
}

type commandIDKey struct{}

// withCommandID records the id the client gave the command ctx belongs to
// (as JSON: a string, or a JSON-RPC number), for events that repeat it
// (bash_execution_update).
func withCommandID(ctx context.Context, id json.RawMessage) context.Context {
	if len(id) == 0 || string(id) == "null" {
		return ctx
	}
	return context.WithValue(ctx, commandIDKey{}, id)
}

// CommandID is the id the client gave the command ctx belongs to
// ([Command.ID]), or nil.
func CommandID(ctx context.Context) json.RawMessage {
	id, _ := ctx.Value(commandIDKey{}).(json.RawMessage)
	return id
}

type queuedKey struct{}

// withQueued records f ([Command.Queued]) in the command's context.
func withQueued(ctx context.Context, f func(llm.Message)) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, queuedKey{}, f)
}

// Queued tells the dialect that ran the command ctx belongs to which
// message the command put in a queue (a prompt's follow-up or steer).
// A Server calls it before the message is queued, so the dialect knows
// it before the run can take it (the run's message_start carries the
// same message). Nothing happens for a dialect that did not ask.
func Queued(ctx context.Context, msg llm.Message) {
	if f, _ := ctx.Value(queuedKey{}).(func(llm.Message)); f != nil {
		f(msg)
	}
}
