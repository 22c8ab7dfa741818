package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
)

// pi 1.5's actionable boundaries: turn_end (after a turn's messages are
// saved, before the client's turn_end) and agent_before_settle (when
// nothing more would run, before agent_settled). Their handlers propose
// session entries and may ask for one more model request; gopi checks the
// proposal as each handler makes it (the preview), appends it in order
// and, when asked and the context can go on, makes that request.

// boundaryDraft is one proposed entry (pi's SessionBoundaryDraft).
type boundaryDraft struct {
	Type             string          `json:"type"`
	CustomType       *string         `json:"customType"`
	Data             json.RawMessage `json:"data"`
	Content          json.RawMessage `json:"content"`
	Display          bool            `json:"display"`
	Details          json.RawMessage `json:"details"`
	TargetID         string          `json:"targetId"`
	Replacement      json.RawMessage `json:"replacement"`
	Summary          *string         `json:"summary"`
	FirstKeptEntryID *string         `json:"firstKeptEntryId"`
	Usage            *llm.Usage      `json:"usage"`

	// replacement is Replacement read (nil: the target is left out).
	replacement *session.ContextReplacement
}

// parseDrafts decodes and checks a proposal's entries.
func parseDrafts(raw []json.RawMessage) ([]boundaryDraft, error) {
	out := make([]boundaryDraft, 0, len(raw))
	for i, r := range raw {
		var d boundaryDraft
		if err := json.Unmarshal(r, &d); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		switch d.Type {
		case "custom":
			if d.CustomType == nil {
				return nil, fmt.Errorf("entry %d: a custom entry needs a customType", i)
			}
		case "custom_message":
			if d.CustomType == nil {
				return nil, fmt.Errorf("entry %d: a custom_message entry needs a customType", i)
			}
			if len(d.Content) == 0 || (d.Content[0] != '"' && d.Content[0] != '[') {
				return nil, fmt.Errorf("entry %d: a custom_message entry's content must be a string or an array", i)
			}
		case "context_edit":
			if d.TargetID == "" {
				return nil, fmt.Errorf("entry %d: a context_edit entry needs a targetId", i)
			}
			rep, err := session.NewContextReplacement(d.Replacement)
			if err != nil {
				return nil, fmt.Errorf("entry %d: %w", i, err)
			}
			d.replacement = rep
		case "compaction":
			if d.Summary == nil {
				return nil, fmt.Errorf("entry %d: a compaction entry needs a summary", i)
			}
		default:
			return nil, fmt.Errorf("entry %d: %q entries cannot be added at a boundary (custom, custom_message, context_edit or compaction can)", i, api.Clip(d.Type, api.ClipName))
		}
		out = append(out, d)
	}
	return out, nil
}

// entry is the draft as the entry it would become, for a preview.
func (d boundaryDraft) entry() session.Entry {
	switch d.Type {
	case "custom":
		return &session.CustomEntry{CustomType: *d.CustomType, Data: nullToNil(d.Data)}
	case "custom_message":
		return &session.CustomMessageEntry{CustomType: *d.CustomType, Content: customContent(d.Content),
			Display: d.Display, Details: nullToNil(d.Details)}
	case "context_edit":
		return &session.ContextEditEntry{TargetID: d.TargetID, Replacement: d.replacement}
	default:
		c := &session.CompactionEntry{Summary: *d.Summary, Details: nullToNil(d.Details)}
		if d.FirstKeptEntryID != nil {
			c.FirstKeptEntryID = *d.FirstKeptEntryID
		}
		return c
	}
}

// boundaryContext is what a boundary handler sees as event.context: the
// context the proposal makes (pi's BoundaryContextPreview: the entries it
// is built from, the drafts among them with preview ids, and its
// messages). An error says why the proposal cannot be appended.
func (e *extRoom) boundaryContext(event string, drafts []boundaryDraft) (ext.BoundaryPreview, error) {
	h := e.h
	entries := make([]session.Entry, len(drafts))
	for i, d := range drafts {
		entries[i] = d.entry()
	}
	c, ctxEntries, err := h.Store().PreviewContext(entries)
	if err != nil {
		return ext.BoundaryPreview{}, err
	}
	llmMsgs := session.ConvertToLLM(c.Messages)
	steer, follow := h.agent.Queued()
	pending := append(steer, follow...)
	custom := h.run.CustomNow()
	held := len(custom)
	for _, m := range custom {
		pending = append(pending, m)
	}
	can := canContinue(event, llmMsgs, len(pending)-held, held)
	return ext.BoundaryPreview{
		ContextEntries:  ctxEntries,
		ContextMessages: nonNilMessages(c.Messages),
		LLMMessages:     nonNilMessages(llmMsgs),
		PendingMessages: nonNilMessages(pending),
		CanContinue:     can,
	}, nil
}

// canContinue is pi's rule for a boundary's continuation: the context
// (as sent to the model) goes on when it holds more than system messages
// and does not end with the model's own reply, when extension messages
// held until the turn's end (held) will join it, or when queued messages
// will follow it (at turn_end always; at agent_before_settle after a
// reply).
func canContinue(event string, llmMsgs []llm.Message, queued, held int) bool {
	if held > 0 {
		return true
	}
	var final llm.Role
	nonSystem := false
	for _, m := range llmMsgs {
		final = m.MessageRole()
		if final != llm.RoleSystem {
			nonSystem = true
		}
	}
	if nonSystem && final != llm.RoleAssistant {
		return true
	}
	return queued > 0 && (event == "turn_end" || final == llm.RoleAssistant)
}

func nonNilMessages(ms []llm.Message) []llm.Message {
	if ms == nil {
		return []llm.Message{}
	}
	return ms
}

// runBoundary runs a boundary's handlers and appends what they proposed;
// the agent's transcript is then the session's context again. rebuilt is
// that context when entries were appended (nil otherwise), and more says
// whether one more request was asked for and can be made.
func (e *extRoom) runBoundary(ctx context.Context, event ext.Event) (rebuilt []llm.Message, more bool) {
	h := e.h
	typ := event.EventType()
	m := e.manager()
	res, err := m.Boundary(ctx, event, e.snapshot())
	if err != nil {
		e.failed(typ, err)
		return nil, false
	}
	drafts, err := parseDrafts(res.Entries)
	if err != nil {
		h.emit(api.ExtensionError{ExtensionPath: "<boundary>", Event: typ, Error: "Invalid boundary entries: " + err.Error()})
		return nil, false
	}
	appended := e.commitDrafts(typ, drafts)
	if !appended && !res.Continue {
		return nil, false
	}
	msgs := h.Store().Context().Messages
	if appended {
		h.agent.ReplaceMessages(msgs)
		rebuilt = msgs
	}
	if !res.Continue {
		return rebuilt, false
	}
	steer, follow := h.agent.QueueCounts()
	if !canContinue(typ, session.ConvertToLLM(msgs), steer+follow, h.run.CustomCount()) {
		h.emit(api.ExtensionError{ExtensionPath: "<boundary>", Event: typ, Error: typ + " requested continuation without runnable model context"})
		return rebuilt, false
	}
	return rebuilt, true
}

// commitDrafts appends the drafts in order, each reported as
// entry_appended; one that fails is reported and the rest still go.
func (e *extRoom) commitDrafts(event string, drafts []boundaryDraft) (appended bool) {
	h := e.h
	store := h.Store()
	for _, d := range drafts {
		var id string
		var err error
		switch d.Type {
		case "custom":
			id, err = store.AppendCustom(*d.CustomType, optional(d.Data))
		case "custom_message":
			id, err = store.AppendCustomMessage(*d.CustomType, customContent(d.Content), d.Display, optional(d.Details))
		case "context_edit":
			id, err = store.AppendContextEdit(d.TargetID, d.replacement)
		case "compaction":
			first := ""
			if d.FirstKeptEntryID != nil {
				first = *d.FirstKeptEntryID
			}
			tokens := compaction.EstimateContext(store.Context().Messages).Tokens
			id, err = store.AppendCompaction(*d.Summary, first, tokens, optional(d.Details), true, d.Usage)
		}
		if err = h.log.saved(store, "an extension's "+d.Type+" entry", err); err != nil {
			h.emit(api.ExtensionError{ExtensionPath: "<boundary>", Event: event, Error: err.Error()})
			continue
		}
		appended = true
		if e, ok := store.Entry(id); ok {
			if b, err := json.Marshal(e); err == nil {
				h.emit(api.EntryAppended{Entry: b})
			}
		}
	}
	return appended
}

// optional is raw as a value to store, nil when absent or null.
func optional(raw json.RawMessage) any {
	if r := nullToNil(raw); r != nil {
		return r
	}
	return nil
}

// turnBoundary is the agent's TurnBoundary: the extensions' turn_end.
func (e *extRoom) turnBoundary(ctx context.Context, msg *llm.AssistantMessage, results []*llm.ToolResultMessage) ([]llm.Message, bool) {
	h := e.h
	e.mu.Lock()
	index := e.turnIndex
	e.turnIndex++
	e.mu.Unlock()
	m := e.manager()
	if m.Empty() || !m.Ready() || !m.Handles("turn_end") {
		return nil, false
	}
	idOf := persistedIDs(h.Store())
	msgID := idOf(msg)
	if msgID == "" {
		h.emit(api.ExtensionError{ExtensionPath: "<boundary>", Event: "turn_end", Error: "turn_end could not resolve the persisted assistant entry ID"})
		return nil, false
	}
	ids := []string{}
	for _, r := range results {
		if id := idOf(r); id != "" {
			ids = append(ids, id)
		}
	}
	if results == nil {
		results = []*llm.ToolResultMessage{}
	}
	return e.runBoundary(ctx, ext.TurnEndEvent{
		TurnIndex: index, Message: msg, ToolResults: results,
		MessageEntryID: msgID, ToolResultEntryIDs: ids, Outcome: outcomeOf(msg),
	})
}

// beforeSettle runs agent_before_settle when a prompt would otherwise be
// over, and returns the run it asked for (nil for none). An aborted run
// skips it, as in pi.
func (e *extRoom) beforeSettle() func() {
	h := e.h
	m := e.manager()
	if m.Empty() || !m.Ready() || !m.Handles("agent_before_settle") || h.ctx.Err() != nil {
		return nil
	}
	last := h.LastAssistant()
	if last != nil && last.StopReason == llm.StopAborted {
		return nil
	}
	// agent_end's handlers finish first.
	e.drain()
	outcome := "completed"
	if last != nil {
		outcome = outcomeOf(last)
	}
	_, more := e.runBoundary(h.ctx, ext.AgentBeforeSettleEvent{Outcome: outcome})
	h.run.FlushCustom()
	if steer, follow := h.agent.QueueCounts(); steer+follow > 0 {
		more = true
	}
	if !more || h.ctx.Err() != nil {
		return nil
	}
	run, err := h.startContinue(h.ctx)
	if err != nil {
		h.emit(api.ExtensionError{ExtensionPath: "<boundary>", Event: "agent_before_settle", Error: fmt.Sprintf("continuing: %v", err)})
		return nil
	}
	return run
}

func outcomeOf(m *llm.AssistantMessage) string {
	switch m.StopReason {
	case llm.StopAborted:
		return "aborted"
	case llm.StopError:
		return "error"
	}
	return "completed"
}

// turnDepth bounds the search for a turn's messages: they are at the end
// of the branch, and looking further back would decode every message of a
// long branch for one that is not there.
const turnDepth = 256

// persistedIDs returns the id of the entry on the active branch holding a
// message (the same message, as the agent passed it; "" when none does),
// searched from the leaf back, turnDepth entries at most.
func persistedIDs(store *session.Store) func(llm.Message) string {
	path := store.Path()
	return func(msg llm.Message) string {
		for i := len(path) - 1; i >= 0 && i >= len(path)-turnDepth; i-- {
			if me, ok := path[i].(*session.MessageEntry); ok && me.Message() == msg {
				return me.ID
			}
		}
		return ""
	}
}
