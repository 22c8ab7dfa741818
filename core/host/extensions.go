package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
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

// activeToolNames: h.ext.mu is held.
func (h *Host) activeToolNames() []string {
	if h.ext.active != nil {
		return slices.Clone(h.ext.active)
	}
	names := make([]string, len(h.ext.all))
	for i, t := range h.ext.all {
		names[i] = t.Spec().Name
	}
	return names
}

// applyExtensionTools puts the extensions' tools beside the built-in ones
// (an extension tool named like a built-in replaces it, as in pi), then
// the MCP servers' direct tools, and rebuilds the system prompt; the MCP
// servers extensions registered join the manager, or leave it, first.
// The MCP state calls it too (mcpstate.Config.Changed), whenever a
// server's tools change.
func (h *Host) applyExtensionTools() { h.toolPasses.run(h.applyTools) }

// applyTools is one pass of applyExtensionTools.
func (h *Host) applyTools() {
	regs := h.exts().Registrations()
	h.mcp.SyncRegistered(regs.MCPServers)
	sel := h.opts.ToolSelection
	// A tool --tools or --exclude-tools leaves out is not registered at
	// all, an extension's included (as in pi).
	regTools := slices.DeleteFunc(slices.Clone(regs.Tools), func(d ext.ToolDef) bool { return !sel.Allowed(d.Name) })
	byName := map[string]ext.ToolDef{}
	for _, d := range regTools {
		byName[d.Name] = d
	}
	var all []agent.Tool
	lines := map[string]resources.ToolLine{}
	guidelines := map[string][]string{}
	builtins := h.opts.AllTools
	if builtins == nil {
		builtins = h.opts.Tools
	}
	// No MCP tool takes the name of a built-in or an extension's tool
	// (one that would gets pi's hash suffix), so that a name means one
	// tool to the model, tool_search, get_mcp_servers and getAllTools.
	// Every extension tool counts, whatever the tool selection: a tool's
	// name does not depend on the flags of a run.
	var reserved []string
	for _, t := range builtins {
		reserved = append(reserved, t.Spec().Name)
	}
	for _, d := range regs.Tools {
		reserved = append(reserved, d.Name)
	}
	renamed := h.mcp.Reserve(reserved)
	for _, t := range builtins {
		if d, ok := byName[t.Spec().Name]; ok {
			all = append(all, extTool{h: h, def: d})
			delete(byName, d.Name)
			continue
		}
		all = append(all, t)
	}
	for _, d := range regTools {
		if _, ok := byName[d.Name]; ok {
			all = append(all, extTool{h: h, def: d})
		}
	}
	// The MCP servers' direct tools come last, and tool_search when a
	// server has tools to search; a name taken already keeps its tool.
	var mcpTools []agent.Tool
	for _, t := range h.mcp.Declared() {
		name := t.Spec().Name
		if !slices.ContainsFunc(all, func(o agent.Tool) bool { return o.Spec().Name == name }) {
			all = append(all, t)
			mcpTools = append(mcpTools, t)
		}
	}
	for _, d := range regTools {
		summary := d.PromptSnippet
		if summary == "" {
			summary, _, _ = strings.Cut(d.Description, "\n")
		}
		lines[d.Name] = resources.ToolLine{Name: d.Name, Summary: summary}
		guidelines[d.Name] = d.PromptGuidelines
	}
	h.ext.mu.Lock()
	h.ext.all, h.ext.lines, h.ext.guidelines = all, lines, guidelines
	if h.ext.active == nil {
		// The enabled built-ins and every extension tool (none at all
		// after --no-tools: not nil, which would mean all).
		h.ext.active = []string{}
		for _, t := range h.opts.Tools {
			h.ext.active = append(h.ext.active, t.Spec().Name)
		}
	}
	// A tool registered later is active, as in pi (regTools holds only
	// the tools a --tools allowlist names or matches).
	for _, d := range regTools {
		if !slices.Contains(h.ext.active, d.Name) && !h.ext.seen[d.Name] {
			h.ext.active = append(h.ext.active, d.Name)
		}
	}
	// So is an MCP tool that appears (its server connected, or its list
	// changed).
	for _, t := range mcpTools {
		if name := t.Spec().Name; !slices.Contains(h.ext.active, name) && !h.ext.seen[name] {
			h.ext.active = append(h.ext.active, name)
		}
	}
	if h.ext.seen == nil {
		h.ext.seen = map[string]bool{}
	}
	for _, d := range regTools {
		h.ext.seen[d.Name] = true
	}
	for _, t := range mcpTools {
		h.ext.seen[t.Spec().Name] = true
	}
	h.ext.mu.Unlock()
	h.applyActiveTools()
	// Extensions read their copy of the tools (getAllTools,
	// getActiveTools): it changes now, not at their next call, so that a
	// command waiting for an MCP server's tools sees them come.
	if m := h.exts(); m.Ready() {
		m.Sync(h.extSnapshot())
	}
	if renamed {
		// Clients hear of the servers whose tools it renamed.
		h.mcp.Announce()
	}
}

// setActiveTools is pi.setActiveTools: the tools known by these names
// become the active ones (unknown names are ignored).
func (h *Host) setActiveTools(names []string) {
	h.ext.mu.Lock()
	keep := []string{}
	for _, t := range h.ext.all {
		if slices.Contains(names, t.Spec().Name) {
			keep = append(keep, t.Spec().Name)
		}
	}
	h.ext.active = keep
	h.ext.mu.Unlock()
	h.applyActiveTools()
}

// applyActiveTools gives the agent the active tools and rebuilds the
// system prompt's tool list.
func (h *Host) applyActiveTools() {
	h.ext.mu.Lock()
	if h.ext.all == nil {
		// The extensions' tools are not known (yet): the built-ins stay.
		h.ext.mu.Unlock()
		h.refreshSystemPrompt()
		return
	}
	var ts []agent.Tool
	active := h.activeToolNames()
	for _, t := range h.ext.all {
		if slices.Contains(active, t.Spec().Name) {
			ts = append(ts, t)
		}
	}
	h.ext.mu.Unlock()
	h.agent.SetTools(ts)
	h.refreshSystemPrompt()
}

// allToolInfos are pi.getAllTools()'s answer, as pi 1.5.2 gives it: the
// tools of all (the built-ins and extension tools that exist), then every
// MCP tool gopi has, whatever its exposure (the tool selection keeps),
// unless a tool of all has its name. A tool says where it comes from
// (sourceInfo) and how the model reaches it (exposure); an MCP tool also
// its server (namespace) and the server's hints (annotations).
func (h *Host) allToolInfos(all []agent.Tool) []ext.ToolInfo {
	infos := make([]ext.ToolInfo, 0, len(all))
	taken := map[string]bool{}
	for _, t := range all {
		if mcpstate.IsMCPTool(t) {
			continue // below, with the others
		}
		s := t.Spec()
		taken[s.Name] = true
		info := ext.ToolInfo{Name: s.Name, Description: s.Description, Parameters: s.Parameters,
			Exposure: "direct", SourceInfo: builtinSource(s.Name)}
		if et, ok := t.(extTool); ok {
			info.SourceInfo = et.def.SourceInfo
		} else if mcpstate.IsToolSearch(t) {
			// pi's tool_search comes with its built-in extension
			// tool-search, declared but not callable by other tools.
			info.Exposure, info.SourceInfo = "model-only", builtinSource("tool-search")
		}
		infos = append(infos, info)
	}
	return append(infos, h.mcp.ToolInfos(taken, builtinSource("mcp"))...)
}

// builtinSource is pi 1.5's sourceInfo of a tool it ships, as
// pi.getAllTools() reports it: the path is builtin:<name> (builtin:mcp for
// every MCP tool, of pi's built-in MCP extension).
func builtinSource(name string) api.SourceInfo {
	return api.SourceInfo{Path: "builtin:" + name, Source: "builtin", Scope: "temporary", Origin: "top-level"}
}

// extTool is an extension's tool as the agent runs it.
type extTool struct {
	h   *Host
	def ext.ToolDef
}

func (t extTool) Spec() llm.ToolSpec {
	params := t.def.Parameters
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return llm.ToolSpec{Name: t.def.Name, Description: t.def.Description, Parameters: params}
}

// Sequential keeps a tool pi runs one at a time from running beside
// others.
func (t extTool) Sequential() bool { return t.def.ExecutionMode == "sequential" }

func (t extTool) Run(ctx context.Context, call agent.Call, update func(agent.Result)) (agent.Result, error) {
	out, err := t.h.exts().ExecuteTool(ctx, t.def.Name, call.ID, call.Args, func(partial json.RawMessage) {
		if r, err := toolOutput(partial); err == nil {
			update(r)
		}
	}, t.h.extSnapshot())
	if err != nil {
		return agent.Result{}, err
	}
	b, _ := json.Marshal(out)
	return toolOutput(b)
}

// toolOutput reads a pi tool result ({content, details,
// structuredContent, isError, terminate}).
func toolOutput(raw json.RawMessage) (agent.Result, error) {
	var o struct {
		Content           llm.Contents    `json:"content"`
		Details           json.RawMessage `json:"details"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Terminate         bool            `json:"terminate"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return agent.Result{}, fmt.Errorf("reading the extension tool's result: %w", err)
	}
	r := agent.Result{Content: o.Content, IsError: o.IsError, Terminate: o.Terminate}
	if len(o.Details) > 0 && string(o.Details) != "null" {
		r.Details = o.Details
	}
	if len(o.StructuredContent) > 0 && string(o.StructuredContent) != "null" {
		r.StructuredContent = o.StructuredContent
	}
	return r, nil
}

// extPrompt runs what extensions do with a prompt before gopi does: an
// extension command ("/name args") runs at once, even during a run, and
// the input handlers may transform or consume the text. handled means
// nothing more is to be done.
func (h *Host) extPrompt(ctx context.Context, text string, images []llm.ImageContent, source, behavior string) (handled bool, outText string, outImages []llm.ImageContent, err error) {
	m := h.exts()
	if m.Empty() {
		return false, text, images, nil
	}
	if err := h.extensionsReady(ctx); err != nil {
		return false, "", nil, fmt.Errorf("waiting for the extensions to load: %w", err)
	}
	if strings.HasPrefix(text, "/") {
		name, args, _ := strings.Cut(text[1:], " ")
		if m.HasCommand(name) {
			if err := m.RunCommand(h.ctx, name, args, h.extSnapshot()); err != nil {
				h.extFailed("command", err)
			}
			return true, "", nil, nil
		}
	}
	return h.extInput(ctx, m, text, images, source, behavior)
}

// extQueued runs the input handlers on a steer or follow_up message, as pi
// 1.5 does: they may consume it (handled) or transform it. behavior is
// "steer" or "followUp" while a run streams, empty when idle.
func (h *Host) extQueued(ctx context.Context, text string, images []llm.ImageContent, behavior string) (handled bool, outText string, outImages []llm.ImageContent, err error) {
	m := h.exts()
	if m.Empty() {
		return false, text, images, nil
	}
	if err := h.extensionsReady(ctx); err != nil {
		return false, "", nil, fmt.Errorf("waiting for the extensions to load: %w", err)
	}
	return h.extInput(ctx, m, text, images, "rpc", behavior)
}

// extInput runs the input handlers: a transform chains, "handled" ends it.
func (h *Host) extInput(ctx context.Context, m *ext.Manager, text string, images []llm.ImageContent, source, behavior string) (handled bool, outText string, outImages []llm.ImageContent, err error) {
	if !m.Handles("input") {
		return false, text, images, nil
	}
	var rawImages json.RawMessage
	if len(images) > 0 {
		rawImages, _ = json.Marshal(images)
	}
	res, err := m.Input(ctx, text, rawImages, source, behavior, h.extSnapshot())
	if err != nil {
		h.extFailed("input", err)
		return false, text, images, nil
	}
	switch res.Action {
	case "handled":
		return true, "", nil, nil
	case "transform":
		outImages = images
		if len(res.Images) > 0 && string(res.Images) != "null" {
			var imgs []llm.ImageContent
			if err := json.Unmarshal(res.Images, &imgs); err != nil {
				h.extFailed("input", fmt.Errorf("the handlers returned images gopi cannot read: %w", err))
			} else {
				outImages = imgs
			}
		}
		return false, res.Text, outImages, nil
	}
	return false, text, images, nil
}

// beforeAgentStart runs the before_agent_start handlers for a prompt about
// to start a run: the custom messages they return join the prompt, and a
// system prompt they return is this run's.
func (h *Host) beforeAgentStart(ctx context.Context, msg llm.Message, sent promptOptions, sentJSON json.RawMessage) []llm.Message {
	m := h.exts()
	if !m.Handles("before_agent_start") {
		return nil
	}
	ev := ext.BeforeAgentStartEvent{SystemPrompt: h.agent.SystemPrompt(), SystemPromptOptions: sentJSON}
	switch msg := msg.(type) {
	case *llm.UserMessage:
		ev.MessageType, ev.Prompt = "user", msg.Content.Text()
		var imgs []llm.ImageContent
		for _, c := range msg.Content {
			if im, ok := c.(llm.ImageContent); ok {
				imgs = append(imgs, im)
			}
		}
		if len(imgs) > 0 {
			ev.Images, _ = json.Marshal(imgs)
		}
	case *llm.CustomMessage:
		ev.MessageType = "custom"
		ev.Message, _ = json.Marshal(msg)
	}
	res, err := m.BeforeAgentStart(ctx, ev, h.extSnapshot())
	if err != nil {
		h.extFailed("before_agent_start", err)
		return nil
	}
	forced := res.SystemPrompt
	if len(res.SystemPromptOptions) > 0 {
		if f, err := h.startWithOptions(sent, res.SystemPromptOptions); err != nil {
			h.extFailed("before_agent_start", err)
		} else if f != nil {
			forced = f
		}
	}
	if forced != nil {
		// The whole prompt, for this run; the transcript keeps the
		// sections.
		h.agent.SetSystemPrompt(*forced)
	}
	var out []llm.Message
	for _, raw := range res.Messages {
		var cm ext.CustomMessage
		if err := json.Unmarshal(raw, &cm); err != nil {
			h.extFailed("before_agent_start", fmt.Errorf("a message gopi cannot read: %w", err))
			continue
		}
		out = append(out, &llm.CustomMessage{
			CustomType: cm.CustomType, Content: customContent(cm.Content), Display: cm.Display,
			Details: nullToNil(cm.Details), Timestamp: time.Now().UnixMilli(),
		})
	}
	return out
}

// startWithOptions builds the run's system prompt from the options the
// before_agent_start handlers left (raw), sent being what they were
// given: a changed tool selection changes the active tools too, as in
// pi. It returns the prompt a handler forced, if any. Options gopi cannot
// read, or a section name pi refuses, change nothing.
func (h *Host) startWithOptions(sent promptOptions, raw json.RawMessage) (forced *string, err error) {
	var o promptOptions
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("systemPromptOptions: %w", err)
	}
	for _, x := range o.Sections {
		if err := resources.CheckSectionName(x.Name); err != nil {
			return nil, fmt.Errorf("systemPromptOptions: %w", err)
		}
	}
	if !slices.Equal(o.SelectedTools, sent.SelectedTools) {
		// pi 1.5's document: the same as pi.setActiveTools() (pi
		// 0.87.1 and 1.5.2 change the tools but not the selection the
		// next run reports). The
		// prompt lists the tools the model gets.
		h.setActiveTools(o.SelectedTools)
		var active []string
		for _, t := range h.agent.Tools() {
			active = append(active, t.Spec().Name)
		}
		o.SelectedTools = slices.DeleteFunc(o.SelectedTools, func(n string) bool { return !slices.Contains(active, n) })
	}
	h.applyPromptOptions(o)
	return o.ForceSystemPrompt, nil
}

// customContent reads a custom message's content: a string or blocks.
func customContent(raw json.RawMessage) llm.Contents {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return llm.Contents{llm.TextContent{Text: s}}
	}
	var c llm.Contents
	if json.Unmarshal(raw, &c) == nil && c != nil {
		return c
	}
	return llm.Contents{}
}

func nullToNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

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

// extUserBash runs user_bash for the client's bash command: an extension
// that returns { result } answers it (nothing runs, the result is
// recorded); { operations } (a JavaScript backend, such as SSH) cannot
// run in gopi, so the command is refused rather than run locally against
// the extension's intent. A handler that throws refuses it too, as in pi.
func (h *Host) extUserBash(ctx context.Context, p api.BashParams) (api.BashResult, bool, error) {
	m := h.exts()
	if err := h.extensionsReady(ctx); err != nil || !m.Handles(ext.EventUserBash) {
		return api.BashResult{}, false, nil
	}
	ev := ext.UserBashEvent{Command: p.Command, ExcludeFromContext: p.ExcludeFromContext, Cwd: h.opts.Cwd}
	r, err := m.UserBash(ctx, ev, h.extSnapshot())
	if err != nil {
		return api.BashResult{}, false, fmt.Errorf("user_bash: %w", err)
	}
	switch {
	case r == nil:
	case r.Result != nil:
		return *r.Result, true, nil
	case r.Operations != nil:
		return api.BashResult{}, false, fmt.Errorf("user_bash: %w", errBashOperations)
	}
	return api.BashResult{}, false, nil
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

// providerRequestHook runs before_provider_request over the payload the
// provider's SDK built (its JSON body: a handler's return replaces it)
// and before_provider_headers over the request's headers (names in lower
// case; a handler sets one to null, or deletes it, to remove it). A hook
// that fails leaves the request as it was and says so.
func (h *Host) providerRequestHook(ctx context.Context, body []byte, header http.Header) ([]byte, error) {
	m := h.exts()
	if !m.Ready() {
		return nil, nil
	}
	var out []byte
	if m.Handles("before_provider_request") {
		res, err := m.BeforeProviderRequest(ctx, body, h.extSnapshot())
		switch {
		case err != nil:
			h.extFailed("before_provider_request", err)
		case res != nil:
			out = res
		}
	}
	if m.Handles("before_provider_headers") {
		flat := lowerHeaders(header)
		res, err := m.BeforeProviderHeaders(ctx, flat, h.extSnapshot())
		switch {
		case err != nil:
			h.extFailed("before_provider_headers", err)
		case res != nil:
			for k := range flat {
				if _, ok := res[k]; !ok {
					header.Del(k)
				}
			}
			for k, v := range res {
				if v == nil {
					header.Del(k)
				} else {
					header.Set(k, *v)
				}
			}
		}
	}
	return out, nil
}

// providerResponseHook runs after_provider_response: the answer's status
// and headers (names in lower case), before its body is read. When an
// extension listens to provider_stream_event, it returns what runs it for
// each event of the answer's stream: the provider's JSON as data, each
// awaited before the SDK reads on, as in pi.
func (h *Host) providerResponseHook(ctx context.Context, status int, header http.Header) func([]byte) {
	m := h.exts()
	if !m.Ready() {
		return nil
	}
	if m.Handles(ext.EventAfterProviderResponse) {
		ev := ext.AfterProviderResponseEvent{Status: status, Headers: lowerHeaders(header)}
		if _, err := m.Emit(ctx, ev, h.extSnapshot()); err != nil {
			h.extFailed(ext.EventAfterProviderResponse, err)
		}
	}
	model := h.agent.Model()
	if !m.Handles(ext.EventProviderStream) || model == nil {
		return nil
	}
	// One snapshot for the whole stream: nothing an extension reads
	// changes while the answer streams in.
	st := h.extSnapshot()
	return func(data []byte) {
		ev := ext.ProviderStreamEvent{Provider: model.Provider, API: model.API, Model: model.ID, Data: data}
		if _, err := m.Emit(ctx, ev, st); err != nil {
			h.extFailed(ext.EventProviderStream, err)
		}
	}
}

// lowerHeaders is header as extensions see it: one value per name, names
// in lower case.
func lowerHeaders(header http.Header) map[string]string {
	flat := make(map[string]string, len(header))
	for k, vs := range header {
		flat[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	return flat
}

// extSendMessage is pi.sendMessage: a custom message joins the
// conversation now, steers or follows up a run, waits for the next turn,
// or starts a turn of its own (triggerTurn).
func (h *Host) extSendMessage(a ext.SendMessageParams) {
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
		if err := h.startMessages(h.ctx, msg); err != nil {
			h.extFailed(string(ext.PeerSendMessage), err)
		}
	default:
		h.appendCustom(msg)
	}
}

// appendCustom adds an extension's message to the transcript and the
// session outside a run, reported to the client as a message.
func (h *Host) appendCustom(msg *llm.CustomMessage) {
	h.appendMessage(msg)
	h.emit(agent.Event{Type: agent.EventMessageStart, Message: msg})
	h.emit(agent.Event{Type: agent.EventMessageEnd, Message: msg})
}

// extSendUserMessage is pi.sendUserMessage: a user message, as if typed,
// that always leads to a turn; during a run deliverAs says how it queues.
func (h *Host) extSendUserMessage(a ext.SendUserMessageParams) {
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
			h.extFailed(string(ext.PeerSendUserMessage), errStreamingDeliverAs)
		}
		return
	}
	if err := h.startMessages(h.ctx, msg); err != nil {
		h.extFailed(string(ext.PeerSendUserMessage), err)
	}
}

// startMessages starts a run with msgs, as a prompt does.
func (h *Host) startMessages(ctx context.Context, msg llm.Message) error {
	return h.startPrompt(ctx, api.PromptParams{}, msg)
}

// beforeCompact runs the session_before_compact handlers: one may cancel
// the compaction (an error) or return the compaction itself (fromHook).
func (h *Host) beforeCompact(ctx context.Context, store *session.Store, prep *compaction.Preparation, reason, instructions string) (res compaction.Result, fromHook bool, err error) {
	m := h.exts()
	if err := h.extensionsReady(ctx); err != nil || !m.Handles(ext.EventSessionBeforeCompact) {
		return res, false, nil
	}
	files := prep.Files.Details()
	branch := make([]json.RawMessage, 0)
	for _, e := range store.Path() {
		if b, err := json.Marshal(e); err == nil {
			branch = append(branch, b)
		}
	}
	ev := ext.SessionBeforeCompactEvent{
		Preparation: ext.CompactPreparation{
			FirstKeptEntryID:    prep.FirstKeptEntryID,
			MessagesToSummarize: nonNil(prep.Messages),
			TurnPrefixMessages:  nonNil(prep.TurnPrefix),
			IsSplitTurn:         prep.IsSplitTurn,
			TokensBefore:        prep.TokensBefore,
			PreviousSummary:     prep.PreviousSummary,
			FileOps:             ext.FileOps{Read: files.ReadFiles, Modified: files.ModifiedFiles},
			Settings:            prep.Settings,
		},
		BranchEntries:      branch,
		CustomInstructions: instructions,
		Reason:             reason,
	}
	// A custom summary may call a model: no hook timeout here.
	r, err := ext.EmitFor[ext.BeforeCompactResult](ext.Untimed(ctx), m, ev, h.extSnapshot())
	if err != nil {
		h.extFailed(ext.EventSessionBeforeCompact, err)
		return res, false, nil
	}
	if r.Cancel {
		return res, false, errCompactionCancelled
	}
	if c := r.Compaction; c != nil && strings.TrimSpace(c.Summary) != "" {
		res = compaction.Result{Summary: c.Summary, FirstKeptEntryID: c.FirstKeptEntryID, TokensBefore: c.TokensBefore, Details: c.Details}
		if res.FirstKeptEntryID == "" {
			res.FirstKeptEntryID = prep.FirstKeptEntryID
		}
		if res.TokensBefore == 0 {
			res.TokensBefore = prep.TokensBefore
		}
		return res, true, nil
	}
	return res, false, nil
}

// afterCompact tells extensions about a saved compaction
// (session_compact).
func (h *Host) afterCompact(store *session.Store, entryID, reason string, fromHook bool) {
	m := h.exts()
	if !m.Handles(ext.EventSessionCompact) {
		return
	}
	e, ok := store.Entry(entryID)
	if !ok {
		return
	}
	b, err := json.Marshal(e)
	if err != nil {
		h.extFailed(ext.EventSessionCompact, fmt.Errorf("the compaction entry: %w", err))
		return
	}
	m.NotifyEvent(ext.SessionCompactEvent{CompactionEntry: b, FromExtension: fromHook, Reason: reason}, h.extSnapshot())
}

func nonNil(msgs []llm.Message) []llm.Message {
	if msgs == nil {
		return []llm.Message{}
	}
	return msgs
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
