package ext

// This file owns the hooks whose handlers answer, and how their answers
// combine across handlers the way pi's runner combines them: the first
// that decides, transforms that chain, proposals that join.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gopi-dev/gopi/core/agent"
)

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
		ev.ParentToolCallID, _ = agent.ParentCallID(ctx)
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
