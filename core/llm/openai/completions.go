package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/gopi-dev/gopi/core/llm"
)

// Completions is the provider for api "openai-completions": OpenAI Chat
// Completions and the servers that speak it.
type Completions struct{}

var _ llm.Provider = (*Completions)(nil)

// NewCompletions returns the Chat Completions provider.
func NewCompletions() *Completions { return &Completions{} }

// Chat Completions request wire shapes.
type (
	chatRequest struct {
		Model                string             `json:"model"`
		Messages             []chatMessage      `json:"messages"`
		Stream               bool               `json:"stream"`
		StreamOptions        *chatStreamOptions `json:"stream_options,omitempty"`
		Store                *bool              `json:"store,omitempty"`
		MaxCompletionTokens  int                `json:"max_completion_tokens,omitempty"`
		MaxTokens            int                `json:"max_tokens,omitempty"`
		Temperature          *float64           `json:"temperature,omitempty"`
		Tools                *[]chatTool        `json:"tools,omitempty"`
		ReasoningEffort      string             `json:"reasoning_effort,omitempty"`
		Reasoning            *chatReasoning     `json:"reasoning,omitempty"`
		Thinking             *chatThinking      `json:"thinking,omitempty"`
		EnableThinking       *bool              `json:"enable_thinking,omitempty"`
		ChatTemplateKwargs   map[string]any     `json:"chat_template_kwargs,omitempty"`
		PromptCacheKey       string             `json:"prompt_cache_key,omitempty"`
		PromptCacheRetention string             `json:"prompt_cache_retention,omitempty"`
	}
	chatStreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	chatReasoning struct {
		Effort string `json:"effort"`
	}
	chatThinking struct {
		Type string `json:"type"`
	}
	chatMessage struct {
		Role string `json:"role"`
		// Content is a string, a []chatPart, or nil (null).
		Content    any            `json:"content"`
		Name       string         `json:"name,omitempty"`
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
		// Reasoning replayed to servers that want it back, under the
		// field name the server used (the thinking block's signature).
		ReasoningContent *string           `json:"reasoning_content,omitempty"`
		ReasoningField   *string           `json:"reasoning,omitempty"`
		ReasoningText    *string           `json:"reasoning_text,omitempty"`
		ReasoningDetails []json.RawMessage `json:"reasoning_details,omitempty"`
	}
	chatPart struct {
		Type     string        `json:"type"`
		Text     string        `json:"text,omitempty"`
		ImageURL *chatImageURL `json:"image_url,omitempty"`
	}
	chatImageURL struct {
		URL string `json:"url"`
	}
	chatToolCall struct {
		ID       string           `json:"id"`
		Type     string           `json:"type"`
		Function chatFunctionCall `json:"function"`
	}
	chatFunctionCall struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	chatTool struct {
		Type     string          `json:"type"`
		Function chatFunctionDef `json:"function"`
	}
	chatFunctionDef struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict,omitempty"`
	}
)

// reasoningFields are the delta fields servers stream reasoning in, in the
// order they are looked at (the first non-empty one wins, as some servers
// send the same text twice).
var reasoningFields = []string{"reasoning_content", "reasoning", "reasoning_text"}

// buildChatRequest writes the request for model.
func buildChatRequest(model *llm.Model, req *llm.Request, c chatCompat) chatRequest {
	opts := &req.Options
	r := chatRequest{
		Model:    model.ID,
		Messages: chatMessages(model, req, c),
		Stream:   true,
	}
	retention := cacheRetention(opts)
	if opts.SessionID != "" && (strings.Contains(model.BaseURL, "api.openai.com") && retention != "none" ||
		retention == "long" && c.supportsLongCacheRetention) {
		r.PromptCacheKey = opts.SessionID
	}
	if retention == "long" && c.supportsLongCacheRetention {
		r.PromptCacheRetention = "24h"
	}
	if c.supportsUsageInStreaming {
		r.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	if c.supportsStore {
		r.Store = new(false)
	}
	if n := maxTokens(model, opts); n > 0 {
		if c.maxTokensField == fieldMaxTokens {
			r.MaxTokens = n
		} else {
			r.MaxCompletionTokens = n
		}
	}
	r.Temperature = opts.Temperature
	if len(req.Tools) > 0 {
		tools := make([]chatTool, 0, len(req.Tools))
		for _, t := range req.Tools {
			def := chatFunctionDef{Name: t.Name, Description: t.Description, Parameters: toolParameters(t)}
			if c.supportsStrictMode {
				def.Strict = new(false)
			}
			tools = append(tools, chatTool{Type: "function", Function: def})
		}
		r.Tools = &tools
	} else if hasToolHistory(req.Messages) {
		// Proxies in front of Anthropic reject tool history without tools.
		r.Tools = &[]chatTool{}
	}

	if model.Reasoning {
		on := thinkingOn(opts)
		effort := ""
		if on {
			effort = effortFor(model, opts.Thinking, c.reasoningEffortMap)
		}
		switch c.thinkingFormat {
		case ThinkingZAI, ThinkingQwen:
			r.EnableThinking = new(on)
		case ThinkingQwenChatTemplate:
			r.ChatTemplateKwargs = map[string]any{"enable_thinking": on, "preserve_thinking": true}
		case ThinkingDeepSeek:
			r.Thinking = &chatThinking{Type: map[bool]string{true: "enabled", false: "disabled"}[on]}
			r.ReasoningEffort = effort
		case ThinkingOpenRouter:
			if on {
				r.Reasoning = &chatReasoning{Effort: effort}
			} else if off, ok := offEffort(model, "none"); ok {
				r.Reasoning = &chatReasoning{Effort: off}
			}
		default:
			if c.supportsReasoningEffort {
				if on {
					r.ReasoningEffort = effort
				} else if off, ok := offEffort(model, ""); ok {
					r.ReasoningEffort = off
				}
			}
		}
	}
	return r
}

func hasToolHistory(msgs []llm.Message) bool {
	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.ToolResultMessage:
			return true
		case *llm.AssistantMessage:
			if len(m.Content.ToolCalls()) > 0 {
				return true
			}
		}
	}
	return false
}

// chatToolCallID shortens ids written by other APIs (Responses ids are
// "call|item" and can run to hundreds of characters) to what Chat
// Completions accepts.
func chatToolCallID(model *llm.Model) idNormalizer {
	return func(id string, _ *llm.AssistantMessage) string {
		if callID, _, ok := strings.Cut(id, "|"); ok {
			return truncate(sanitizeID(callID), 40)
		}
		if model.Provider == "openai" {
			return truncate(id, 40)
		}
		return id
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// chatMessages converts the conversation to Chat Completions messages.
func chatMessages(model *llm.Model, req *llm.Request, c chatCompat) []chatMessage {
	var out []chatMessage
	if req.SystemPrompt != "" {
		role := "system"
		if model.Reasoning && c.supportsDeveloperRole {
			role = "developer"
		}
		out = append(out, chatMessage{Role: role, Content: req.SystemPrompt})
	}
	msgs := prepareMessages(req.Messages, model, chatToolCallID(model))
	lastWasToolResult := false
	for i := 0; i < len(msgs); i++ {
		switch m := msgs[i].(type) {
		case *llm.UserMessage:
			if c.requiresAssistantAfterToolResult && lastWasToolResult {
				out = append(out, chatMessage{Role: "assistant", Content: bridgeAfterResults})
			}
			parts := make([]chatPart, 0, len(m.Content))
			for _, block := range m.Content {
				switch b := block.(type) {
				case llm.TextContent:
					parts = append(parts, chatPart{Type: "text", Text: b.Text})
				case llm.ImageContent:
					parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: dataURL(b)}})
				}
			}
			if len(parts) == 0 {
				continue
			}
			out = append(out, chatMessage{Role: "user", Content: parts})
			lastWasToolResult = false
		case *llm.AssistantMessage:
			if msg, ok := chatAssistant(model, m, c); ok {
				out = append(out, msg)
				lastWasToolResult = false
			}
		case *llm.ToolResultMessage:
			// A run of tool results; their images follow in one user
			// message, as the tool role carries text only.
			var images []chatPart
			for ; i < len(msgs); i++ {
				tr, ok := msgs[i].(*llm.ToolResultMessage)
				if !ok {
					break
				}
				text := tr.Content.JoinText("\n")
				if text == "" {
					text = imageOnlyResult
				}
				msg := chatMessage{Role: "tool", Content: text, ToolCallID: tr.ToolCallID}
				if c.requiresToolResultName {
					msg.Name = tr.ToolName
				}
				out = append(out, msg)
				if model.SupportsImages() {
					for _, block := range tr.Content {
						if img, ok := block.(llm.ImageContent); ok {
							images = append(images, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: dataURL(img)}})
						}
					}
				}
			}
			i--
			lastWasToolResult = true
			if len(images) > 0 {
				if c.requiresAssistantAfterToolResult {
					out = append(out, chatMessage{Role: "assistant", Content: bridgeAfterResults})
				}
				parts := append([]chatPart{{Type: "text", Text: toolImagesFollow}}, images...)
				out = append(out, chatMessage{Role: "user", Content: parts})
				lastWasToolResult = false
			}
		}
	}
	return out
}

// chatAssistant converts one assistant reply; ok is false when nothing is
// left to send (servers reject an assistant message with neither content
// nor tool calls).
func chatAssistant(model *llm.Model, m *llm.AssistantMessage, c chatCompat) (chatMessage, bool) {
	msg := chatMessage{Role: "assistant"}
	if c.requiresAssistantAfterToolResult {
		msg.Content = ""
	}
	var texts, thinking []string
	signature := ""
	for _, block := range m.Content {
		switch b := block.(type) {
		case llm.TextContent:
			if strings.TrimSpace(b.Text) != "" {
				texts = append(texts, b.Text)
			}
		case llm.ThinkingContent:
			if strings.TrimSpace(b.Thinking) != "" {
				if len(thinking) == 0 {
					signature = b.ThinkingSignature
				}
				thinking = append(thinking, b.Thinking)
			}
		}
	}
	text := strings.Join(texts, "")
	switch {
	case len(thinking) > 0 && c.requiresThinkingAsText:
		parts := []chatPart{{Type: "text", Text: strings.Join(thinking, "\n\n")}}
		for _, t := range texts {
			parts = append(parts, chatPart{Type: "text", Text: t})
		}
		msg.Content = parts
	default:
		if text != "" {
			msg.Content = text
		}
		if len(thinking) > 0 {
			joined := strings.Join(thinking, "\n")
			switch signature {
			case "reasoning_content":
				msg.ReasoningContent = &joined
			case "reasoning":
				msg.ReasoningField = &joined
			case "reasoning_text":
				msg.ReasoningText = &joined
			}
		}
	}
	for _, tc := range m.Content.ToolCalls() {
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{
			ID:       tc.ID,
			Type:     "function",
			Function: chatFunctionCall{Name: tc.Name, Arguments: argumentsJSON(tc)},
		})
		if tc.ThoughtSignature != "" && json.Valid([]byte(tc.ThoughtSignature)) {
			msg.ReasoningDetails = append(msg.ReasoningDetails, json.RawMessage(tc.ThoughtSignature))
		}
	}
	if c.requiresReasoningContent && model.Reasoning && msg.ReasoningContent == nil {
		msg.ReasoningContent = new("")
	}
	hasContent := false
	switch v := msg.Content.(type) {
	case string:
		hasContent = v != ""
	case []chatPart:
		hasContent = len(v) > 0
	}
	if !hasContent && len(msg.ToolCalls) == 0 {
		return msg, false
	}
	return msg, true
}

// Stream implements [llm.Provider]: llm.RunStream keeps the contract,
// chatCall holds what is Chat Completions' own.
func (p *Completions) Stream(ctx context.Context, model *llm.Model, req *llm.Request) iter.Seq[llm.StreamEvent] {
	return llm.RunStream(ctx, model, req, errNoChatRequest, func(r *llm.StreamRun) llm.StreamCall {
		return &chatCall{model: model, req: req, run: r,
			s: chatState{b: r.Builder(), openRouter: llm.IsOpenRouter(model), text: -1, thinking: -1, byIndex: map[int64]int{}, byID: map[string]int{}}}
	})
}

// chatCall is one request to a Chat Completions server.
type chatCall struct {
	model *llm.Model
	req   *llm.Request
	run   *llm.StreamRun
	s     chatState
}

// Read sends the request and maps its chunks onto the builder.
func (c *chatCall) Read(ctx context.Context) error {
	compat := resolveCompat(c.model)
	body, err := json.Marshal(buildChatRequest(c.model, c.req, compat))
	if err != nil {
		return fmt.Errorf("encoding request: %w", err)
	}
	var headers map[string]string
	if id := c.req.Options.SessionID; id != "" && compat.sendSessionAffinityHeaders && cacheRetention(&c.req.Options) != "none" {
		headers = map[string]string{"session_id": id, "x-client-request-id": id, "x-session-affinity": id}
	}
	resp, err := post(ctx, c.model, &c.req.Options, "chat/completions", headers, body)
	if err != nil {
		return httpError(nil, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		return httpError(resp, nil)
	}
	// The SDK's SSE reader (ssestream) decodes the events; an error event
	// in the stream ends it with an *ssestream.StreamError.
	return readStream(ssestream.NewStream[chatChunk](ssestream.NewDecoder(resp), nil), &resp, func(ch chatChunk) (bool, error) {
		return c.run.EmitAll(c.s.chunk(ch)), nil
	})
}

// Finish fails a reply without a usable finish_reason and closes every
// block, as pi does when the stream ends.
func (c *chatCall) Finish() (llm.StopReason, error) {
	switch {
	case c.s.failure != nil:
		return "", c.s.failure
	case !c.s.finished:
		return "", errChatEndedEarly
	}
	c.run.EmitAll(c.s.closeBlocks())
	return "", nil
}

// chatState maps chat.completion.chunk deltas onto the builder. Like pi it
// keeps one text and one thinking block for the whole reply and closes
// every block when the stream ends.
type chatState struct {
	b              *llm.Builder
	openRouter     bool // usage may say what OpenRouter billed
	text, thinking int
	byIndex        map[int64]int  // tool_calls[].index -> content index
	byID           map[string]int // tool call id -> content index
	order          []int          // open blocks, in content order
	gotID          bool
	finished       bool
	failure        error
}

func (s *chatState) chunk(ch chatChunk) []llm.StreamEvent {
	var evs []llm.StreamEvent
	if ch.ID != "" && !s.gotID {
		s.b.SetResponseID(ch.ID)
		s.gotID = true
	}
	if ch.Usage != "" {
		s.usage(ch.Usage)
	}
	if len(ch.Choices) == 0 {
		return nil
	}
	choice := ch.Choices[0]
	if ch.Usage == "" && choice.Usage != "" {
		// Some servers (Moonshot) put usage on the choice.
		s.usage(choice.Usage)
	}
	if choice.FinishReason != "" {
		s.finish(choice.FinishReason)
	}
	d := choice.Delta
	if d.Content != "" {
		if s.text < 0 {
			var ev llm.StreamEvent
			s.text, ev = s.b.BeginText()
			s.order = append(s.order, s.text)
			evs = append(evs, ev)
		}
		evs = append(evs, s.b.TextDelta(s.text, d.Content))
	}
	for _, field := range reasoningFields {
		raw, ok := d.field(field)
		if !ok {
			continue
		}
		var delta string
		if json.Unmarshal([]byte(raw), &delta) != nil || delta == "" {
			continue
		}
		if s.thinking < 0 {
			var ev llm.StreamEvent
			s.thinking, ev = s.b.BeginThinking()
			s.b.SetThinkingSignature(s.thinking, field)
			s.order = append(s.order, s.thinking)
			evs = append(evs, ev)
		}
		evs = append(evs, s.b.ThinkingDelta(s.thinking, delta))
		break
	}
	for _, tc := range d.ToolCalls {
		i, ok := -1, false
		if tc.HasIndex {
			i, ok = s.byIndex[tc.Index]
		}
		if !ok && tc.ID != "" {
			i, ok = s.byID[tc.ID]
		}
		if !ok {
			var ev llm.StreamEvent
			i, ev = s.b.BeginToolCall(tc.ID, tc.Name)
			s.order = append(s.order, i)
			evs = append(evs, ev)
		}
		if tc.HasIndex {
			s.byIndex[tc.Index] = i
		}
		if tc.ID != "" {
			s.byID[tc.ID] = i
		}
		evs = append(evs, s.b.ToolCallDelta(i, tc.Arguments))
	}
	if raw, ok := d.field("reasoning_details"); ok {
		s.reasoningDetails(raw)
	}
	return evs
}

// reasoningDetails attaches OpenRouter's encrypted reasoning to the tool
// call it belongs to, so it can be sent back.
func (s *chatState) reasoningDetails(raw string) {
	var details []json.RawMessage
	if json.Unmarshal([]byte(raw), &details) != nil {
		return
	}
	for _, d := range details {
		var head struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Data string `json:"data"`
		}
		if json.Unmarshal(d, &head) != nil || head.Type != "reasoning.encrypted" || head.ID == "" || head.Data == "" {
			continue
		}
		if i, ok := s.byID[head.ID]; ok {
			s.b.SetThoughtSignature(i, string(d))
		}
	}
}

// usage reads a Chat Completions usage object. prompt_tokens includes
// cached tokens; some servers also count this request's cache writes in
// cached_tokens.
func (s *chatState) usage(raw string) {
	var u struct {
		PromptTokens         int  `json:"prompt_tokens"`
		CompletionTokens     int  `json:"completion_tokens"`
		PromptCacheHitTokens *int `json:"prompt_cache_hit_tokens"`
		PromptTokensDetails  *struct {
			CachedTokens     *int `json:"cached_tokens"`
			CacheWriteTokens int  `json:"cache_write_tokens"`
		} `json:"prompt_tokens_details"`
	}
	if json.Unmarshal([]byte(raw), &u) != nil {
		return
	}
	cached, written := 0, 0
	if d := u.PromptTokensDetails; d != nil {
		written = d.CacheWriteTokens
		if d.CachedTokens != nil {
			cached = *d.CachedTokens
		} else if u.PromptCacheHitTokens != nil {
			cached = *u.PromptCacheHitTokens
		}
	} else if u.PromptCacheHitTokens != nil {
		cached = *u.PromptCacheHitTokens
	}
	if written > 0 {
		cached = max(0, cached-written)
	}
	us := s.b.Usage()
	us.Input = max(0, u.PromptTokens-cached-written)
	us.Output = u.CompletionTokens
	us.CacheRead = cached
	us.CacheWrite = written
	if s.openRouter {
		if billed, ok := llm.OpenRouterBilled([]byte(raw)); ok {
			s.b.SetBilledCost(billed)
		}
	}
	s.b.FinishUsage()
}

// finish records a finish_reason.
func (s *chatState) finish(reason string) {
	s.finished = true
	s.b.SetRawStopReason(reason)
	switch reason {
	case "stop", "end":
		s.b.SetStopReason(llm.StopStop)
	case "length":
		s.b.SetStopReason(llm.StopLength)
	case "tool_calls", "function_call":
		s.b.SetStopReason(llm.StopToolUse)
	default:
		s.failure = fmt.Errorf("%w: %s", errFinishReason, reason)
	}
}

// closeBlocks ends every open block in content order.
func (s *chatState) closeBlocks() []llm.StreamEvent {
	evs := make([]llm.StreamEvent, 0, len(s.order))
	for _, i := range s.order {
		evs = append(evs, s.b.End(i))
	}
	s.order = nil
	return evs
}
