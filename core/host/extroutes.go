package host

// This file starts the extensions and serves what they ask of gopi: each
// of their calls has its route (extRoutes), each notification its handler.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
)

// extPeer is gopi as the extensions call it: every method is served by
// its route below, with the params and result core/ext's protocol gives
// it.
type extPeer struct{ h *Host }

var _ ext.Peer = extPeer{}

// extRoutes are the methods extensions call, one typed func each.
var extRoutes = ext.NewRoutes(
	ext.Request(ext.PeerUIAsk, (*Host).extAsk),
	ext.Request(ext.PeerBoundaryPreview, (*Host).boundaryPreview),
	ext.Request(ext.PeerSetModel, (*Host).extSetModel),
	ext.Request(ext.PeerGetAPIKey, (*Host).extGetAPIKey),
	ext.Request(ext.PeerCompact, (*Host).extCompact),
	ext.Request(ext.PeerWaitForIdle, (*Host).extWaitForIdle),
	ext.Request(ext.PeerNewSession, (*Host).extNewSession),
	ext.Request(ext.PeerFork, (*Host).extFork),
	ext.Request(ext.PeerSwitchSession, (*Host).extSwitchSession),
	ext.Request(ext.PeerNavigateTree, (*Host).extNavigateTree),
	ext.Request(ext.PeerReload, (*Host).extReloadRequest),
	ext.Request(ext.PeerValidateMCPServer, (*Host).extValidateMCPServer),

	ext.Notification(ext.PeerError, (*Host).extError),
	ext.Notification(ext.PeerUI, (*Host).extUI),
	ext.Notification(ext.PeerUICancel, (*Host).extUICancel),
	ext.Notification(ext.PeerSendMessage, (*Host).extSendMessage),
	ext.Notification(ext.PeerSendUserMessage, (*Host).extSendUserMessage),
	ext.Notification(ext.PeerAppendEntry, (*Host).extAppendEntry),
	ext.Notification(ext.PeerSetSessionName, (*Host).extSetSessionName),
	ext.Notification(ext.PeerSetLabel, (*Host).extSetLabel),
	ext.Notification(ext.PeerSetActiveTools, (*Host).extSetActiveTools),
	ext.Notification(ext.PeerSetThinkingLevel, (*Host).extSetThinkingLevel),
	ext.Notification(ext.PeerRegistrations, (*Host).extRegistrations),
	ext.Notification(ext.PeerRestarted, (*Host).extRestarted),
	ext.Notification(ext.PeerStopped, (*Host).extStopped),
	ext.Notification(ext.PeerAbort, (*Host).extAbort),
	ext.Notification(ext.PeerShutdown, (*Host).extShutdown),
	ext.Notification(ext.PeerRegisterProvider, (*Host).extRegisterProvider),
	ext.Notification(ext.PeerUnregisterProvider, (*Host).extUnregisterProvider),
)

// Request implements [ext.Peer]; bad params are an [*ext.ParamError].
func (p extPeer) Request(ctx context.Context, method ext.Method, params json.RawMessage) (any, error) {
	return extRoutes.Request(ctx, p.h, method, params)
}

// Notification implements [ext.Peer]. Params that do not fit are
// reported as the extension's error; a notification gopi does not know
// is ignored, as JSON-RPC has it.
func (p extPeer) Notification(method ext.Method, params json.RawMessage) {
	h := p.h
	defer h.survive("an extension's "+string(method), nil)
	if err := extRoutes.Notify(h, method, params); err != nil && !errors.Is(err, ext.ErrNoMethod) {
		h.extFailed(string(method), err)
	}
}

// ---- requests ----

// extAsk puts an extension's dialog in front of the user.
func (h *Host) extAsk(ctx context.Context, a ext.UIAskParams) (api.UIResponse, error) {
	c := h.uiClient()
	if c == nil {
		return api.Cancelled(""), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A dialog never outlives the session.
	stop := context.AfterFunc(h.ctx, cancel)
	defer stop()
	if a.RID != "" {
		h.ext.mu.Lock()
		h.ext.dialogs[a.RID] = cancel
		h.ext.mu.Unlock()
		defer func() {
			h.ext.mu.Lock()
			delete(h.ext.dialogs, a.RID)
			h.ext.mu.Unlock()
		}()
	}
	req := a.UIRequest
	req.ID = ""
	return c.Ask(ctx, req), nil
}

// extSetModel is pi.setModel: false for a model gopi does not know or
// has no credentials for.
func (h *Host) extSetModel(ctx context.Context, a ext.ModelParams) (ext.SetModelResult, error) {
	m, ok := h.opts.Registry.Find(a.Provider, a.ID)
	if !ok || !h.opts.Registry.HasAuth(&m) {
		return ext.SetModelResult{}, nil
	}
	set, err := h.SetModel(ctx, api.SetModelParams{Provider: a.Provider, ModelID: a.ID})
	if err != nil {
		return ext.SetModelResult{}, nil
	}
	return ext.SetModelResult{OK: true, Model: set, ThinkingLevel: h.agent.ThinkingLevel()}, nil
}

// extGetAPIKey is ctx.modelRegistry.getApiKeyAndHeaders.
func (h *Host) extGetAPIKey(ctx context.Context, a ext.ModelParams) (ext.APIKeyResult, error) {
	m, ok := h.opts.Registry.Find(a.Provider, a.ID)
	if !ok {
		return ext.APIKeyResult{Error: "unknown model " + a.Provider + "/" + a.ID}, nil
	}
	// No credentials is not a failure: pi answers ok without a key.
	out := ext.APIKeyResult{OK: true, Headers: m.Headers}
	if auth, err := h.opts.Registry.RequestAuth(ctx, &m); err == nil {
		out.APIKey = auth.APIKey
		if len(auth.Headers) > 0 {
			out.Headers = auth.Headers
		}
	}
	return out, nil
}

// extCompact is ctx.compact(): it runs in the session, not the call.
func (h *Host) extCompact(_ context.Context, a ext.CompactParams) (api.CompactionResult, error) {
	return h.Compact(h.ctx, api.CompactParams{CustomInstructions: a.CustomInstructions})
}

// extWaitForIdle is ctx.waitForIdle().
func (h *Host) extWaitForIdle(ctx context.Context, _ ext.Empty) (ext.Empty, error) {
	h.WaitIdle(ctx)
	return ext.Empty{}, ctx.Err()
}

// extNewSession is ctx.newSession().
func (h *Host) extNewSession(ctx context.Context, a ext.NewSessionParams) (api.CancelledResult, error) {
	return h.NewSession(ctx, api.NewSessionParams{ParentSession: a.Options.ParentSession})
}

// extFork is ctx.fork().
func (h *Host) extFork(ctx context.Context, a ext.ForkParams) (ext.ForkResult, error) {
	r, err := h.Fork(ctx, api.ForkParams{EntryID: a.EntryID})
	if err != nil {
		return ext.ForkResult{}, err
	}
	return ext.ForkResult{Cancelled: r.Cancelled, SelectedText: r.Text}, nil
}

// extSwitchSession is ctx.switchSession().
func (h *Host) extSwitchSession(ctx context.Context, a ext.SwitchSessionParams) (api.CancelledResult, error) {
	return h.SwitchSession(ctx, api.SwitchSessionParams{SessionPath: a.SessionPath})
}

// extNavigateTree is ctx.navigateTree().
func (h *Host) extNavigateTree(ctx context.Context, a ext.NavigateTreeParams) (NavigateResult, error) {
	return h.NavigateTree(ctx, a.TargetID, a.Options)
}

// extReloadRequest is ctx.reload(), answered with null.
func (h *Host) extReloadRequest(ctx context.Context, _ ext.Empty) (*ext.Empty, error) {
	return nil, h.extReload(ctx)
}

// ---- notifications ----

// extUI passes on a UI update that needs no answer.
func (h *Host) extUI(r api.UIRequest) {
	if c := h.uiClient(); c != nil {
		c.Notify(r)
	}
}

// extUICancel withdraws a dialog whose extension gave up on it.
func (h *Host) extUICancel(a ext.UICancelParams) {
	h.ext.mu.Lock()
	cancel := h.ext.dialogs[a.RID]
	h.ext.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// extAppendEntry is pi.appendEntry.
func (h *Host) extAppendEntry(a ext.AppendEntryParams) {
	store := h.Store()
	id, err := store.AppendCustom(a.CustomType, optional(a.Data))
	if h.saved(store, "an extension's entry", err) != nil {
		return
	}
	if e, ok := store.Entry(id); ok {
		if b, err := json.Marshal(e); err == nil {
			h.emit(api.EntryAppended{Entry: b})
		}
	}
}

// extSetSessionName is pi.setSessionName.
func (h *Host) extSetSessionName(a ext.NameParams) {
	if err := h.SetSessionName(h.ctx, api.NameParams{Name: a.Name}); err != nil {
		h.extFailed(string(ext.PeerSetSessionName), err)
	}
}

// extSetLabel is pi.setLabel.
func (h *Host) extSetLabel(a ext.SetLabelParams) {
	store := h.Store()
	if _, ok := store.Entry(a.EntryID); !ok {
		h.extFailed(string(ext.PeerSetLabel), fmt.Errorf("%w %s in this session", errNoEntry, a.EntryID))
		return
	}
	_, err := store.AppendLabel(a.EntryID, a.Label)
	_ = h.saved(store, "a label", err)
}

// extSetActiveTools is pi.setActiveTools.
func (h *Host) extSetActiveTools(a ext.SetActiveToolsParams) { h.setActiveTools(a.Names) }

// extSetThinkingLevel is pi.setThinkingLevel; a level gopi does not know
// changes nothing, as in pi.
func (h *Host) extSetThinkingLevel(a ext.SetThinkingLevelParams) {
	if l, err := llm.ParseThinkingLevel(a.Level); err == nil {
		_ = h.SetThinkingLevel(h.ctx, api.ThinkingParams{Level: l})
	}
}

// extRegistrations takes in tools an extension registered late (the
// manager has merged them already).
func (h *Host) extRegistrations(ext.Registrations) { h.applyExtensionTools() }

// extRestarted follows a crashed host's restart: the new process lost
// what its extensions kept in memory, and session_start lets them
// rebuild it from the session.
func (h *Host) extRestarted(ext.Empty) {
	select {
	case <-h.extStop:
		return
	default:
	}
	h.extWG.Go(func() {
		defer h.survive("restarting the extensions", nil)
		h.applyExtensionTools()
		if m := h.exts(); m.Handles(ext.EventSessionStart) {
			ctx, cancel := context.WithTimeout(h.ctx, 2*ext.DefaultHookTimeout)
			defer cancel()
			if _, err := m.Emit(ctx, ext.SessionStartEvent{Reason: "reload"}, h.extSnapshot()); err != nil {
				h.extFailed(ext.EventSessionStart, err)
			}
		}
	})
}

// extStopped follows a host that crashed too often and stays down: the
// MCP servers it registered stop (the manager has dropped them from its
// registrations).
func (h *Host) extStopped(ext.Empty) { h.applyExtensionTools() }

// extAbort is ctx.abort().
func (h *Host) extAbort(ext.Empty) { h.extWG.Go(func() { _ = h.Abort(h.ctx) }) }

// extShutdown is ctx.shutdown().
func (h *Host) extShutdown(ext.Empty) {
	if f := h.opts.Shutdown; f != nil {
		f()
	}
}

// providerCode are the parts of pi.registerProvider's config that are
// JavaScript code: gopi calls its own SDKs, never provider code in an
// extension, so a provider that needs them is refused.
var providerCode = []string{"stream", "streamSimple", "refreshModels", "getModels", "filterModels"}

// extRegisterProvider applies pi.registerProvider(name, config) in its
// declarative form (models.json's provider entry); see
// [models.Registry.RegisterProvider].
func (h *Host) extRegisterProvider(a ext.RegisterProviderParams) {
	for _, f := range a.Functions {
		if slices.Contains(providerCode, f) {
			h.extFailed(string(ext.PeerRegisterProvider), fmt.Errorf("pi.registerProvider(%q): its %s is %w", a.Name, f, errProviderCode))
			return
		}
	}
	if err := h.opts.Registry.RegisterProvider(a.Name, a.Config); err != nil {
		h.extFailed(string(ext.PeerRegisterProvider), fmt.Errorf("pi.registerProvider: %w", err))
	}
}

// extUnregisterProvider is pi.unregisterProvider.
func (h *Host) extUnregisterProvider(a ext.NameParams) { h.opts.Registry.UnregisterProvider(a.Name) }

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
