package host

// This file owns the extensions' life in the host: the state they mirror,
// starting them, waiting for them (and for the host to be idle), stopping,
// reloading and draining them, and the skills and templates they offer.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/core/session"
)

// extState is the host state extensions read synchronously (host.mjs keeps
// a copy); the manager sends what changed before each call.
type extState struct {
	mu sync.Mutex // guards the fields below
	// dialogs are the extension dialogs open now, by the host's id, so
	// an extension that gives up (its AbortSignal) can close one.
	dialogs map[string]context.CancelFunc
	// turnIndex counts the turns of the run under way (turn_end's
	// turnIndex), from 0 at agent_start.
	turnIndex int
	// all is every tool: built-ins, with extension tools replacing those
	// of the same name, then the other extension tools.
	all []agent.Tool
	// active names the tools the model sees; nil means all of them.
	active []string
	// lines and guidelines describe the extension tools in the system
	// prompt.
	lines      map[string]resources.ToolLine
	guidelines map[string][]string
	// seen are the extension tools made active once already: one that
	// setActiveTools turned off stays off when others register.
	seen map[string]bool
	// usage is the context usage last sent to extensions, for usageKey.
	usage    *api.ContextUsage
	usageKey usageKey
	usageSet bool
	// baseSkills and baseTemplates count the skill and template paths
	// gopi had before extensions offered theirs (resources_discover); a
	// reload asks them again from there.
	baseSkills, baseTemplates int
}

func (h *Host) exts() *ext.Manager { return h.opts.Extensions }

// hooks are the extensions' handlers, typed (the JSON is core/ext's): the
// tool pipeline's tool_call and tool_result.
func (h *Host) hooks() ext.Hooks { return ext.Hooks{M: h.exts(), State: h.extSnapshot} }

// startExtensions loads the extensions in the background: gopi answers
// its client meanwhile, and a prompt waits for them.
func (h *Host) startExtensions() {
	m := h.exts()
	if m.Empty() {
		return
	}
	h.ext.dialogs = map[string]context.CancelFunc{}
	h.ext.baseSkills, h.ext.baseTemplates = len(h.opts.SkillPaths), len(h.opts.TemplatePaths)
	// The model calls go through a client that shows extensions the
	// provider's payload and headers (before_provider_request/_headers).
	o := h.agent.Options()
	o.HTTPClient = llm.WithRequestHook(o.HTTPClient, h.providerRequestHook, h.providerResponseHook)
	h.agent.SetOptions(o)
	h.extWG.Go(func() {
		defer close(h.extReady)
		defer h.survive("starting the extensions", nil)
		m.Start(h.ctx, extPeer{h})
		h.discoverResources("startup")
		h.applyExtensionTools()
		// session_start waits for the client, so what its handlers show
		// (a status, a widget) reaches it.
		select {
		case <-h.subscribed:
		case <-h.extStop:
			return
		}
		if m.Handles(ext.EventSessionStart) {
			ctx, cancel := context.WithTimeout(h.ctx, 2*ext.DefaultHookTimeout)
			defer cancel()
			if _, err := m.Emit(ctx, ext.SessionStartEvent{Reason: "startup"}, h.extSnapshot()); err != nil {
				h.extFailed(ext.EventSessionStart, err)
			}
		}
	})
}

// WaitIdle returns once no prompt is in progress (or ctx ends, or the
// host closes).
func (h *Host) WaitIdle(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.ctx, cancel)()
	h.run.Await(ctx, func(p run.Phase) bool { return p == run.Idle })
}

// extensionsFirst waits for the extensions to load before a command that
// may fire their events: pi has loaded them before it reads a command.
func (h *Host) extensionsFirst(ctx context.Context) { _ = h.extensionsReady(ctx) }

// extensionsReady waits until the extensions have loaded and handled
// session_start.
func (h *Host) extensionsReady(ctx context.Context) error {
	if h.exts().Empty() {
		return nil
	}
	select {
	case <-h.extReady:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitExtensions waits until the extensions have loaded (or failed to).
func (h *Host) WaitExtensions(ctx context.Context) error { return h.exts().Wait(ctx) }

// ExtensionFlags are the command-line flags extensions registered.
func (h *Host) ExtensionFlags() []ext.Flag { return h.exts().Registrations().Flags }

// stopExtensions tells extensions the session ends and stops them.
func (h *Host) stopExtensions() {
	m := h.exts()
	if m.Empty() {
		return
	}
	select {
	case <-h.extStop:
		return // stopped already
	default:
	}
	close(h.extStop)
	if m.Ready() && m.Handles(ext.EventSessionShutdown) {
		// gopi is going: a handler that fails has no one left to tell.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, _ = m.Emit(ctx, ext.SessionShutdownEvent{Reason: "quit"}, h.extSnapshot())
		cancel()
	}
	_ = m.Close()
	h.extWG.Wait()
}

// extFailed reports a hook call that failed as a whole (the host crashed
// or timed out); handler errors come from the host itself.
func (h *Host) extFailed(event string, err error) {
	h.emit(api.ExtensionError{ExtensionPath: "<extension host>", Event: event, Error: err.Error()})
}

// extSnapshot is the state extensions mirror, now.
func (h *Host) extSnapshot() *ext.State {
	store := h.Store()
	model := h.agent.Model()
	steer, follow := h.agent.QueueCounts()
	h.ext.mu.Lock()
	all := h.ext.all
	active := h.activeToolNames()
	h.ext.mu.Unlock()
	infos := h.allToolInfos(all)
	cmds := h.commands()
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
		ContextUsage:    h.snapshotUsage(store, model),
	}
	h.mu.Lock()
	snap.SystemPromptOptions = h.promptInputs
	h.mu.Unlock()
	reg := h.opts.Registry
	rare := func() ext.Rare {
		return ext.Rare{Models: reg.All(), Settings: h.opts.Settings.Merged}
	}
	return &ext.State{Snapshot: snap, Rare: rare, RareRev: reg.Revision(), Store: store}
}

// usageKey is what the context usage extensions see depends on: the
// session and its leaf, the transcript's length and the model.
type usageKey struct {
	store *session.Store
	leaf  string
	n     int
	model *llm.Model
}

// snapshotUsage is contextUsage for the state extensions mirror. It is
// sent before every hook call and walks the whole branch, so it is worked
// out again only when what it depends on changed (in a session of 10,000
// messages it took a millisecond per hook call).
func (h *Host) snapshotUsage(store *session.Store, model *llm.Model) *api.ContextUsage {
	key := usageKey{store: store, leaf: store.Leaf(), n: h.agent.MessageCount(), model: model}
	h.ext.mu.Lock()
	if h.ext.usageSet && h.ext.usageKey == key {
		u := h.ext.usage
		h.ext.mu.Unlock()
		return u
	}
	h.ext.mu.Unlock()
	u := h.contextUsage(h.agent.Messages())
	h.ext.mu.Lock()
	h.ext.usageKey, h.ext.usage, h.ext.usageSet = key, u, true
	h.ext.mu.Unlock()
	return u
}

// drainExtensions waits for the handlers of the events extensions were
// sent (see [ext.Manager.Drain]); one that runs out of time is reported.
func (h *Host) drainExtensions() {
	m := h.exts()
	if m.Empty() || !m.Ready() {
		return
	}
	// A host that is down has nothing to wait for (its crash was
	// reported); a handler that runs out of time is worth saying.
	if err := m.Drain(h.ctx); errors.Is(err, ext.ErrHookTimeout) {
		h.extFailed("agent_end", fmt.Errorf("waiting for the run's event handlers: %w", err))
	}
}

// extReload is pi's ctx.reload(): session_shutdown (reason "reload") to
// the extensions as they are, a fresh load of every extension, prompt
// templates and skills read again (with what resources_discover offers
// now), then session_start with reason "reload". Refused while a run is
// under way, as pi refuses it.
func (h *Host) extReload(ctx context.Context) error {
	if h.agent.IsStreaming() {
		return errReloadRunning
	}
	m := h.exts()
	if m.Handles(ext.EventSessionShutdown) {
		if _, err := m.Emit(ctx, ext.SessionShutdownEvent{Reason: "reload"}, h.extSnapshot()); err != nil {
			h.extFailed(ext.EventSessionShutdown, err)
		}
	}
	if err := m.Reload(ext.Untimed(ctx)); err != nil {
		return fmt.Errorf("ctx.reload(): %w", err)
	}
	h.mu.Lock()
	h.opts.SkillPaths = h.opts.SkillPaths[:h.ext.baseSkills]
	h.opts.TemplatePaths = h.opts.TemplatePaths[:h.ext.baseTemplates]
	h.mu.Unlock()
	h.loadResources()
	h.discoverResources("reload")
	h.applyExtensionTools()
	if m.Handles(ext.EventSessionStart) {
		if _, err := m.Emit(ctx, ext.SessionStartEvent{Reason: "reload"}, h.extSnapshot()); err != nil {
			h.extFailed(ext.EventSessionStart, err)
		}
	}
	return nil
}

// discoverResources adds the skills and prompt templates extensions offer
// (resources_discover) to those gopi loads. Themes are pi's terminal's
// and are ignored.
func (h *Host) discoverResources(reason string) {
	m := h.exts()
	if !m.Handles("resources_discover") {
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, 2*ext.DefaultHookTimeout)
	defer cancel()
	res, err := m.ResourcesDiscover(ctx, h.opts.Cwd, reason, h.extSnapshot())
	if err != nil {
		h.extFailed("resources_discover", err)
		return
	}
	if len(res.SkillPaths)+len(res.PromptPaths) == 0 {
		return
	}
	h.mu.Lock()
	h.opts.SkillPaths = append(h.opts.SkillPaths, res.SkillPaths...)
	h.opts.TemplatePaths = append(h.opts.TemplatePaths, res.PromptPaths...)
	h.mu.Unlock()
	h.loadResources()
	h.refreshSystemPrompt()
}
