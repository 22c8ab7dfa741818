package host

// This file holds the extensions' room: its state (what the Node host keeps
// a copy of, the dialogs open, the work it started) and the small calls
// every other room makes of it.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// extRoom is the extensions' room: their start, stop and reload, the
// hooks the other rooms call (each a no-op without extensions), and the
// host state extensions read synchronously (the Node host keeps a copy; the
// manager sends what changed before each call). It reaches the rest of
// the session through h.
type extRoom struct {
	h *Host
	m *ext.Manager // nil or empty: no extensions
	// wg is the extension work the room started.
	wg sync.WaitGroup
	// stopped closes when the extensions stop; loaded once they loaded
	// and saw session_start.
	stopped, loaded chan struct{}

	mu sync.Mutex // guards the fields below
	// dialogs are the extension dialogs open now, by the host's id, so
	// an extension that gives up (its AbortSignal) can close one.
	dialogs map[string]context.CancelFunc
	// calls are the tool calls extensions' tools make now
	// (ctx.executeTool()), by their ids, so one can withdraw its own.
	calls map[string]context.CancelFunc
	// turnIndex counts the turns of the run under way (turn_end's
	// turnIndex), from 0 at agent_start.
	turnIndex int
	// usage is the context usage last sent to extensions, for usageKey.
	usage    *api.ContextUsage
	usageKey usageKey
	usageSet bool
}

// usageKey is what the context usage extensions see depends on: the
// session and its leaf, the transcript's length and the model.
type usageKey struct {
	store *session.Store
	leaf  string
	n     int
	model *llm.Model
}

// manager is the extensions' manager (nil or empty: none run).
func (e *extRoom) manager() *ext.Manager { return e.m }

// failed reports a hook call that failed as a whole (the host crashed
// or timed out); handler errors come from the host itself.
func (e *extRoom) failed(event string, err error) {
	h := e.h
	h.emit(api.ExtensionError{ExtensionPath: "<extension host>", Event: event, Error: err.Error()})
}

// first waits for the extensions to load before a command that
// may fire their events: pi has loaded them before it reads a command.
func (e *extRoom) first(ctx context.Context) {
	_ = e.waitLoaded(ctx)
}

// waitLoaded waits until the extensions have loaded and handled
// session_start.
func (e *extRoom) waitLoaded(ctx context.Context) error {
	if e.manager().Empty() {
		return nil
	}
	select {
	case <-e.loaded:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reportError reports a handler's failure to the client, and to the log.
func (e *extRoom) reportError(ee ext.ErrorEvent) {
	h := e.h
	h.opts.Report(fmt.Errorf("extension %s (%s): %s", ee.ExtensionPath, ee.Event, ee.Error))
	ev := api.ExtensionError{ExtensionPath: ee.ExtensionPath, Event: ee.Event, Error: ee.Error}
	select {
	case <-h.subscribed:
		h.emit(ev)
	default:
		// An error while loading may come before the client listens: it
		// waits for the first subscriber.
		e.wg.Go(func() {
			select {
			case <-h.subscribed:
			case <-e.stopped:
			case <-time.After(10 * time.Second):
			}
			h.emit(ev)
		})
	}
}

// withdrawable is ctx for work an extension may withdraw by its id (a
// dialog, a tool call its tool made): it ends with the session, or when
// withdraw(ids, id) is called; done ends it and forgets the id. ids is
// one of the room's tables, guarded by e.mu; an empty id cannot be
// withdrawn.
func (e *extRoom) withdrawable(ctx context.Context, ids map[string]context.CancelFunc, id string) (_ context.Context, done func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(e.h.ctx, cancel)
	if id != "" {
		e.mu.Lock()
		ids[id] = cancel
		e.mu.Unlock()
	}
	return ctx, func() {
		if id != "" {
			e.mu.Lock()
			delete(ids, id)
			e.mu.Unlock()
		}
		stop()
		cancel()
	}
}

// withdraw ends the work registered as id in ids, if it is still there.
func (e *extRoom) withdraw(ids map[string]context.CancelFunc, id string) {
	e.mu.Lock()
	cancel := ids[id]
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
