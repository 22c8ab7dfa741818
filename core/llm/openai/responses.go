package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/gopi-dev/gopi/core/llm"
)

// Responses is the provider for api "openai-responses".
type Responses struct{}

var _ llm.Provider = (*Responses)(nil)

// NewResponses returns the Responses API provider.
func NewResponses() *Responses { return &Responses{} }

// toolCallProviders are the providers whose Responses tool call ids
// ("call_id|item_id") are kept when replaying another model's calls.
var toolCallProviders = map[string]bool{"openai": true, "openai-codex": true, "opencode": true}

// Responses request wire shapes. Input items are written as any: each is
// one of the item structs below or, for reasoning, the raw item the
// server sent.
type (
	respRequest struct {
		Model                string         `json:"model"`
		Input                []any          `json:"input"`
		Stream               bool           `json:"stream"`
		Store                bool           `json:"store"`
		MaxOutputTokens      int            `json:"max_output_tokens,omitempty"`
		Temperature          *float64       `json:"temperature,omitempty"`
		Tools                []respTool     `json:"tools,omitempty"`
		Reasoning            *respReasoning `json:"reasoning,omitempty"`
		Include              []string       `json:"include,omitempty"`
		PromptCacheKey       string         `json:"prompt_cache_key,omitempty"`
		PromptCacheRetention string         `json:"prompt_cache_retention,omitempty"`
	}
	respReasoning struct {
		Effort  string `json:"effort"`
		Summary string `json:"summary,omitempty"`
	}
	respTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	}
	respRoleMessage struct {
		Role    string `json:"role"`
		Content any    `json:"content"` // string or []respPart
	}
	respPart struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		Detail   string `json:"detail,omitempty"`
		ImageURL string `json:"image_url,omitempty"`
	}
	respOutputMessage struct {
		Type    string           `json:"type"`
		Role    string           `json:"role"`
		Content []respOutputText `json:"content"`
		Status  string           `json:"status"`
		ID      string           `json:"id"`
		Phase   string           `json:"phase,omitempty"`
	}
	respOutputText struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Annotations []any  `json:"annotations"`
	}
	respFunctionCall struct {
		Type      string `json:"type"`
		ID        string `json:"id,omitempty"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	respFunctionOutput struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output any    `json:"output"` // string or []respPart
	}
)

// textSignature is what a text block's TextSignature holds for the
// Responses API: the message item's id and phase (pi's TextSignatureV1).
type textSignature struct {
	V     int    `json:"v"`
	ID    string `json:"id"`
	Phase string `json:"phase,omitempty"`
}

func encodeTextSignature(id, phase string) string {
	b, _ := json.Marshal(textSignature{V: 1, ID: id, Phase: phase})
	return string(b)
}

// parseTextSignature reads a TextSignature, JSON or a bare legacy id.
func parseTextSignature(sig string) (id, phase string) {
	if strings.HasPrefix(sig, "{") {
		var ts textSignature
		if json.Unmarshal([]byte(sig), &ts) == nil && ts.V == 1 && ts.ID != "" {
			if ts.Phase == "commentary" || ts.Phase == "final_answer" {
				return ts.ID, ts.Phase
			}
			return ts.ID, ""
		}
	}
	return sig, ""
}

// respIDPart keeps an id part the API accepts: [A-Za-z0-9_-], at most 64
// characters, no trailing underscores.
func respIDPart(s string) string {
	return strings.TrimRight(truncate(sanitizeID(s), 64), "_")
}

// respToolCallID rewrites another model's tool call id for model.
func respToolCallID(model *llm.Model) idNormalizer {
	return func(id string, src *llm.AssistantMessage) string {
		callID, itemID, ok := strings.Cut(id, "|")
		if !toolCallProviders[model.Provider] || !ok {
			return respIDPart(id)
		}
		if i := strings.IndexByte(itemID, '|'); i >= 0 {
			itemID = itemID[:i]
		}
		if src.Provider != model.Provider || src.API != model.API {
			itemID = truncate("fc_"+shortHash(itemID), 64)
		} else {
			itemID = respIDPart(itemID)
		}
		if !strings.HasPrefix(itemID, "fc_") {
			itemID = respIDPart("fc_" + itemID)
		}
		return respIDPart(callID) + "|" + itemID
	}
}

// buildRespRequest writes the request for model.
func buildRespRequest(model *llm.Model, req *llm.Request) respRequest {
	opts := &req.Options
	r := respRequest{
		Model:  model.ID,
		Input:  respInput(model, req),
		Stream: true,
		Store:  false,
	}
	retention := cacheRetention(opts)
	if retention != "none" {
		r.PromptCacheKey = opts.SessionID
	}
	if retention == "long" {
		r.PromptCacheRetention = "24h"
	}
	r.MaxOutputTokens = maxTokens(model, opts)
	r.Temperature = opts.Temperature
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: toolParameters(t)})
	}
	if model.Reasoning {
		if thinkingOn(opts) {
			r.Reasoning = &respReasoning{Effort: effortFor(model, opts.Thinking, nil), Summary: "auto"}
			r.Include = []string{"reasoning.encrypted_content"}
		} else if off, ok := offEffort(model, "none"); ok && model.Provider != "github-copilot" {
			r.Reasoning = &respReasoning{Effort: off}
		}
	}
	return r
}

// respInput converts the conversation to Responses input items.
func respInput(model *llm.Model, req *llm.Request) []any {
	var out []any
	if req.SystemPrompt != "" {
		role := "system"
		if model.Reasoning {
			role = "developer"
		}
		out = append(out, respRoleMessage{Role: role, Content: req.SystemPrompt})
	}
	msgIndex := 0
	for _, msg := range prepareMessages(req.Messages, model, respToolCallID(model)) {
		switch m := msg.(type) {
		case *llm.UserMessage:
			parts := make([]respPart, 0, len(m.Content))
			for _, block := range m.Content {
				switch b := block.(type) {
				case llm.TextContent:
					parts = append(parts, respPart{Type: "input_text", Text: b.Text})
				case llm.ImageContent:
					parts = append(parts, respPart{Type: "input_image", Detail: "auto", ImageURL: dataURL(b)})
				}
			}
			if len(parts) == 0 {
				continue
			}
			out = append(out, respRoleMessage{Role: "user", Content: parts})
		case *llm.AssistantMessage:
			items := respAssistant(model, m, msgIndex)
			if len(items) == 0 {
				continue
			}
			out = append(out, items...)
		case *llm.ToolResultMessage:
			callID, _, _ := strings.Cut(m.ToolCallID, "|")
			text := m.Content.JoinText("\n")
			var output any = text
			if m.Content.HasImages() && model.SupportsImages() {
				var parts []respPart
				if text != "" {
					parts = append(parts, respPart{Type: "input_text", Text: text})
				}
				for _, block := range m.Content {
					if img, ok := block.(llm.ImageContent); ok {
						parts = append(parts, respPart{Type: "input_image", Detail: "auto", ImageURL: dataURL(img)})
					}
				}
				output = parts
			} else if text == "" {
				output = imageOnlyResult
			}
			out = append(out, respFunctionOutput{Type: "function_call_output", CallID: callID, Output: output})
		}
		msgIndex++
	}
	return out
}

// respAssistant converts one assistant reply to output items: reasoning
// items replayed verbatim from their signatures, text as message items
// with their original ids, tool calls as function_call items.
func respAssistant(model *llm.Model, m *llm.AssistantMessage, msgIndex int) []any {
	var out []any
	otherModel := m.Model != model.ID && m.Provider == model.Provider && m.API == model.API
	for _, block := range m.Content {
		switch b := block.(type) {
		case llm.ThinkingContent:
			if b.ThinkingSignature != "" && json.Valid([]byte(b.ThinkingSignature)) {
				out = append(out, json.RawMessage(b.ThinkingSignature))
			}
		case llm.TextContent:
			id, phase := parseTextSignature(b.TextSignature)
			switch {
			case id == "":
				id = fmt.Sprintf("msg_%d", msgIndex)
			case len(id) > 64:
				id = "msg_" + shortHash(id)
			}
			out = append(out, respOutputMessage{
				Type:    "message",
				Role:    "assistant",
				Content: []respOutputText{{Type: "output_text", Text: b.Text, Annotations: []any{}}},
				Status:  "completed",
				ID:      id,
				Phase:   phase,
			})
		case llm.ToolCall:
			callID, itemID, _ := strings.Cut(b.ID, "|")
			// A function call id is tied to the reasoning item of the model
			// that wrote it; another model's ids would fail that pairing.
			if otherModel && strings.HasPrefix(itemID, "fc_") {
				itemID = ""
			}
			out = append(out, respFunctionCall{Type: "function_call", ID: itemID, CallID: callID, Name: b.Name, Arguments: argumentsJSON(b)})
		}
	}
	return out
}

// Stream implements [llm.Provider]: llm.RunStream keeps the contract,
// respCall holds what is the Responses API's own.
func (p *Responses) Stream(ctx context.Context, model *llm.Model, req *llm.Request) iter.Seq[llm.StreamEvent] {
	return llm.RunStream(ctx, model, req, errNoRespRequest, func(r *llm.StreamRun) llm.StreamCall {
		return &respCall{model: model, req: req, run: r, s: respState{b: r.Builder(), items: map[int64]*respBlock{}}}
	})
}

// respCall is one request to the Responses API.
type respCall struct {
	model *llm.Model
	req   *llm.Request
	run   *llm.StreamRun
	s     respState
}

// Read sends the request and maps its events onto the builder, up to the
// response's completion.
func (c *respCall) Read(ctx context.Context) error {
	body, err := json.Marshal(buildRespRequest(c.model, c.req))
	if err != nil {
		return fmt.Errorf("encoding request: %w", err)
	}
	var headers map[string]string
	if id := c.req.Options.SessionID; id != "" && cacheRetention(&c.req.Options) != "none" {
		headers = map[string]string{"session_id": id, "x-client-request-id": id}
	}
	var resp *http.Response
	svc := responses.NewResponseService(requestOptions(c.model, &c.req.Options, headers, body, &resp)...)
	return readStream(svc.NewStreaming(ctx, responses.ResponseNewParams{}), &resp, func(ev responses.ResponseStreamEventUnion) (bool, error) {
		evs, err := c.s.event(ev)
		if !c.run.EmitAll(evs) || err != nil {
			return false, err
		}
		return !c.s.finished, nil
	})
}

// Finish fails a response that never completed and closes the blocks
// whose item never reported done.
func (c *respCall) Finish() (llm.StopReason, error) {
	if !c.s.finished {
		return "", errRespEndedEarly
	}
	c.run.EmitAll(c.s.closeOpen())
	return "", nil
}

// respBlock is the content block an output item streams into.
type respBlock struct {
	index int
	kind  string // "reasoning", "message", "function_call"
	// streamed is what has been appended to the block so far.
	streamed strings.Builder
	parts    int // reasoning summary parts seen
	open     bool
}

// respState maps Responses stream events onto the builder, one block per
// output item, keyed by output_index.
type respState struct {
	b        *llm.Builder
	items    map[int64]*respBlock
	order    []*respBlock
	finished bool
}

func (s *respState) begin(outputIndex int64, item responses.ResponseOutputItemUnion) (*respBlock, []llm.StreamEvent) {
	if blk, ok := s.items[outputIndex]; ok {
		return blk, nil
	}
	blk := &respBlock{kind: item.Type, open: true}
	var ev llm.StreamEvent
	switch item.Type {
	case "reasoning":
		blk.index, ev = s.b.BeginThinking()
	case "message":
		blk.index, ev = s.b.BeginText()
	case "function_call":
		blk.index, ev = s.b.BeginToolCall(item.CallID+"|"+item.ID, item.Name)
	default:
		return nil, nil // web search, images ...: not content gopi keeps
	}
	s.items[outputIndex] = blk
	s.order = append(s.order, blk)
	evs := []llm.StreamEvent{ev}
	if item.Type == "function_call" && item.Arguments.OfString != "" {
		evs = append(evs, s.delta(blk, item.Arguments.OfString))
	}
	return blk, evs
}

// delta appends text to blk's block.
func (s *respState) delta(blk *respBlock, d string) llm.StreamEvent {
	blk.streamed.WriteString(d)
	switch blk.kind {
	case "reasoning":
		return s.b.ThinkingDelta(blk.index, d)
	case "message":
		return s.b.TextDelta(blk.index, d)
	default:
		return s.b.ToolCallDelta(blk.index, d)
	}
}

// block returns the open block of an event's output item, if it has one
// of the kind wanted.
func (s *respState) block(outputIndex int64, kind string) *respBlock {
	blk, ok := s.items[outputIndex]
	if !ok || !blk.open || blk.kind != kind {
		return nil
	}
	return blk
}

func (s *respState) event(ev responses.ResponseStreamEventUnion) ([]llm.StreamEvent, error) {
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response.ID != "" {
			s.b.SetResponseID(ev.Response.ID)
		}
	case "response.output_item.added":
		_, evs := s.begin(ev.OutputIndex, ev.Item)
		return evs, nil
	case "response.reasoning_summary_part.added":
		if blk := s.block(ev.OutputIndex, "reasoning"); blk != nil {
			blk.parts++
			if blk.parts > 1 && blk.streamed.Len() > 0 {
				return []llm.StreamEvent{s.delta(blk, "\n\n")}, nil
			}
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if blk := s.block(ev.OutputIndex, "reasoning"); blk != nil && ev.Delta != "" {
			return []llm.StreamEvent{s.delta(blk, ev.Delta)}, nil
		}
	case "response.output_text.delta", "response.refusal.delta":
		if blk := s.block(ev.OutputIndex, "message"); blk != nil && ev.Delta != "" {
			return []llm.StreamEvent{s.delta(blk, ev.Delta)}, nil
		}
	case "response.function_call_arguments.delta":
		if blk := s.block(ev.OutputIndex, "function_call"); blk != nil && ev.Delta != "" {
			return []llm.StreamEvent{s.delta(blk, ev.Delta)}, nil
		}
	case "response.function_call_arguments.done":
		if blk := s.block(ev.OutputIndex, "function_call"); blk != nil {
			return s.completeArguments(blk, ev.Arguments), nil
		}
	case "response.output_item.done":
		return s.itemDone(ev.OutputIndex, ev.Item), nil
	case "response.completed", "response.incomplete":
		return nil, s.complete(ev.Response)
	case "response.failed":
		e, details := ev.Response.Error, ev.Response.IncompleteDetails
		switch {
		case e.Message != "" || e.Code != "":
			return nil, &llm.ProviderError{Type: string(e.Code), Message: fmt.Sprintf("%s: %s", orDefault(string(e.Code), "unknown"), orDefault(e.Message, "no message"))}
		case details.Reason != "":
			return nil, fmt.Errorf("%w: %s", errIncomplete, details.Reason)
		default:
			return nil, errNoDetails
		}
	case "error":
		return nil, &llm.ProviderError{Type: ev.Code, Message: fmt.Sprintf("Error Code %s: %s", orDefault(ev.Code, "unknown"), ev.Message)}
	}
	return nil, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// completeArguments brings a tool call up to the final arguments when the
// deltas fell short of them.
func (s *respState) completeArguments(blk *respBlock, args string) []llm.StreamEvent {
	have := blk.streamed.String()
	if args == "" || args == have {
		return nil
	}
	if rest, ok := strings.CutPrefix(args, have); ok {
		return []llm.StreamEvent{s.delta(blk, rest)}
	}
	if json.Valid([]byte(args)) {
		s.b.SetToolCallArguments(blk.index, json.RawMessage(args))
		blk.streamed.Reset()
		blk.streamed.WriteString(args)
	}
	return nil
}

// itemDone closes an output item's block with the item's final state.
func (s *respState) itemDone(outputIndex int64, item responses.ResponseOutputItemUnion) []llm.StreamEvent {
	blk, evs := s.begin(outputIndex, item)
	if blk == nil || !blk.open {
		return evs
	}
	blk.open = false
	switch blk.kind {
	case "reasoning":
		if blk.streamed.Len() == 0 {
			var parts []string
			for _, p := range item.Summary {
				parts = append(parts, p.Text)
			}
			text := strings.Join(parts, "\n\n")
			if text == "" {
				for _, c := range item.Content {
					parts = append(parts, c.Text)
				}
				text = strings.Join(parts, "\n\n")
			}
			if text != "" {
				evs = append(evs, s.delta(blk, text))
			}
		}
		s.b.SetThinkingSignature(blk.index, item.RawJSON())
		evs = append(evs, s.b.EndThinking(blk.index))
	case "message":
		if blk.streamed.Len() == 0 {
			var text strings.Builder
			for _, c := range item.Content {
				if c.Type == "refusal" {
					text.WriteString(c.Refusal)
				} else {
					text.WriteString(c.Text)
				}
			}
			if text.Len() > 0 {
				evs = append(evs, s.delta(blk, text.String()))
			}
		}
		s.b.SetTextSignature(blk.index, encodeTextSignature(item.ID, string(item.Phase)))
		evs = append(evs, s.b.EndText(blk.index))
	case "function_call":
		evs = append(evs, s.completeArguments(blk, item.Arguments.OfString)...)
		evs = append(evs, s.b.EndToolCall(blk.index))
	}
	return evs
}

// complete records the final response: id, usage and why it stopped.
func (s *respState) complete(r responses.Response) error {
	s.finished = true
	if r.ID != "" {
		s.b.SetResponseID(r.ID)
	}
	if r.JSON.Usage.Valid() {
		cached := int(r.Usage.InputTokensDetails.CachedTokens)
		u := s.b.Usage()
		u.Input = max(0, int(r.Usage.InputTokens)-cached)
		u.Output = int(r.Usage.OutputTokens)
		u.CacheRead = cached
		u.CacheWrite = 0
		s.b.FinishUsage()
	}
	s.b.SetRawStopReason(string(r.Status))
	switch r.Status {
	case "incomplete":
		s.b.SetStopReason(llm.StopLength)
	case "failed":
		return errRespFailed
	case "cancelled":
		return errRespCancelled
	default:
		s.b.SetStopReason(llm.StopStop)
	}
	return nil
}

// closeOpen ends blocks whose item never reported done.
func (s *respState) closeOpen() []llm.StreamEvent {
	var evs []llm.StreamEvent
	for _, blk := range s.order {
		if !blk.open {
			continue
		}
		blk.open = false
		evs = append(evs, s.b.End(blk.index))
	}
	return evs
}
