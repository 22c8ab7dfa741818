package host

// This file starts the extensions and serves what they ask of gopi: each
// of their calls has its route (extRoutes), each notification its handler.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/codemode"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/llm"
)

// extPeer is gopi as the extensions call it: every method is served by
// its route below, with the params and result core/ext's protocol gives
// it.
type extPeer struct{ h *Host }

var _ ext.Peer = extPeer{}

// extRoutes are the methods extensions call, one typed func each.
var extRoutes = ext.NewRoutes(
	ext.Request(ext.PeerUIAsk, extPeer.extAsk),
	ext.Request(ext.PeerBoundaryPreview, extPeer.boundaryPreview),
	ext.Request(ext.PeerSetModel, extPeer.extSetModel),
	ext.Request(ext.PeerGetAPIKey, extPeer.extGetAPIKey),
	ext.Request(ext.PeerCompact, extPeer.extCompact),
	ext.Request(ext.PeerWaitForIdle, extPeer.extWaitForIdle),
	ext.Request(ext.PeerNewSession, extPeer.extNewSession),
	ext.Request(ext.PeerFork, extPeer.extFork),
	ext.Request(ext.PeerSwitchSession, extPeer.extSwitchSession),
	ext.Request(ext.PeerNavigateTree, extPeer.extNavigateTree),
	ext.Request(ext.PeerReload, extPeer.extReloadRequest),
	ext.Request(ext.PeerValidateMCPServer, extPeer.extValidateMCPServer),
	ext.Request(ext.PeerCallTool, extPeer.extCallTool),

	ext.Notification(ext.PeerError, extPeer.extError),
	ext.Notification(ext.PeerUI, extPeer.extUI),
	ext.Notification(ext.PeerUICancel, extPeer.extUICancel),
	ext.Notification(ext.PeerCallToolCancel, extPeer.extCallToolCancel),
	ext.Notification(ext.PeerSendMessage, extPeer.extSendMessage),
	ext.Notification(ext.PeerSendUserMessage, extPeer.extSendUserMessage),
	ext.Notification(ext.PeerAppendEntry, extPeer.extAppendEntry),
	ext.Notification(ext.PeerSetSessionName, extPeer.extSetSessionName),
	ext.Notification(ext.PeerSetLabel, extPeer.extSetLabel),
	ext.Notification(ext.PeerSetActiveTools, extPeer.extSetActiveTools),
	ext.Notification(ext.PeerSetThinkingLevel, extPeer.extSetThinkingLevel),
	ext.Notification(ext.PeerRegistrations, extPeer.extRegistrations),
	ext.Notification(ext.PeerRestarted, extPeer.extRestarted),
	ext.Notification(ext.PeerStopped, extPeer.extStopped),
	ext.Notification(ext.PeerAbort, extPeer.extAbort),
	ext.Notification(ext.PeerShutdown, extPeer.extShutdown),
	ext.Notification(ext.PeerRegisterProvider, extPeer.extRegisterProvider),
	ext.Notification(ext.PeerUnregisterProvider, extPeer.extUnregisterProvider),
)

// Request implements [ext.Peer]; bad params are an [*ext.ParamError].
func (p extPeer) Request(ctx context.Context, method ext.Method, params json.RawMessage) (any, error) {
	return extRoutes.Request(ctx, p, method, params)
}

// Notification implements [ext.Peer]. Params that do not fit are
// reported as the extension's error; a notification gopi does not know
// is ignored, as JSON-RPC has it.
func (p extPeer) Notification(method ext.Method, params json.RawMessage) {
	h := p.h
	defer h.survive("an extension's "+string(method), nil)
	if err := extRoutes.Notify(p, method, params); err != nil && !errors.Is(err, ext.ErrNoMethod) {
		h.ext.failed(string(method), err)
	}
}

// ---- requests ----

// extAsk puts an extension's dialog in front of the user.
func (p extPeer) extAsk(ctx context.Context, a ext.UIAskParams) (api.UIResponse, error) {
	h := p.h
	c := h.uiClient()
	if c == nil {
		return api.Cancelled(""), nil
	}
	// A dialog never outlives the session.
	ctx, done := h.ext.withdrawable(ctx, h.ext.dialogs, a.RID)
	defer done()
	req := a.UIRequest
	req.ID = ""
	return c.Ask(ctx, req), nil
}

// extSetModel is pi.setModel: false for a model gopi does not know or
// has no credentials for.
func (p extPeer) extSetModel(ctx context.Context, a ext.ModelParams) (ext.SetModelResult, error) {
	h := p.h
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
func (p extPeer) extGetAPIKey(ctx context.Context, a ext.ModelParams) (ext.APIKeyResult, error) {
	h := p.h
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
func (p extPeer) extCompact(_ context.Context, a ext.CompactParams) (api.CompactionResult, error) {
	h := p.h
	return h.Compact(h.ctx, api.CompactParams{CustomInstructions: a.CustomInstructions})
}

// extWaitForIdle is ctx.waitForIdle().
func (p extPeer) extWaitForIdle(ctx context.Context, _ ext.Empty) (ext.Empty, error) {
	h := p.h
	h.WaitIdle(ctx)
	return ext.Empty{}, ctx.Err()
}

// extNewSession is ctx.newSession().
func (p extPeer) extNewSession(ctx context.Context, a ext.NewSessionParams) (api.CancelledResult, error) {
	h := p.h
	return h.NewSession(ctx, api.NewSessionParams{ParentSession: a.Options.ParentSession})
}

// extFork is ctx.fork().
func (p extPeer) extFork(ctx context.Context, a ext.ForkParams) (ext.ForkResult, error) {
	h := p.h
	r, err := h.Fork(ctx, api.ForkParams{EntryID: a.EntryID})
	if err != nil {
		return ext.ForkResult{}, err
	}
	return ext.ForkResult{Cancelled: r.Cancelled, SelectedText: r.Text}, nil
}

// extSwitchSession is ctx.switchSession().
func (p extPeer) extSwitchSession(ctx context.Context, a ext.SwitchSessionParams) (api.CancelledResult, error) {
	h := p.h
	return h.SwitchSession(ctx, api.SwitchSessionParams{SessionPath: a.SessionPath})
}

// extNavigateTree is ctx.navigateTree().
func (p extPeer) extNavigateTree(ctx context.Context, a ext.NavigateTreeParams) (NavigateResult, error) {
	h := p.h
	return h.NavigateTree(ctx, a.TargetID, a.Options)
}

// extReloadRequest is ctx.reload(), answered with null.
func (p extPeer) extReloadRequest(ctx context.Context, _ ext.Empty) (*ext.Empty, error) {
	h := p.h
	return nil, h.ext.reload(ctx)
}

// ---- notifications ----

// extUI passes on a UI update that needs no answer.
func (p extPeer) extUI(r api.UIRequest) {
	h := p.h
	if c := h.uiClient(); c != nil {
		c.Notify(r)
	}
}

// extUICancel withdraws a dialog whose extension gave up on it.
func (p extPeer) extUICancel(a ext.UICancelParams) { p.h.ext.withdraw(p.h.ext.dialogs, a.RID) }

// extCallTool is ctx.executeTool(): an extension's tool calls another
// tool, as codemode's scripts do, through the tool pipeline. The call
// ends with the session, or when the extension withdraws it; its partial
// results reach the extension's onUpdate as well as the clients.
func (p extPeer) extCallTool(ctx context.Context, c ext.CallToolParams) (ext.ToolOutput, error) {
	h := p.h
	ctx, done := h.ext.withdrawable(ctx, h.ext.calls, c.ToolCallID)
	defer done()
	args := c.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	res := nestedCaller{h}.run(ctx, codemode.Nested{ID: c.ToolCallID, Parent: c.ParentToolCallID, Tool: c.Name, Args: args},
		func(partial agent.Result) {
			h.ext.manager().Notify(ext.HostCallToolUpdate, ext.CallToolUpdateParams{ToolCallID: c.ToolCallID, Partial: partial})
		})
	out, err := outputOf(res)
	if err != nil {
		return ext.ToolOutput{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	return out, nil
}

// extCallToolCancel withdraws a call an extension's tool made (its
// AbortSignal).
func (p extPeer) extCallToolCancel(a ext.CallToolCancelParams) {
	p.h.ext.withdraw(p.h.ext.calls, a.ToolCallID)
}

// extAppendEntry is pi.appendEntry.
func (p extPeer) extAppendEntry(a ext.AppendEntryParams) {
	h := p.h
	store := h.Store()
	id, err := store.AppendCustom(a.CustomType, optional(a.Data))
	if h.log.saved(store, "an extension's entry", err) != nil {
		return
	}
	if e, ok := store.Entry(id); ok {
		if b, err := json.Marshal(e); err == nil {
			h.emit(api.EntryAppended{Entry: b})
		}
	}
}

// extSetSessionName is pi.setSessionName.
func (p extPeer) extSetSessionName(a ext.NameParams) {
	h := p.h
	if err := h.SetSessionName(h.ctx, api.NameParams{Name: a.Name}); err != nil {
		h.ext.failed(string(ext.PeerSetSessionName), err)
	}
}

// extSetLabel is pi.setLabel.
func (p extPeer) extSetLabel(a ext.SetLabelParams) {
	h := p.h
	store := h.Store()
	if _, ok := store.Entry(a.EntryID); !ok {
		h.ext.failed(string(ext.PeerSetLabel), fmt.Errorf("%w %s in this session", errNoEntry, a.EntryID))
		return
	}
	_, err := store.AppendLabel(a.EntryID, a.Label)
	_ = h.log.saved(store, "a label", err)
}

// extSetActiveTools is pi.setActiveTools.
func (p extPeer) extSetActiveTools(a ext.SetActiveToolsParams) {
	h := p.h
	h.toolset.setActive(a.Names)
}

// extSetThinkingLevel is pi.setThinkingLevel; a level gopi does not know
// changes nothing, as in pi.
func (p extPeer) extSetThinkingLevel(a ext.SetThinkingLevelParams) {
	h := p.h
	if l, err := llm.ParseThinkingLevel(a.Level); err == nil {
		_ = h.SetThinkingLevel(h.ctx, api.ThinkingParams{Level: l})
	}
}

// extRegistrations takes in tools an extension registered late (the
// manager has merged them already).
func (p extPeer) extRegistrations(ext.Registrations) {
	h := p.h
	h.toolset.apply()
}

// extRestarted follows a crashed host's restart: the new process lost
// what its extensions kept in memory, and session_start lets them
// rebuild it from the session.
func (p extPeer) extRestarted(ext.Empty) {
	h := p.h
	select {
	case <-h.ext.stopped:
		return
	default:
	}
	h.ext.wg.Go(func() {
		defer h.survive("restarting the extensions", nil)
		h.toolset.apply()
		if m := h.ext.manager(); m.Handles(ext.EventSessionStart) {
			ctx, cancel := context.WithTimeout(h.ctx, 2*ext.DefaultHookTimeout)
			defer cancel()
			if _, err := m.Emit(ctx, ext.SessionStartEvent{Reason: "reload"}, h.ext.snapshot()); err != nil {
				h.ext.failed(ext.EventSessionStart, err)
			}
		}
	})
}

// extStopped follows a host that crashed too often and stays down: the
// MCP servers it registered stop (the manager has dropped them from its
// registrations).
func (p extPeer) extStopped(ext.Empty) {
	h := p.h
	h.toolset.apply()
}

// extAbort is ctx.abort().
func (p extPeer) extAbort(ext.Empty) {
	h := p.h
	h.ext.wg.Go(func() { _ = h.Abort(h.ctx) })
}

// extShutdown is ctx.shutdown().
func (p extPeer) extShutdown(ext.Empty) {
	h := p.h
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
func (p extPeer) extRegisterProvider(a ext.RegisterProviderParams) {
	h := p.h
	for _, f := range a.Functions {
		if slices.Contains(providerCode, f) {
			h.ext.failed(string(ext.PeerRegisterProvider), fmt.Errorf("pi.registerProvider(%q): its %s is %w", a.Name, f, errProviderCode))
			return
		}
	}
	if err := h.opts.Registry.RegisterProvider(a.Name, a.Config); err != nil {
		h.ext.failed(string(ext.PeerRegisterProvider), fmt.Errorf("pi.registerProvider: %w", err))
	}
}

// extUnregisterProvider is pi.unregisterProvider.
func (p extPeer) extUnregisterProvider(a ext.NameParams) {
	h := p.h
	h.opts.Registry.UnregisterProvider(a.Name)
}

// start loads the extensions in the background: gopi answers
// its client meanwhile, and a prompt waits for them.
func (e *extRoom) start() {
	h := e.h
	m := e.manager()
	if m.Empty() {
		return
	}
	e.dialogs = map[string]context.CancelFunc{}
	e.calls = map[string]context.CancelFunc{}
	// The model calls go through a client that shows extensions the
	// provider's payload and headers (before_provider_request/_headers).
	o := h.agent.Options()
	o.HTTPClient = llm.WithRequestHook(o.HTTPClient, e.providerRequestHook, e.providerResponseHook)
	h.agent.SetOptions(o)
	e.wg.Go(func() {
		defer close(e.loaded)
		defer h.survive("starting the extensions", nil)
		m.Start(h.ctx, extPeer{h})
		e.discover("startup")
		h.toolset.apply()
		// session_start waits for the client, so what its handlers show
		// (a status, a widget) reaches it.
		select {
		case <-h.subscribed:
		case <-e.stopped:
			return
		}
		if m.Handles(ext.EventSessionStart) {
			ctx, cancel := context.WithTimeout(h.ctx, 2*ext.DefaultHookTimeout)
			defer cancel()
			if _, err := m.Emit(ctx, ext.SessionStartEvent{Reason: "startup"}, e.snapshot()); err != nil {
				e.failed(ext.EventSessionStart, err)
			}
		}
	})
}

// boundaryPreview answers the extension host's preview request.
func (p extPeer) boundaryPreview(_ context.Context, a ext.BoundaryPreviewParams) (ext.BoundaryPreview, error) {
	drafts, err := parseDrafts(a.Entries)
	if err != nil {
		return ext.BoundaryPreview{}, err
	}
	return p.h.ext.boundaryContext(a.Event, drafts)
}

// extSendMessage is pi.sendMessage: a custom message joins the
// conversation now, steers or follows up a run, waits for the next turn,
// or starts a turn of its own (triggerTurn).
func (p extPeer) extSendMessage(a ext.SendMessageParams) {
	h := p.h
	msg := &llm.CustomMessage{
		CustomType: a.Message.CustomType, Content: customContent(a.Message.Content), Display: a.Message.Display,
		Details: nullToNil(a.Message.Details), Timestamp: time.Now().UnixMilli(),
	}
	busy := h.run.Settle(h.ctx)
	noTurn := a.Options.TriggerTurn != nil && !*a.Options.TriggerTurn
	switch {
	case a.Options.DeliverAs == "nextTurn":
		h.run.HoldNextTurn(msg)
	case busy && noTurn:
		h.run.HoldCustom(msg)
	case busy && a.Options.DeliverAs == "followUp":
		h.agent.FollowUp(msg)
	case busy:
		h.agent.Steer(msg)
	case a.Options.TriggerTurn != nil && *a.Options.TriggerTurn:
		if err := h.starter.start(h.ctx, api.PromptParams{}, msg); err != nil {
			h.ext.failed(string(ext.PeerSendMessage), err)
		}
	default:
		h.log.addCustom(msg)
	}
}

// extSendUserMessage is pi.sendUserMessage: a user message, as if typed,
// that always leads to a turn; during a run deliverAs says how it queues.
func (p extPeer) extSendUserMessage(a ext.SendUserMessageParams) {
	h := p.h
	content := customContent(a.Content)
	text := content.Text()
	var images []llm.ImageContent
	for _, c := range content {
		if im, ok := c.(llm.ImageContent); ok {
			images = append(images, im)
		}
	}
	msg := llm.UserText(text, images...)
	if h.run.Settle(h.ctx) {
		switch a.Options.DeliverAs {
		case "followUp":
			h.agent.FollowUp(msg)
		case "steer":
			h.agent.Steer(msg)
		default:
			h.ext.failed(string(ext.PeerSendUserMessage), errStreamingDeliverAs)
		}
		return
	}
	if err := h.starter.start(h.ctx, api.PromptParams{}, msg); err != nil {
		h.ext.failed(string(ext.PeerSendUserMessage), err)
	}
}

// extValidateMCPServer is pi.registerMcpServer's check of its config
// (mcpstate.Validate).
func (p extPeer) extValidateMCPServer(_ context.Context, a ext.MCPServer) (ext.ValidateMCPServerResult, error) {
	return mcpstate.Validate(a), nil
}

// reportError is an extension's error notification (Host.extError).
func (p extPeer) extError(e ext.ErrorEvent) { p.h.ext.reportError(e) }
