package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/gopi-dev/gopi/core/llm"
)

// redactedThinkingText stands in for thinking the API withheld.
const redactedThinkingText = "[Reasoning redacted]"

// blockKind is what an open content block holds.
type blockKind int

const (
	blockText blockKind = iota
	blockThinking
	blockToolCall
)

// openBlock is a content block between its start and stop events.
type openBlock struct {
	kind blockKind
	idx  int // index in the builder's content
	sig  strings.Builder
	// startInput is set when the tool call's start event carried its
	// input; deltas, if any come, replace it.
	startInput bool
}

// streamState maps the API's stream events onto a Builder. The API numbers
// its blocks itself (and may interleave kinds gopi ignores), so blocks are
// looked up by the API's index.
type streamState struct {
	b     *llm.Builder
	yield func(llm.StreamEvent) bool
	open  map[int64]*openBlock
	// openRouter: the usage of message_delta may say what OpenRouter
	// billed.
	openRouter bool

	stopped bool // message_stop seen
	// failure is set when the API ended the message in a way gopi treats
	// as an error (a refusal, an unknown stop reason).
	failure error

	cur deltaEvent // the content_block_delta being decoded
}

func newStreamState(b *llm.Builder, yield func(llm.StreamEvent) bool) *streamState {
	return &streamState{b: b, yield: yield, open: map[int64]*openBlock{}}
}

// handle applies one stream event; false means the consumer stopped.
func (s *streamState) handle(ev sdk.MessageStreamEventUnion) bool {
	switch ev.Type {
	case "message_start":
		s.b.SetResponseID(ev.Message.ID)
		u := s.b.Usage()
		mu := ev.Message.Usage
		u.Input = int(mu.InputTokens)
		u.Output = int(mu.OutputTokens)
		u.CacheRead = int(mu.CacheReadInputTokens)
		u.CacheWrite = int(mu.CacheCreationInputTokens)
		s.b.FinishUsage()
	case "content_block_start":
		return s.start(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		return s.delta(ev.Index, ev.Delta)
	case "content_block_stop":
		return s.stop(ev.Index)
	case "message_delta":
		if r := ev.Delta.StopReason; r != "" {
			s.stopReason(r, ev.Delta.StopDetails)
		}
		// Proxies may leave counts out; keep what message_start said.
		u, du := s.b.Usage(), ev.Usage
		if du.JSON.InputTokens.Valid() {
			u.Input = int(du.InputTokens)
		}
		if du.JSON.OutputTokens.Valid() {
			u.Output = int(du.OutputTokens)
		}
		if du.JSON.CacheReadInputTokens.Valid() {
			u.CacheRead = int(du.CacheReadInputTokens)
		}
		if du.JSON.CacheCreationInputTokens.Valid() {
			u.CacheWrite = int(du.CacheCreationInputTokens)
		}
		if s.openRouter {
			if billed, ok := llm.OpenRouterBilled([]byte(du.RawJSON())); ok {
				s.b.SetBilledCost(billed)
			}
		}
		s.b.FinishUsage()
	case "message_stop":
		s.stopped = true
	}
	return true
}

func (s *streamState) start(apiIdx int64, cb sdk.ContentBlockStartEventContentBlockUnion) bool {
	switch cb.Type {
	case "text":
		i, ev := s.b.BeginText()
		s.open[apiIdx] = &openBlock{kind: blockText, idx: i}
		if !s.yield(ev) {
			return false
		}
		if cb.Text != "" {
			return s.yield(s.b.TextDelta(i, cb.Text))
		}
	case "thinking":
		i, ev := s.b.BeginThinking()
		ob := &openBlock{kind: blockThinking, idx: i}
		s.open[apiIdx] = ob
		if cb.Signature != "" {
			ob.sig.WriteString(cb.Signature)
			s.b.SetThinkingSignature(i, cb.Signature)
		}
		if !s.yield(ev) {
			return false
		}
		if cb.Thinking != "" {
			return s.yield(s.b.ThinkingDelta(i, cb.Thinking))
		}
	case "redacted_thinking":
		i, ev := s.b.BeginThinking()
		s.open[apiIdx] = &openBlock{kind: blockThinking, idx: i}
		s.b.SetRedacted(i, cb.Data)
		if !s.yield(ev) {
			return false
		}
		return s.yield(s.b.ThinkingDelta(i, redactedThinkingText))
	case "tool_use":
		i, ev := s.b.BeginToolCall(cb.ID, cb.Name)
		s.open[apiIdx] = &openBlock{kind: blockToolCall, idx: i}
		// Some servers send the whole input here instead of as deltas.
		if raw := strings.TrimSpace(cb.JSON.Input.Raw()); strings.HasPrefix(raw, "{") && raw != "{}" && json.Valid([]byte(raw)) {
			s.b.SetToolCallArguments(i, json.RawMessage(raw))
			s.open[apiIdx].startInput = true
		}
		return s.yield(ev)
	}
	return true
}

// read applies the stream's events until it ends. The SDK's own stream
// decodes every event into its union type through reflection, about 14 µs
// an event; content_block_delta, nearly every event of a reply, is decoded
// here into a small struct instead (about a tenth of that), and the rest
// go through the SDK's types as before.
func (s *streamState) read(events ssestream.Decoder, resp *http.Response) error {
	for events.Next() {
		ev := events.Event()
		data := bytes.TrimSuffix(ev.Data, []byte("\n"))
		switch ev.Type {
		case "ping", "":
			continue
		case "error":
			aerr := &sdk.Error{Request: resp.Request, Response: resp, StatusCode: resp.StatusCode,
				RequestID: resp.Header.Get("request-id")}
			if aerr.UnmarshalJSON(data) != nil {
				return fmt.Errorf("%w: %s", errStreamEvent, data)
			}
			return aerr
		}
		if len(data) == 0 {
			continue
		}
		if ev.Type == "content_block_delta" {
			d := &s.cur // reused: a delta costs no allocation of its own
			*d = deltaEvent{}
			if err := decodeDelta(data, d); err != nil {
				return fmt.Errorf("decoding %s event: %w", ev.Type, err)
			}
			if !s.deltaOf(d.Index, d.Delta.Type, d.Delta.Text, d.Delta.Thinking, d.Delta.PartialJSON, d.Delta.Signature) {
				return errStopped
			}
			continue
		}
		var u sdk.MessageStreamEventUnion
		if err := json.Unmarshal(data, &u); err != nil {
			return fmt.Errorf("decoding %s event: %w", ev.Type, err)
		}
		if !s.handle(u) {
			return errStopped
		}
	}
	return events.Err()
}

func (s *streamState) delta(apiIdx int64, d sdk.MessageStreamEventUnionDelta) bool {
	return s.deltaOf(apiIdx, d.Type, d.Text, d.Thinking, d.PartialJSON, d.Signature)
}

func (s *streamState) deltaOf(apiIdx int64, typ, text, thinking, partialJSON, signature string) bool {
	ob := s.open[apiIdx]
	if ob == nil {
		return true
	}
	switch {
	case typ == "text_delta" && ob.kind == blockText:
		return s.yield(s.b.TextDelta(ob.idx, text))
	case typ == "thinking_delta" && ob.kind == blockThinking:
		return s.yield(s.b.ThinkingDelta(ob.idx, thinking))
	case typ == "signature_delta" && ob.kind == blockThinking:
		ob.sig.WriteString(signature)
		s.b.SetThinkingSignature(ob.idx, ob.sig.String())
	case typ == "input_json_delta" && ob.kind == blockToolCall:
		// An empty first piece (the API sends one) is passed on as an
		// empty toolcall_delta, as pi does.
		if ob.startInput {
			ob.startInput = false
			s.b.SetToolCallArguments(ob.idx, nil)
		}
		return s.yield(s.b.ToolCallDelta(ob.idx, partialJSON))
	}
	return true
}

func (s *streamState) stop(apiIdx int64) bool {
	ob := s.open[apiIdx]
	if ob == nil {
		return true
	}
	delete(s.open, apiIdx)
	return s.yield(s.b.End(ob.idx))
}

// stopReason records why the API ended the message.
func (s *streamState) stopReason(r sdk.StopReason, details sdk.RefusalStopDetails) {
	s.b.SetRawStopReason(string(r))
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence, sdk.StopReasonPauseTurn:
		// pause_turn: the caller may resubmit to continue.
		s.b.SetStopReason(llm.StopStop)
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		s.b.SetStopReason(llm.StopLength)
	case sdk.StopReasonToolUse:
		s.b.SetStopReason(llm.StopToolUse)
	case sdk.StopReasonRefusal, "sensitive":
		if details.Explanation != "" {
			s.failure = fmt.Errorf("%w (stop_reason %s): %s", llm.ErrRefused, r, details.Explanation)
		} else {
			s.failure = fmt.Errorf("%w (stop_reason %s)", llm.ErrRefused, r)
		}
	default:
		s.failure = fmt.Errorf("%w: %s", errUnknownStop, r)
	}
}
