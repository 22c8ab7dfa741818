package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gopi-dev/gopi/core/session"
)

// Manager is the extensions of one gopi process: it starts them, keeps
// their copy of gopi's state current and combines their answers to each
// hook the way pi's runner combines handlers.
type Manager struct {
	exts  []*member
	ready chan struct{}

	mu      sync.Mutex // guards the fields below
	peer    Peer
	started bool
	regs    Registrations // merged, in extension order
}

// member is one extension and what gopi knows of it.
type member struct {
	ext Extension

	mu      sync.Mutex // guards regs, handles and running
	regs    Registrations
	handles map[string]bool
	running bool

	syncMu sync.Mutex // guards the sync state below
	gen    int
	store  *session.Store
	lastID string
	// sent is the snapshot the extension's copy holds (nil after a
	// (re)start: everything goes out again).
	sent     *Snapshot
	leafSent string
	rareSent bool   // State.Rare went out since the last (re)start
	rareRev  uint64 // the State.RareRev it went out at
	restarts int
}

// NewManager manages exts, in order.
func NewManager(exts ...Extension) *Manager {
	m := &Manager{ready: make(chan struct{})}
	for _, e := range exts {
		m.exts = append(m.exts, &member{ext: e})
	}
	return m
}

// Empty reports whether there are no extensions at all.
func (m *Manager) Empty() bool { return m == nil || len(m.exts) == 0 }

// Start starts every extension (concurrently) and returns once all have
// loaded or failed. Failures are reported to peer as "error"
// notifications and leave that extension out. Run it in the background:
// the rest of gopi's startup need not wait, and [Manager.Wait] lets what
// needs the extensions wait for them.
func (m *Manager) Start(ctx context.Context, peer Peer) {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return
	}
	m.started = true
	m.peer = peer
	m.mu.Unlock()
	defer close(m.ready)
	var wg sync.WaitGroup
	for _, mem := range m.exts {
		wg.Go(func() {
			regs, err := mem.ext.Start(ctx, &memberPeer{m: m, mem: mem})
			if err != nil {
				peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: "<extension host>", Event: "load", Error: err.Error()}))
				return
			}
			mem.set(regs)
			for _, le := range regs.Errors {
				peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: le.Path, Event: "load", Error: le.Error}))
			}
		})
	}
	wg.Wait()
	m.merge()
}

func (m *Manager) merge() {
	var regs Registrations
	tools, servers := map[string]bool{}, map[string]bool{}
	for _, mem := range m.exts {
		mr, running := mem.registrations()
		if !running {
			continue
		}
		regs.Loaded = append(regs.Loaded, mr.Loaded...)
		regs.Errors = append(regs.Errors, mr.Errors...)
		for _, t := range mr.Tools {
			if !tools[t.Name] { // the first registration of a name wins, as in pi
				tools[t.Name] = true
				regs.Tools = append(regs.Tools, t)
			}
		}
		regs.Commands = append(regs.Commands, mr.Commands...)
		regs.Flags = append(regs.Flags, mr.Flags...)
		regs.Shortcuts = append(regs.Shortcuts, mr.Shortcuts...)
		for _, h := range mr.Handlers {
			if !slices.Contains(regs.Handlers, h) {
				regs.Handlers = append(regs.Handlers, h)
			}
		}
		for _, s := range mr.MCPServers {
			if !servers[s.Name] {
				servers[s.Name] = true
				regs.MCPServers = append(regs.MCPServers, s)
			}
		}
	}
	m.mu.Lock()
	m.regs = regs
	m.mu.Unlock()
}

// Reload loads every extension afresh that can be ([Reloader]) and
// replaces what they registered; load errors are reported as at start.
// The first that fails to reload ends it (those before it have
// reloaded, it and those after keep their old load).
func (m *Manager) Reload(ctx context.Context) error {
	m.mu.Lock()
	peer := m.peer
	m.mu.Unlock()
	defer m.merge()
	for _, mem := range m.exts {
		r, ok := mem.ext.(Reloader)
		if !ok {
			continue
		}
		if _, running := mem.registrations(); !running {
			continue
		}
		regs, err := r.Reload(ctx)
		if err != nil {
			return fmt.Errorf("reloading extensions: %w", err)
		}
		mem.set(regs)
		for _, le := range regs.Errors {
			peer.Notification(PeerError, mustJSON(ErrorEvent{ExtensionPath: le.Path, Event: "load", Error: le.Error}))
		}
	}
	return nil
}

// Wait blocks until Start has finished.
func (m *Manager) Wait(ctx context.Context) error {
	if m.Empty() {
		return nil
	}
	select {
	case <-m.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Ready reports whether Start has finished.
func (m *Manager) Ready() bool {
	if m.Empty() {
		return true
	}
	select {
	case <-m.ready:
		return true
	default:
		return false
	}
}

// Registrations are what the extensions registered (empty until ready).
func (m *Manager) Registrations() Registrations {
	if m.Empty() || !m.Ready() {
		return Registrations{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.regs
}

// Handles reports whether some extension listens to event.
func (m *Manager) Handles(event string) bool {
	if m.Empty() || !m.Ready() {
		return false
	}
	for _, mem := range m.exts {
		if mem.listens(event) {
			return true
		}
	}
	return false
}

// Close stops every extension.
func (m *Manager) Close() error {
	if m.Empty() {
		return nil
	}
	var errs []error
	for _, mem := range m.exts {
		errs = append(errs, mem.ext.Close())
	}
	return errors.Join(errs...)
}

// set records what the extension registered; it is running from then on.
func (mem *member) set(regs Registrations) {
	handles := map[string]bool{}
	for _, h := range regs.Handlers {
		handles[h] = true
	}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	mem.regs, mem.handles, mem.running = regs, handles, true
}

func (mem *member) registrations() (Registrations, bool) {
	mem.mu.Lock()
	defer mem.mu.Unlock()
	return mem.regs, mem.running
}

// listens reports whether the running extension handles event.
func (mem *member) listens(event string) bool {
	mem.mu.Lock()
	defer mem.mu.Unlock()
	return mem.running && mem.handles[event]
}

// memberPeer is gopi as one extension sees it: the manager reloads what
// an extension registered when it restarts.
type memberPeer struct {
	m   *Manager
	mem *member
}

func (p *memberPeer) Request(ctx context.Context, method Method, params json.RawMessage) (any, error) {
	p.m.mu.Lock()
	peer := p.m.peer
	p.m.mu.Unlock()
	return peer.Request(ctx, method, params)
}

func (p *memberPeer) Notification(method Method, params json.RawMessage) {
	p.m.mu.Lock()
	peer := p.m.peer
	p.m.mu.Unlock()
	switch method {
	case PeerRegistrations:
		// Bad params are the peer's to report: it decodes them too.
		if regs, err := decode[Registrations](method, params); err == nil {
			old, _ := p.mem.registrations()
			regs.Loaded, regs.Errors = old.Loaded, old.Errors
			p.mem.set(regs)
			p.m.merge()
		}
	case PeerRestarted:
		p.mem.syncMu.Lock()
		p.mem.sent, p.mem.store, p.mem.restarts = nil, nil, p.mem.restarts+1
		p.mem.syncMu.Unlock()
	case PeerStopped:
		// The MCP servers it registered stop with it. (Its tools and
		// handlers stay: their calls fail, and a tool_call that fails
		// blocks its tool, as a guard that is down should.)
		p.mem.mu.Lock()
		p.mem.regs.MCPServers = nil
		p.mem.mu.Unlock()
		p.m.merge()
	}
	peer.Notification(method, params)
}

// sync brings one extension's copy of the state up to date.
func (m *Manager) sync(mem *member, st *State) {
	if st == nil {
		return
	}
	mem.syncMu.Lock()
	defer mem.syncMu.Unlock()
	gen := -1
	if g, ok := mem.ext.(interface{ Generation() int }); ok {
		gen = g.Generation()
	}
	out := map[string]any{}
	if gen != mem.gen {
		mem.gen, mem.sent, mem.store = gen, nil, nil
	}
	if mem.sent == nil {
		mem.rareSent, mem.leafSent = false, ""
	}
	if !mem.rareSent || mem.rareRev != st.RareRev {
		mem.rareSent, mem.rareRev = true, st.RareRev
		if st.Rare != nil {
			rare := st.Rare()
			out["models"] = rare.Models
			if len(rare.Settings) > 0 {
				out["settings"] = rare.Settings
			}
		}
	}
	st.Snapshot.changed(mem.sent, out)
	sent := st.Snapshot
	mem.sent = &sent
	if st.Store != nil {
		var entries []session.Entry
		reset := st.Store != mem.store
		if !reset {
			var err error
			entries, err = st.Store.EntriesSince(mem.lastID)
			if err != nil {
				reset = true
			}
		}
		if reset {
			entries = st.Store.Entries()
			b, _ := json.Marshal(st.Store.Header())
			out[stateHeader] = json.RawMessage(b)
		}
		if reset || len(entries) > 0 {
			raw := make([]json.RawMessage, 0, len(entries))
			for _, e := range entries {
				if b, err := json.Marshal(e); err == nil {
					raw = append(raw, b)
				}
			}
			out[stateEntries] = map[string]any{"reset": reset, "add": raw}
			if len(entries) > 0 {
				mem.lastID = entries[len(entries)-1].Base().ID
			} else {
				mem.lastID = ""
			}
			mem.store = st.Store
		}
		leaf := st.Store.Leaf()
		if reset || mem.leafSent != leaf {
			mem.leafSent = leaf
			if leaf == "" {
				out[stateLeafID] = nil
			} else {
				out[stateLeafID] = leaf
			}
		}
	}
	if len(out) > 0 {
		mem.ext.Notify(HostState, StateUpdate(out))
	}
}

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

// Sync sends the state to every running extension now.
func (m *Manager) Sync(st *State) {
	_ = m.each("", st, func(*member) (bool, error) { return false, nil })
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

// UserBash runs user_bash: the first handler that answers decides (its
// { result } or { operations }); nil when none did. A handler that throws
// is an error, as in pi (the command does not run).
func (m *Manager) UserBash(ctx context.Context, event UserBashEvent, st *State) (*UserBashResult, error) {
	var out *UserBashResult
	err := m.each(event.EventType(), st, func(mem *member) (bool, error) {
		var r *UserBashResult
		if err := mem.ext.Call(ctx, HostUserBash, EventParams[UserBashEvent]{event}, &r); err != nil {
			return true, err
		}
		if r != nil {
			out = r
			return true, nil
		}
		return false, nil
	})
	return out, err
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

// Emit runs an event's handlers and waits for them. For pi's
// session_before_* events the answer is the last handler's result, and
// the first that cancels ends it.
func (m *Manager) Emit(ctx context.Context, event Event, st *State) (json.RawMessage, error) {
	var result json.RawMessage
	err := m.each(event.EventType(), st, func(mem *member) (bool, error) {
		var r json.RawMessage
		if err := mem.ext.Call(ctx, HostEmit, EventParams[Event]{event}, &r); err != nil {
			return true, err
		}
		if len(r) > 0 && string(r) != "null" {
			result = r
			// An answer that is not {cancel} (a handler's own result)
			// cancels nothing.
			var c CancelResult
			if json.Unmarshal(r, &c) == nil && c.Cancel {
				return true, nil
			}
		}
		return false, nil
	})
	return result, err
}

// EmitFor is [Manager.Emit] with the answer decoded into R: the zero R
// when no handler answered, or the answer does not fit R (an error
// naming the event then). Like Emit's, the answer may come with an error,
// from the handlers before the one that failed.
func EmitFor[R any](ctx context.Context, m *Manager, event Event, st *State) (R, error) {
	var r R
	raw, err := m.Emit(ctx, event, st)
	if raw == nil {
		return r, err
	}
	if uerr := json.Unmarshal(raw, &r); uerr != nil {
		var zero R
		return zero, errors.Join(err, fmt.Errorf("reading the %s handlers' answer: %w", event.EventType(), uerr))
	}
	return r, err
}

// Boundary runs an actionable boundary's handlers (event is turn_end or
// agent_before_settle without its proposal fields). Within one extension
// host each handler sees the proposal so far and a preview of the context
// it makes (the host asks gopi for it: [PeerBoundaryPreview]); across
// hosts the proposals are joined in order.
func (m *Manager) Boundary(ctx context.Context, event Event, st *State) (BoundaryResult, error) {
	out := BoundaryResult{Valid: true}
	err := m.each(event.EventType(), st, func(mem *member) (bool, error) {
		var r BoundaryResult
		if err := mem.ext.Call(ctx, HostBoundary, EventParams[Event]{event}, &r); err != nil {
			if errors.Is(err, ErrNoMethod) {
				return false, nil
			}
			return true, err
		}
		if !r.Valid {
			out.Valid = false
			return false, nil
		}
		out.Entries = append(out.Entries, r.Entries...)
		out.Continue = out.Continue || r.Continue
		return false, nil
	})
	if !out.Valid {
		out.Entries, out.Continue = nil, false
	}
	return out, err
}

// ToolCall runs the tool_call handlers. A handler that fails blocks the
// call, as in pi: the error is the reason.
func (m *Manager) ToolCall(ctx context.Context, name, id string, input json.RawMessage, st *State) (ToolCallResult, error) {
	res := ToolCallResult{Input: input}
	err := m.each(EventToolCall, st, func(mem *member) (bool, error) {
		var r ToolCallResult
		ev := ToolCallEvent{ToolName: name, ToolCallID: id, Input: res.Input}
		if err := mem.ext.Call(ctx, HostToolCall, EventParams[ToolCallEvent]{ev}, &r); err != nil {
			return true, err
		}
		if len(r.Input) > 0 {
			res.Input = r.Input
		}
		if r.Block {
			res.Block, res.Reason = true, r.Reason
			return true, nil
		}
		return false, nil
	})
	return res, err
}

// ToolResult runs the tool_result handlers over a finished call; nil
// means nothing changed. Handler failures are reported by the host and
// change nothing.
func (m *Manager) ToolResult(ctx context.Context, ev ToolResultEvent, st *State) (*ToolResultPatch, error) {
	changed := false
	err := m.each(ev.EventType(), st, func(mem *member) (bool, error) {
		var r *ToolResultPatch
		if err := mem.ext.Call(ctx, HostToolResult, EventParams[ToolResultEvent]{ev}, &r); err != nil {
			return true, err
		}
		if r != nil {
			changed = true
			if r.Content != nil {
				ev.Content = r.Content
				ev.StructuredContent = nil
			}
			if present(r.StructuredContent) {
				ev.StructuredContent = r.StructuredContent
			}
			if r.Details != nil {
				ev.Details = r.Details
			}
			if r.IsError != nil {
				ev.IsError = *r.IsError
			}
		}
		return false, nil
	})
	if !changed {
		return nil, err
	}
	// The combined change of every handler.
	details, merr := Marshal(ev.Details)
	if merr != nil {
		return nil, errors.Join(err, fmt.Errorf("the tool_result handlers' details: %w", merr))
	}
	var structured json.RawMessage
	if ev.StructuredContent != nil {
		if structured, merr = Marshal(ev.StructuredContent); merr != nil {
			return nil, errors.Join(err, fmt.Errorf("the tool_result handlers' structured content: %w", merr))
		}
	}
	return &ToolResultPatch{Content: ev.Content, Details: details, StructuredContent: structured, IsError: &ev.IsError}, err
}

// present reports a JSON value that is there and not null.
func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// Input runs the input handlers: transforms chain, "handled" ends it.
func (m *Manager) Input(ctx context.Context, text string, images json.RawMessage, source, behavior string, st *State) (InputResult, error) {
	res := InputResult{Action: "continue", Text: text, Images: images}
	changed := false
	err := m.each("input", st, func(mem *member) (bool, error) {
		var r InputResult
		p := InputParams{Text: res.Text, Source: source, StreamingBehavior: behavior}
		if len(res.Images) > 0 && string(res.Images) != "null" {
			p.Images = res.Images
		}
		if err := mem.ext.Call(ctx, HostInput, p, &r); err != nil {
			return true, err
		}
		switch r.Action {
		case "handled":
			res.Action = "handled"
			return true, nil
		case "transform":
			res.Text, changed = r.Text, true
			if r.Images != nil {
				res.Images = r.Images
			}
		}
		return false, nil
	})
	if res.Action != "handled" && changed {
		res.Action = "transform"
	}
	return res, err
}

// Context runs the context handlers over the messages a model call is
// about to read; nil means unchanged.
func (m *Manager) Context(ctx context.Context, messages json.RawMessage, st *State) (json.RawMessage, error) {
	var out json.RawMessage
	cur := messages
	err := m.each("context", st, func(mem *member) (bool, error) {
		var r Messages
		if err := mem.ext.Call(ctx, HostContext, Messages{Messages: cur}, &r); err != nil {
			return true, err
		}
		if len(r.Messages) > 0 {
			cur, out = r.Messages, r.Messages
		}
		return false, nil
	})
	return out, err
}

// BeforeAgentStart runs the before_agent_start handlers; each sees the
// system prompt and options as those before it left them.
func (m *Manager) BeforeAgentStart(ctx context.Context, ev BeforeAgentStartEvent, st *State) (BeforeAgentStartResult, error) {
	var res BeforeAgentStartResult
	err := m.each("before_agent_start", st, func(mem *member) (bool, error) {
		var r BeforeAgentStartResult
		if err := mem.ext.Call(ctx, HostBeforeAgentStart, ev, &r); err != nil {
			return true, err
		}
		res.Messages = append(res.Messages, r.Messages...)
		if r.SystemPrompt != nil {
			ev.SystemPrompt = *r.SystemPrompt
			res.SystemPrompt = r.SystemPrompt
		}
		if len(r.SystemPromptOptions) > 0 && string(r.SystemPromptOptions) != "null" {
			ev.SystemPromptOptions = r.SystemPromptOptions
			res.SystemPromptOptions = r.SystemPromptOptions
		}
		return false, nil
	})
	return res, err
}

// MessageEnd runs the message_end handlers, which may replace a finished
// message (same role); nil means unchanged.
func (m *Manager) MessageEnd(ctx context.Context, message json.RawMessage, st *State) (json.RawMessage, error) {
	var out json.RawMessage
	cur := message
	err := m.each("message_end", st, func(mem *member) (bool, error) {
		var r json.RawMessage
		if err := mem.ext.Call(ctx, HostMessageEnd, MessageParams{Message: cur}, &r); err != nil {
			return true, err
		}
		if len(r) > 0 && string(r) != "null" {
			cur, out = r, r
		}
		return false, nil
	})
	return out, err
}

// BeforeProviderRequest runs before_provider_request: each handler sees
// the payload as the ones before it left it. nil means no handler
// replaced it.
func (m *Manager) BeforeProviderRequest(ctx context.Context, payload json.RawMessage, st *State) (json.RawMessage, error) {
	var out json.RawMessage
	cur := payload
	err := m.each("before_provider_request", st, func(mem *member) (bool, error) {
		var r json.RawMessage
		if err := mem.ext.Call(ctx, HostBeforeProviderRequest, PayloadParams{Payload: cur}, &r); err != nil {
			return true, err
		}
		if len(r) > 0 && string(r) != "null" && string(r) != string(cur) {
			cur, out = r, r
		}
		return false, nil
	})
	return out, err
}

// BeforeProviderHeaders runs before_provider_headers over the request's
// headers; the result maps a name to its new value, or to nil to remove
// it (handlers set a header to null for that). nil means no change.
func (m *Manager) BeforeProviderHeaders(ctx context.Context, headers map[string]string, st *State) (map[string]*string, error) {
	cur := map[string]*string{}
	for k, v := range headers {
		cur[k] = &v
	}
	changed := false
	err := m.each("before_provider_headers", st, func(mem *member) (bool, error) {
		var r map[string]*string
		if err := mem.ext.Call(ctx, HostBeforeProviderHeaders, HeadersParams{Headers: cur}, &r); err != nil {
			return true, err
		}
		if r != nil {
			cur, changed = r, true
		}
		return false, nil
	})
	if !changed {
		return nil, err
	}
	return cur, err
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

// Resources are the skill, prompt template and theme files extensions
// offered in resources_discover.
type Resources struct {
	SkillPaths  []string
	PromptPaths []string
	ThemePaths  []string
}

// ResourcesDiscover runs the resources_discover handlers (reason is
// "startup" or "reload").
func (m *Manager) ResourcesDiscover(ctx context.Context, cwd, reason string, st *State) (Resources, error) {
	var out Resources
	err := m.each("resources_discover", st, func(mem *member) (bool, error) {
		var r ResourcesOffered
		if err := mem.ext.Call(ctx, HostResourcesDiscover, ResourcesDiscoverParams{Cwd: cwd, Reason: reason}, &r); err != nil {
			return true, err
		}
		for _, p := range r.SkillPaths {
			out.SkillPaths = append(out.SkillPaths, p.Path)
		}
		for _, p := range r.PromptPaths {
			out.PromptPaths = append(out.PromptPaths, p.Path)
		}
		for _, p := range r.ThemePaths {
			out.ThemePaths = append(out.ThemePaths, p.Path)
		}
		return false, nil
	})
	return out, err
}
