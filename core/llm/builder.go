package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Builder assembles an assistant message from a provider's stream and
// produces the matching [StreamEvent]s, so every provider emits the same
// shapes. Text is accumulated in strings.Builders, so a snapshot costs
// O(blocks), not O(text), and a long reply stays linear.
//
// The builder also times the response, from [NewBuilder] to [Builder.Done]
// or [Builder.Fail] (the message's DurationMs), as pi's stream does.
//
// A Builder is used by one goroutine.
type Builder struct {
	model *Model
	msg   AssistantMessage
	// started is when the response began (its monotonic reading times it).
	started time.Time
	// reported says the provider reported usage ([Builder.FinishUsage]):
	// only then is the cost said to be the catalog's or the provider's.
	reported bool
	// billed is the cost the provider reported it billed, if it did.
	billed *float64
	// bufs[i] accumulates block i's text, thinking or tool-call JSON.
	bufs []*strings.Builder
	// parsedAt[i] is the JSON length at which tool call i was last parsed.
	parsedAt []int
}

// NewBuilder starts an empty message for model.
func NewBuilder(model *Model) *Builder {
	b := &Builder{model: model, started: time.Now()}
	b.msg = AssistantMessage{
		Content:    Contents{},
		StopReason: StopPending,
		Timestamp:  Now(),
	}
	if model != nil {
		b.msg.API, b.msg.Provider, b.msg.Model = model.API, model.Provider, model.ID
	}
	return b
}

func (b *Builder) snapshot() *AssistantMessage { return b.msg.Clone() }

// Start is the first event of every stream.
func (b *Builder) Start() StreamEvent { return StreamEvent{Type: EventStart, Partial: b.snapshot()} }

// Len is the number of content blocks so far.
func (b *Builder) Len() int { return len(b.msg.Content) }

func (b *Builder) add(c Content) int {
	b.msg.Content = append(b.msg.Content, c)
	b.bufs = append(b.bufs, &strings.Builder{})
	b.parsedAt = append(b.parsedAt, 0)
	return len(b.msg.Content) - 1
}

func (b *Builder) ev(t StreamEventType, i int) StreamEvent {
	return StreamEvent{Type: t, ContentIndex: i, Partial: b.snapshot()}
}

// BeginText opens a text block and returns its content index.
func (b *Builder) BeginText() (int, StreamEvent) {
	i := b.add(TextContent{})
	return i, b.ev(EventTextStart, i)
}

// TextDelta appends to text block i.
func (b *Builder) TextDelta(i int, delta string) StreamEvent {
	t, _ := b.msg.Content[i].(TextContent)
	b.bufs[i].WriteString(delta)
	t.Text = b.bufs[i].String()
	b.msg.Content[i] = t
	ev := b.ev(EventTextDelta, i)
	ev.Delta = delta
	return ev
}

// SetTextSignature records provider metadata for text block i.
func (b *Builder) SetTextSignature(i int, sig string) {
	t, _ := b.msg.Content[i].(TextContent)
	t.TextSignature = sig
	b.msg.Content[i] = t
}

// EndText closes text block i.
func (b *Builder) EndText(i int) StreamEvent {
	ev := b.ev(EventTextEnd, i)
	ev.Content = b.bufs[i].String()
	return ev
}

// BeginThinking opens a thinking block and returns its content index.
func (b *Builder) BeginThinking() (int, StreamEvent) {
	i := b.add(ThinkingContent{})
	return i, b.ev(EventThinkingStart, i)
}

// ThinkingDelta appends to thinking block i.
func (b *Builder) ThinkingDelta(i int, delta string) StreamEvent {
	t, _ := b.msg.Content[i].(ThinkingContent)
	b.bufs[i].WriteString(delta)
	t.Thinking = b.bufs[i].String()
	b.msg.Content[i] = t
	ev := b.ev(EventThinkingDelta, i)
	ev.Delta = delta
	return ev
}

// SetThinkingSignature records the signature of thinking block i;
// SignatureDelta-style APIs may call it repeatedly with the whole value.
func (b *Builder) SetThinkingSignature(i int, sig string) {
	t, _ := b.msg.Content[i].(ThinkingContent)
	t.ThinkingSignature = sig
	b.msg.Content[i] = t
}

// SetRedacted marks thinking block i as withheld by the provider, its
// opaque payload in the signature.
func (b *Builder) SetRedacted(i int, payload string) {
	t, _ := b.msg.Content[i].(ThinkingContent)
	t.Redacted = true
	t.ThinkingSignature = payload
	b.msg.Content[i] = t
}

// EndThinking closes thinking block i.
func (b *Builder) EndThinking(i int) StreamEvent {
	ev := b.ev(EventThinkingEnd, i)
	ev.Content = b.bufs[i].String()
	return ev
}

// BeginToolCall opens a tool call block and returns its content index.
func (b *Builder) BeginToolCall(id, name string) (int, StreamEvent) {
	i := b.add(ToolCall{ID: id, Name: name, Arguments: json.RawMessage("{}")})
	return i, b.ev(EventToolCallStart, i)
}

// ToolCallDelta appends a piece of tool call i's argument JSON. The
// partial arguments are re-parsed as the JSON grows (always while it is
// small, then every 10%), so streaming a large argument stays linear.
func (b *Builder) ToolCallDelta(i int, delta string) StreamEvent {
	buf := b.bufs[i]
	buf.WriteString(delta)
	if n := buf.Len(); n <= 4096 || n >= b.parsedAt[i]+b.parsedAt[i]/10 {
		if args, ok := ParsePartialJSON(buf.String()); ok {
			t, _ := b.msg.Content[i].(ToolCall)
			t.Arguments = args
			b.msg.Content[i] = t
		}
		b.parsedAt[i] = n
	}
	ev := b.ev(EventToolCallDelta, i)
	ev.Delta = delta
	return ev
}

// SetToolCallArguments sets tool call i's arguments whole, for APIs that do
// not stream them.
func (b *Builder) SetToolCallArguments(i int, args json.RawMessage) {
	t, _ := b.msg.Content[i].(ToolCall)
	b.bufs[i].Reset()
	b.bufs[i].Write(args)
	t.Arguments = args
	b.msg.Content[i] = t
}

// SetThoughtSignature records Google's signature on tool call i.
func (b *Builder) SetThoughtSignature(i int, sig string) {
	t, _ := b.msg.Content[i].(ToolCall)
	t.ThoughtSignature = sig
	b.msg.Content[i] = t
}

// EndToolCall closes tool call i, parsing its complete arguments. JSON the
// model left malformed is repaired where possible, else it becomes {} and
// the tool's schema check tells the model what is missing.
func (b *Builder) EndToolCall(i int) StreamEvent {
	t, _ := b.msg.Content[i].(ToolCall)
	raw := strings.TrimSpace(b.bufs[i].String())
	switch {
	case raw == "":
		t.Arguments = json.RawMessage("{}")
	case json.Valid([]byte(raw)) && strings.HasPrefix(raw, "{"):
		t.Arguments = json.RawMessage(raw)
	default:
		if args, ok := ParsePartialJSON(raw); ok {
			t.Arguments = args
		} else {
			t.Arguments = json.RawMessage("{}")
		}
	}
	b.msg.Content[i] = t
	ev := b.ev(EventToolCallEnd, i)
	tc := t
	ev.ToolCall = &tc
	return ev
}

// End closes block i, whatever it holds, with [Builder.EndText],
// [Builder.EndThinking] or [Builder.EndToolCall].
func (b *Builder) End(i int) StreamEvent {
	switch b.msg.Content[i].(type) {
	case TextContent:
		return b.EndText(i)
	case ThinkingContent:
		return b.EndThinking(i)
	default:
		return b.EndToolCall(i)
	}
}

// Usage returns the live usage for the provider to fill in; call
// [Builder.FinishUsage] after changing it.
func (b *Builder) Usage() *Usage { return &b.msg.Usage }

// FinishUsage recomputes totals and cost from the model's prices, after
// the provider reported usage.
func (b *Builder) FinishUsage() {
	b.reported = true
	b.applyCost()
}

// SetBilledCost records the total the provider reported it billed for the
// response (OpenRouter does); it replaces the catalog's estimate as the
// usage's total from the next [Builder.FinishUsage] on.
func (b *Builder) SetBilledCost(total float64) { b.billed = &total }

// applyCost works out the cost of the usage so far: the catalog's prices,
// the provider's billed total when it gave one; TotalFromProvider stays
// unset until the provider reported usage, as in pi.
func (b *Builder) applyCost() {
	u := &b.msg.Usage
	u.ApplyCost(b.model)
	if !b.reported {
		u.Cost.TotalFromProvider = nil
		return
	}
	if b.billed != nil {
		u.Cost.Total = *b.billed
		u.Cost.TotalFromProvider = new(true)
	}
}

// end finishes the usage and times the response, for the final event.
func (b *Builder) end() {
	b.applyCost()
	if b.msg.DurationMs == nil {
		b.msg.DurationMs = new(time.Since(b.started).Round(time.Millisecond).Milliseconds())
	}
}

// SetResponseID records the provider's id for the response.
func (b *Builder) SetResponseID(id string) { b.msg.ResponseID = id }

// SetStopReason sets the reason the message will end with when [Builder.Done]
// is called without one.
func (b *Builder) SetStopReason(r StopReason) { b.msg.StopReason = r }

// SetRawStopReason records the provider's own stop reason.
func (b *Builder) SetRawStopReason(r string) { b.msg.RawStopReason = r }

// HasToolCalls reports whether the message holds a tool call.
func (b *Builder) HasToolCalls() bool { return len(b.msg.Content.ToolCalls()) > 0 }

// Done ends the stream successfully. An empty reason keeps the one set by
// [Builder.SetStopReason]; a message with tool calls ends in toolUse unless
// it was cut by length.
func (b *Builder) Done(reason StopReason) StreamEvent {
	if reason != "" {
		b.msg.StopReason = reason
	}
	if b.msg.StopReason == StopPending {
		b.msg.StopReason = StopStop
	}
	if b.HasToolCalls() && b.msg.StopReason == StopStop {
		b.msg.StopReason = StopToolUse
	}
	b.end()
	return StreamEvent{Type: EventDone, Reason: b.msg.StopReason, Partial: b.snapshot()}
}

// Fail ends the stream with err. If ctx was cancelled the message is
// "aborted", otherwise "error"; ErrorMessage is err's text.
func (b *Builder) Fail(ctx context.Context, err error) StreamEvent {
	reason := StopError
	if ctx != nil && ctx.Err() != nil || errors.Is(err, context.Canceled) {
		reason = StopAborted
	}
	b.msg.StopReason = reason
	if err != nil {
		b.msg.ErrorMessage = err.Error()
	}
	if reason == StopError {
		b.msg.Failure = FailureOf(err)
		b.msg.Refused = errors.Is(err, ErrRefused)
	}
	if reason == StopAborted && ctx != nil {
		if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
			b.msg.ErrorMessage = cause.Error()
		} else if b.msg.ErrorMessage == "" || errors.Is(err, context.Canceled) {
			b.msg.ErrorMessage = "Request was aborted"
		}
	}
	b.end()
	return StreamEvent{Type: EventError, Reason: reason, Partial: b.snapshot()}
}

// Message returns a snapshot of the message so far.
func (b *Builder) Message() *AssistantMessage { return b.snapshot() }
