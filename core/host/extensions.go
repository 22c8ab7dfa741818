package host

// This file owns the extensions' life in the host after their start
// (extroutes.go): the state they mirror, waiting for the host to be idle,
// stopping, reloading and draining them, and the skills and templates
// they offer.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// hooks are the extensions' handlers, typed (the JSON is core/ext's): the
// tool pipeline's tool_call and tool_result.
func (e *extRoom) hooks() ext.Hooks {
	return ext.Hooks{M: e.manager(), State: e.snapshot}
}

// WaitIdle returns once no prompt is in progress (or ctx ends, or the
// host closes).
func (h *Host) WaitIdle(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.ctx, cancel)()
	h.run.Await(ctx, func(p run.Phase) bool { return p == run.Idle })
}

// WaitExtensions waits until the extensions have loaded (or failed to).
func (h *Host) WaitExtensions(ctx context.Context) error { return h.ext.manager().Wait(ctx) }

// ExtensionFlags are the command-line flags extensions registered.
func (h *Host) ExtensionFlags() []ext.Flag { return h.ext.manager().Registrations().Flags }

// stop tells extensions the session ends and stops them.
func (e *extRoom) stop() {
	m := e.manager()
	if m.Empty() {
		return
	}
	select {
	case <-e.stopped:
		return // stopped already
	default:
	}
	close(e.stopped)
	if m.Ready() && m.Handles(ext.EventSessionShutdown) {
		// gopi is going: a handler that fails has no one left to tell.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, _ = m.Emit(ctx, ext.SessionShutdownEvent{Reason: "quit"}, e.snapshot())
		cancel()
	}
	_ = m.Close()
	e.wg.Wait()
}

// snapshot is the state extensions mirror, now.
func (e *extRoom) snapshot() *ext.State {
	h := e.h
	store := h.Store()
	model := h.agent.Model()
	steer, follow := h.agent.QueueCounts()
	all, active := h.toolset.snapshot()
	infos := h.toolset.allToolInfos(all)
	cmds := slashCommands(h.mcp, h.ext.manager(), h.prompts)
	busy := h.agent.IsStreaming() || h.run.Driving()
	snap := ext.Snapshot{
		Cwd:             h.opts.Cwd,
		Model:           model,
		ThinkingLevel:   h.agent.ThinkingLevel(),
		Idle:            !busy,
		PendingMessages: steer+follow > 0,
		ActiveTools:     active,
		AllTools:        infos,
		Commands:        cmds.Commands,
		SessionName:     store.Name(),
		SessionFile:     store.File(),
		SessionDir:      store.Dir(),
		SessionID:       store.ID(),
		SystemPrompt:    h.agent.SystemPrompt(),
		ContextUsage:    e.usageNow(store, model),
	}
	snap.SystemPromptOptions = h.prompts.currentInputs()
	reg := h.opts.Registry
	rare := func() ext.Rare {
		return ext.Rare{Models: reg.All(), Settings: h.opts.Settings.Merged}
	}
	return &ext.State{Snapshot: snap, Rare: rare, RareRev: reg.Revision(), Store: store}
}

// usageNow is contextUsage for the state extensions mirror. It is
// sent before every hook call and walks the whole branch, so it is worked
// out again only when what it depends on changed (in a session of 10,000
// messages it took a millisecond per hook call).
func (e *extRoom) usageNow(store *session.Store, model *llm.Model) *api.ContextUsage {
	h := e.h
	key := usageKey{store: store, leaf: store.Leaf(), n: h.agent.MessageCount(), model: model}
	e.mu.Lock()
	if e.usageSet && e.usageKey == key {
		u := e.usage
		e.mu.Unlock()
		return u
	}
	e.mu.Unlock()
	u := contextUsage(h.agent.Model(), h.Store().Path(), h.agent.Messages())
	e.mu.Lock()
	e.usageKey, e.usage, e.usageSet = key, u, true
	e.mu.Unlock()
	return u
}

// drain waits for the handlers of the events extensions were
// sent (see [ext.Manager.Drain]); one that runs out of time is reported.
func (e *extRoom) drain() {
	h := e.h
	m := e.manager()
	if m.Empty() || !m.Ready() {
		return
	}
	// A host that is down has nothing to wait for (its crash was
	// reported); a handler that runs out of time is worth saying.
	if err := m.Drain(h.ctx); errors.Is(err, ext.ErrHookTimeout) {
		e.failed("agent_end", fmt.Errorf("waiting for the run's event handlers: %w", err))
	}
}

// reload is pi's ctx.reload(): session_shutdown (reason "reload") to
// the extensions as they are, a fresh load of every extension, prompt
// templates and skills read again (with what resources_discover offers
// now), then session_start with reason "reload". Refused while a run is
// under way, as pi refuses it.
func (e *extRoom) reload(ctx context.Context) error {
	h := e.h
	if h.agent.IsStreaming() {
		return errReloadRunning
	}
	m := e.manager()
	if m.Handles(ext.EventSessionShutdown) {
		if _, err := m.Emit(ctx, ext.SessionShutdownEvent{Reason: "reload"}, e.snapshot()); err != nil {
			e.failed(ext.EventSessionShutdown, err)
		}
	}
	if err := m.Reload(ext.Untimed(ctx)); err != nil {
		return fmt.Errorf("ctx.reload(): %w", err)
	}
	h.prompts.resetPaths()
	h.prompts.load()
	e.discover("reload")
	h.toolset.apply()
	if m.Handles(ext.EventSessionStart) {
		if _, err := m.Emit(ctx, ext.SessionStartEvent{Reason: "reload"}, e.snapshot()); err != nil {
			e.failed(ext.EventSessionStart, err)
		}
	}
	return nil
}

// discover adds the skills and prompt templates extensions offer
// (resources_discover) to those gopi loads. Themes are pi's terminal's
// and are ignored.
func (e *extRoom) discover(reason string) {
	h := e.h
	m := e.manager()
	if !m.Handles("resources_discover") {
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, 2*ext.DefaultHookTimeout)
	defer cancel()
	res, err := m.ResourcesDiscover(ctx, h.opts.Cwd, reason, e.snapshot())
	if err != nil {
		e.failed("resources_discover", err)
		return
	}
	if !h.prompts.addPaths(res.SkillPaths, res.PromptPaths) {
		return
	}
	h.prompts.load()
	h.prompts.refresh()
}
