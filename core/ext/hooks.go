package ext

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// Hooks are the extensions' handlers as gopi's runtime calls them: typed
// values in, typed values out, the JSON of the pipe kept here. The
// runtime's parts declare the methods they use as interfaces of their own
// (core/host/gate's Hooks, for tool_call and tool_result; core/host/run's,
// for context and message_end). With no
// extension, or none that listens, every method returns what it was
// given, so a Hooks over an empty [Manager] is the no-op value.
type Hooks struct {
	M *Manager
	// State is what the handlers see: sent before each call.
	State func() *State
}

// ToolCall runs the tool_call handlers over a call about to run: they may
// give it other arguments (args), or block it with a reason. A handler
// that fails, or an extension host that is down or hangs, is an error:
// the caller blocks the call (pi's fail-safe).
func (h Hooks) ToolCall(ctx context.Context, call agent.Call) (args json.RawMessage, blocked bool, reason string, err error) {
	args = call.Args
	if !h.M.Handles(EventToolCall) {
		return args, false, "", nil
	}
	res, err := h.M.ToolCall(ctx, call.Name, call.ID, call.Args, h.State())
	if err != nil {
		return args, true, "", err
	}
	if res.Block {
		return args, true, res.Reason, nil
	}
	if present(res.Input) {
		args = res.Input
	}
	return args, false, "", nil
}

// ToolResult runs the tool_result handlers over a call's result and
// returns the result they leave. What a handler returned that gopi cannot
// read is an error beside the result: the rest of the change still holds.
func (h Hooks) ToolResult(ctx context.Context, call agent.Call, res agent.Result) (agent.Result, error) {
	if !h.M.Handles(EventToolResult) {
		return res, nil
	}
	content := res.Content
	if content == nil {
		content = llm.Contents{}
	}
	rawContent, err := Marshal(content)
	if err != nil {
		return res, fmt.Errorf("the tool's result: %w", err)
	}
	ev := ToolResultEvent{ToolName: call.Name, ToolCallID: call.ID, Input: call.Args,
		Content: rawContent, Details: res.Details, StructuredContent: res.StructuredContent, IsError: res.IsError}
	ev.ParentToolCallID, _ = agent.ParentCallID(ctx)
	patch, err := h.M.ToolResult(ctx, ev, h.State())
	if err != nil || patch == nil {
		return res, err
	}
	var c llm.Contents
	var unread error
	if err := json.Unmarshal(patch.Content, &c); err != nil {
		unread = fmt.Errorf("the handlers returned content gopi cannot read: %w", err)
	} else {
		res.Content = c
	}
	res.Details = nil
	if present(patch.Details) {
		res.Details = patch.Details
	}
	// What the handlers left of it: they may replace it, and replacing
	// the content alone drops it.
	res.StructuredContent = nil
	if present(patch.StructuredContent) {
		res.StructuredContent = patch.StructuredContent
	}
	if patch.IsError != nil {
		res.IsError = *patch.IsError
	}
	return res, unread
}

// Context runs the context handlers over the messages of a model request
// about to go, and returns the messages they leave. An error (the call
// failed, or what the handlers returned cannot be read) comes with msgs
// as they were.
func (h Hooks) Context(ctx context.Context, msgs []llm.Message) ([]llm.Message, error) {
	if !h.M.Handles("context") {
		return msgs, nil
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		return msgs, nil
	}
	out, err := h.M.Context(ctx, raw, h.State())
	if err != nil || out == nil {
		return msgs, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(out, &items); err != nil {
		return msgs, fmt.Errorf("the handlers returned messages gopi cannot read: %w", err)
	}
	next := make([]llm.Message, 0, len(items))
	for _, it := range items {
		msg, err := llm.UnmarshalMessage(it)
		if err != nil {
			return msgs, fmt.Errorf("the handlers returned a message gopi cannot read: %w", err)
		}
		next = append(next, msg)
	}
	return next, nil
}

// MessageEnd runs the message_end handlers over a message that just
// ended and returns the message that takes its place: a replacement of
// the same role, or msg. An error (the call failed, or a replacement gopi
// cannot read or of another role) comes with msg.
func (h Hooks) MessageEnd(ctx context.Context, msg llm.Message) (llm.Message, error) {
	if !h.M.Handles("message_end") {
		return msg, nil
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return msg, nil
	}
	out, err := h.M.MessageEnd(ctx, raw, h.State())
	if err != nil || out == nil {
		return msg, err
	}
	next, err := llm.UnmarshalMessage(out)
	if err != nil {
		return msg, fmt.Errorf("the handlers returned a message gopi cannot read: %w", err)
	}
	if reflect.TypeOf(next) != reflect.TypeOf(msg) {
		return msg, ErrMessageEndRole
	}
	return next, nil
}
