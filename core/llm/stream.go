package llm

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
)

// StreamEventType is the wire name of an assistant stream event
// (pi's AssistantMessageEvent "type").
type StreamEventType string

const (
	EventStart         StreamEventType = "start"
	EventTextStart     StreamEventType = "text_start"
	EventTextDelta     StreamEventType = "text_delta"
	EventTextEnd       StreamEventType = "text_end"
	EventThinkingStart StreamEventType = "thinking_start"
	EventThinkingDelta StreamEventType = "thinking_delta"
	EventThinkingEnd   StreamEventType = "thinking_end"
	EventToolCallStart StreamEventType = "toolcall_start"
	EventToolCallDelta StreamEventType = "toolcall_delta"
	EventToolCallEnd   StreamEventType = "toolcall_end"
	EventDone          StreamEventType = "done"
	EventError         StreamEventType = "error"
)

// StreamEvent is one step of a streaming assistant message. Partial is a
// snapshot of the message so far (for done it is the final message, for
// error the failed one); it is safe to keep, as [Builder] never changes a
// snapshot it handed out.
type StreamEvent struct {
	Type         StreamEventType
	ContentIndex int
	Delta        string            // *_delta
	Content      string            // text_end, thinking_end
	ToolCall     *ToolCall         // toolcall_end
	Reason       StopReason        // done, error
	Partial      *AssistantMessage // every event; "message" for done, "error" for error
	// ID and ToolName: toolcall_start without its partial (the lean form
	// pi 1.5 sends), naming the call the block holds.
	ID       string
	ToolName string
}

// Terminal reports whether e ends the stream.
func (e StreamEvent) Terminal() bool { return e.Type == EventDone || e.Type == EventError }

// Lean returns e without its partial message, for clients that rebuild the
// message from deltas (the JSON-RPC dialect's default).
func (e StreamEvent) Lean() StreamEvent {
	if e.Type == EventToolCallStart && e.Partial != nil && e.ContentIndex < len(e.Partial.Content) {
		if tc, ok := e.Partial.Content[e.ContentIndex].(ToolCall); ok {
			e.ID, e.ToolName = tc.ID, tc.Name
		}
	}
	e.Partial = nil
	return e
}

// MarshalJSON writes exactly the fields pi writes for e.Type.
func (e StreamEvent) MarshalJSON() ([]byte, error) {
	type content struct {
		Type         StreamEventType   `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		Delta        *string           `json:"delta,omitempty"`
		Content      *string           `json:"content,omitempty"`
		ToolCall     *ToolCall         `json:"toolCall,omitempty"`
		Partial      *AssistantMessage `json:"partial,omitempty"`
	}
	switch e.Type {
	case EventStart:
		return json.Marshal(struct {
			Type    StreamEventType   `json:"type"`
			Partial *AssistantMessage `json:"partial,omitempty"`
		}{e.Type, e.Partial})
	case EventDone:
		return json.Marshal(struct {
			Type    StreamEventType   `json:"type"`
			Reason  StopReason        `json:"reason"`
			Message *AssistantMessage `json:"message,omitempty"`
		}{e.Type, e.Reason, e.Partial})
	case EventError:
		return json.Marshal(struct {
			Type   StreamEventType   `json:"type"`
			Reason StopReason        `json:"reason"`
			Error  *AssistantMessage `json:"error,omitempty"`
		}{e.Type, e.Reason, e.Partial})
	case EventTextDelta, EventThinkingDelta, EventToolCallDelta:
		return json.Marshal(content{Type: e.Type, ContentIndex: e.ContentIndex, Delta: &e.Delta, Partial: e.Partial})
	case EventTextEnd, EventThinkingEnd:
		return json.Marshal(content{Type: e.Type, ContentIndex: e.ContentIndex, Content: &e.Content, Partial: e.Partial})
	case EventToolCallEnd:
		return json.Marshal(content{Type: e.Type, ContentIndex: e.ContentIndex, ToolCall: e.ToolCall, Partial: e.Partial})
	case EventToolCallStart:
		if e.Partial == nil {
			return json.Marshal(struct {
				Type         StreamEventType `json:"type"`
				ContentIndex int             `json:"contentIndex"`
				ID           string          `json:"id"`
				ToolName     string          `json:"toolName"`
			}{e.Type, e.ContentIndex, e.ID, e.ToolName})
		}
		return json.Marshal(content{Type: e.Type, ContentIndex: e.ContentIndex, Partial: e.Partial})
	default:
		return json.Marshal(content{Type: e.Type, ContentIndex: e.ContentIndex, Partial: e.Partial})
	}
}

// UnmarshalJSON reads any of the shapes MarshalJSON writes.
func (e *StreamEvent) UnmarshalJSON(data []byte) error {
	var w struct {
		Type         StreamEventType   `json:"type"`
		ContentIndex int               `json:"contentIndex"`
		Delta        string            `json:"delta"`
		Content      string            `json:"content"`
		ToolCall     json.RawMessage   `json:"toolCall"`
		Reason       StopReason        `json:"reason"`
		Partial      *AssistantMessage `json:"partial"`
		Message      *AssistantMessage `json:"message"`
		Error        *AssistantMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*e = StreamEvent{Type: w.Type, ContentIndex: w.ContentIndex, Delta: w.Delta, Content: w.Content, Reason: w.Reason, Partial: w.Partial}
	if w.Message != nil {
		e.Partial = w.Message
	}
	if w.Error != nil {
		e.Partial = w.Error
	}
	if len(w.ToolCall) > 0 {
		c, err := UnmarshalContent(w.ToolCall)
		if err != nil {
			return err
		}
		if tc, ok := c.(ToolCall); ok {
			e.ToolCall = &tc
		}
	}
	return nil
}

// ToolSpec is a tool as the model sees it. Parameters is a JSON Schema
// object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one call to a model.
type Request struct {
	SystemPrompt string
	// Messages holds only what a model understands: *UserMessage,
	// *AssistantMessage and *ToolResultMessage. Convert the rest first.
	Messages []Message
	Tools    []ToolSpec
	Options  Options
}

// Auth is what a call needs to reach a provider besides the model: the
// key and the extra headers (a models.json provider's, for instance).
type Auth struct {
	APIKey  string
	Headers map[string]string
}

// Options tune one call.
type Options struct {
	// APIKey authenticates the call; empty means the provider sends none.
	APIKey string
	// Headers are added to (and override) the request's headers, after the
	// model's own Headers.
	Headers map[string]string
	// Thinking is the requested reasoning level, already clamped to the
	// model (see [ClampThinking]).
	Thinking ThinkingLevel
	// ThinkingBudgets overrides the token budget per level for APIs that
	// take one (Anthropic, Google).
	ThinkingBudgets map[ThinkingLevel]int
	// MaxTokens caps the reply; zero means the model's MaxTokens.
	MaxTokens   int
	Temperature *float64
	// SessionID lets providers that support it route or cache by session.
	SessionID string
	// CacheRetention is "none", "short" (default) or "long".
	CacheRetention string
	// HTTPClient replaces the default client (tests, proxies).
	HTTPClient *http.Client
}

// Provider streams one assistant message for one API family.
//
// Stream never panics and never returns a Go error: every failure is the
// final event, an [EventError] whose message has StopReason "error" (with an
// ErrorMessage that keeps the HTTP status and the provider's text) or
// "aborted" (ctx was cancelled). The sequence always begins with
// [EventStart] and ends with exactly one [EventDone] or [EventError]. A
// consumer that stops early must cancel ctx; the provider then releases its
// connection.
type Provider interface {
	Stream(ctx context.Context, model *Model, req *Request) iter.Seq[StreamEvent]
}

// ProviderFunc adapts a function to [Provider].
type ProviderFunc func(ctx context.Context, model *Model, req *Request) iter.Seq[StreamEvent]

func (f ProviderFunc) Stream(ctx context.Context, model *Model, req *Request) iter.Seq[StreamEvent] {
	return f(ctx, model, req)
}

// Collect drains a stream and returns the final message.
func Collect(events iter.Seq[StreamEvent]) *AssistantMessage {
	var last *AssistantMessage
	for ev := range events {
		if ev.Partial != nil {
			last = ev.Partial
		}
	}
	return last
}
