package agent

import (
	"encoding/json"

	"github.com/gopi-dev/gopi/core/llm"
)

// EventType is the wire name of an agent event's "type".
type EventType string

const (
	EventAgentStart          EventType = "agent_start"
	EventAgentEnd            EventType = "agent_end"
	EventTurnStart           EventType = "turn_start"
	EventTurnEnd             EventType = "turn_end"
	EventMessageStart        EventType = "message_start"
	EventMessageUpdate       EventType = "message_update"
	EventMessageEnd          EventType = "message_end"
	EventToolExecutionStart  EventType = "tool_execution_start"
	EventToolExecutionUpdate EventType = "tool_execution_update"
	EventToolExecutionEnd    EventType = "tool_execution_end"
)

// Event is one agent event as the RPC protocol sends it. Which fields are
// set depends on Type; MarshalJSON writes exactly pi's fields for it.
type Event struct {
	Type EventType
	// Message: message_start, message_update, message_end, turn_end.
	Message llm.Message
	// AssistantEvent: message_update.
	AssistantEvent *llm.StreamEvent
	// Messages: agent_end (every message the run added).
	Messages []llm.Message
	// ToolResults: turn_end.
	ToolResults []*llm.ToolResultMessage
	// Tool execution fields.
	ToolCallID string
	ToolName   string
	Args       json.RawMessage
	// Result: tool_execution_update (partialResult) and _end (result).
	Result  *Result
	IsError bool
	// DurationMs: tool_execution_end, how long the tool ran; nil when it
	// did not run.
	DurationMs *int64
	// ParentToolCallID: the tool execution events of a nested call (a
	// codemode script's), the id of the call that made it (pi's
	// parentToolCallId); "" for the model's own calls.
	ParentToolCallID string
	// WillRetry: agent_end, whether the runtime will retry the failed
	// reply (set by the runtime, which decides that).
	WillRetry bool
	// Usage: message_update in its lean form (see Lean), the reply's
	// cumulative usage so far.
	Usage *llm.Usage
}

// Lean returns e as pi 1.5 sends it on the wire: a message_update without
// the message so far (message, assistantMessageEvent.partial) but with the
// usage so far, so a reply costs bytes in proportion to its length, not
// its square; clients rebuild the message from the deltas and the *_end
// events' content. Other events are returned unchanged.
func (e Event) Lean() Event {
	if e.Type != EventMessageUpdate {
		return e
	}
	if a, ok := e.Message.(*llm.AssistantMessage); ok && a != nil {
		// The message is this event's own snapshot, never modified:
		// pointing into it costs no copy.
		e.Usage = &a.Usage
	} else if e.AssistantEvent != nil && e.AssistantEvent.Partial != nil {
		u := e.AssistantEvent.Partial.Usage
		e.Usage = &u
	}
	if e.Usage == nil {
		e.Usage = &llm.Usage{}
	}
	e.Message = nil
	if e.AssistantEvent != nil {
		l := e.AssistantEvent.Lean()
		e.AssistantEvent = &l
	}
	return e
}

// Sink receives events in order. It is called synchronously from the
// agent's goroutine; it must not block for long.
type Sink func(Event)

func (e Event) MarshalJSON() ([]byte, error) {
	switch e.Type {
	case EventAgentEnd:
		return json.Marshal(struct {
			Type      EventType    `json:"type"`
			Messages  llm.Messages `json:"messages"`
			WillRetry bool         `json:"willRetry"`
		}{e.Type, llm.Messages(e.Messages), e.WillRetry})
	case EventTurnEnd:
		trs := e.ToolResults
		if trs == nil {
			trs = []*llm.ToolResultMessage{}
		}
		return json.Marshal(struct {
			Type        EventType                `json:"type"`
			Message     llm.Message              `json:"message"`
			ToolResults []*llm.ToolResultMessage `json:"toolResults"`
		}{e.Type, e.Message, trs})
	case EventMessageStart, EventMessageEnd:
		return json.Marshal(struct {
			Type    EventType   `json:"type"`
			Message llm.Message `json:"message"`
		}{e.Type, e.Message})
	case EventMessageUpdate:
		if e.Message == nil && e.Usage != nil {
			return json.Marshal(struct {
				Type           EventType        `json:"type"`
				Usage          *llm.Usage       `json:"usage"`
				AssistantEvent *llm.StreamEvent `json:"assistantMessageEvent"`
			}{e.Type, e.Usage, e.AssistantEvent})
		}
		return json.Marshal(struct {
			Type           EventType        `json:"type"`
			Message        llm.Message      `json:"message,omitempty"`
			AssistantEvent *llm.StreamEvent `json:"assistantMessageEvent"`
		}{e.Type, e.Message, e.AssistantEvent})
	case EventToolExecutionStart:
		return json.Marshal(struct {
			Type       EventType       `json:"type"`
			ToolCallID string          `json:"toolCallId"`
			ToolName   string          `json:"toolName"`
			Args       json.RawMessage `json:"args"`
			Parent     string          `json:"parentToolCallId,omitempty"`
		}{e.Type, e.ToolCallID, e.ToolName, rawOrEmpty(e.Args), e.ParentToolCallID})
	case EventToolExecutionUpdate:
		return json.Marshal(struct {
			Type          EventType       `json:"type"`
			ToolCallID    string          `json:"toolCallId"`
			ToolName      string          `json:"toolName"`
			Args          json.RawMessage `json:"args"`
			PartialResult *Result         `json:"partialResult"`
			Parent        string          `json:"parentToolCallId,omitempty"`
		}{e.Type, e.ToolCallID, e.ToolName, rawOrEmpty(e.Args), e.Result, e.ParentToolCallID})
	case EventToolExecutionEnd:
		return json.Marshal(struct {
			Type       EventType `json:"type"`
			ToolCallID string    `json:"toolCallId"`
			ToolName   string    `json:"toolName"`
			Result     *Result   `json:"result"`
			IsError    bool      `json:"isError"`
			DurationMs *int64    `json:"durationMs,omitempty"`
			Parent     string    `json:"parentToolCallId,omitempty"`
		}{e.Type, e.ToolCallID, e.ToolName, e.Result, e.IsError, e.DurationMs, e.ParentToolCallID})
	default:
		return json.Marshal(struct {
			Type EventType `json:"type"`
		}{e.Type})
	}
}

func rawOrEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("{}")
	}
	return r
}

// EventType is the event's wire name (it makes Event an api.Event).
func (e Event) EventType() string { return string(e.Type) }
