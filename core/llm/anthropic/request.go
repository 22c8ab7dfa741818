package anthropic

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/gopi-dev/gopi/core/llm"
)

// Beta features named in the anthropic-beta header.
const (
	betaFineGrainedToolStreaming = "fine-grained-tool-streaming-2025-05-14"
	betaInterleavedThinking      = "interleaved-thinking-2025-05-14"
)

// defaultBudgets are the thinking budgets, in tokens, of budget-based
// models; Options.ThinkingBudgets overrides them per level.
var defaultBudgets = map[llm.ThinkingLevel]int{
	llm.ThinkingMinimal: 1024,
	llm.ThinkingLow:     2048,
	llm.ThinkingMedium:  8192,
	llm.ThinkingHigh:    16384,
	llm.ThinkingXHigh:   32768,
}

const (
	// defaultMaxTokens caps a reply when neither the call nor the model
	// says otherwise.
	defaultMaxTokens = 32000
	// minOutputTokens is what a reply keeps for its answer when the
	// thinking budget has to shrink to fit max_tokens.
	minOutputTokens = 1024
)

// compat holds the "compat" switches of an anthropic-messages model,
// defaulted.
type compat struct {
	eagerToolInputStreaming bool
	longCacheRetention      bool
}

func modelCompat(m *llm.Model) compat {
	var raw struct {
		SupportsEagerToolInputStreaming *bool `json:"supportsEagerToolInputStreaming"`
		SupportsLongCacheRetention      *bool `json:"supportsLongCacheRetention"`
	}
	if len(m.Compat) > 0 {
		_ = json.Unmarshal(m.Compat, &raw)
	}
	c := compat{eagerToolInputStreaming: true, longCacheRetention: true}
	if raw.SupportsEagerToolInputStreaming != nil {
		c.eagerToolInputStreaming = *raw.SupportsEagerToolInputStreaming
	}
	if raw.SupportsLongCacheRetention != nil {
		c.longCacheRetention = *raw.SupportsLongCacheRetention
	}
	return c
}

// buildParams converts a request into the SDK's parameters and the beta
// features the call needs.
func buildParams(model *llm.Model, req *llm.Request) (sdk.MessageNewParams, []string) {
	opts := &req.Options
	c := modelCompat(model)
	cache, caching := cacheControl(opts.CacheRetention, c)

	params := sdk.MessageNewParams{
		Model:    sdk.Model(model.ID),
		Messages: convertMessages(model, req.Messages),
	}
	if caching {
		markLastUserBlock(params.Messages, cache)
	}
	if req.SystemPrompt != "" {
		sys := sdk.TextBlockParam{Text: req.SystemPrompt}
		if caching {
			sys.CacheControl = cache
		}
		params.System = []sdk.TextBlockParam{sys}
	}
	if len(req.Tools) > 0 {
		params.Tools = convertTools(req.Tools, c.eagerToolInputStreaming, cache, caching)
	}

	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
		if model.MaxTokens > 0 {
			maxTokens = min(model.MaxTokens, defaultMaxTokens)
		}
	}
	thinking := model.Reasoning && opts.Thinking != "" && opts.Thinking != llm.ThinkingOff
	switch {
	case !model.Reasoning:
	case !thinking:
		params.Thinking = sdk.ThinkingConfigParamUnion{OfDisabled: &sdk.ThinkingConfigDisabledParam{}}
	case adaptiveThinking(model.ID):
		params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{
			Display: sdk.ThinkingConfigAdaptiveDisplaySummarized,
		}}
		params.OutputConfig = sdk.OutputConfigParam{Effort: effort(model, opts.Thinking)}
	default:
		var budget int
		maxTokens, budget = fitBudget(maxTokens, model.MaxTokens, thinkingBudget(opts.Thinking, opts.ThinkingBudgets))
		params.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{
			BudgetTokens: int64(budget),
			Display:      sdk.ThinkingConfigEnabledDisplaySummarized,
		}}
	}
	params.MaxTokens = int64(maxTokens)
	// Sampling temperature and extended thinking are mutually exclusive.
	if opts.Temperature != nil && !thinking {
		params.Temperature = param.NewOpt(*opts.Temperature)
	}

	var betas []string
	if len(req.Tools) > 0 && !c.eagerToolInputStreaming {
		betas = append(betas, betaFineGrainedToolStreaming)
	}
	// Adaptive models interleave thinking and tool calls natively.
	if !adaptiveThinking(model.ID) {
		betas = append(betas, betaInterleavedThinking)
	}
	return params, betas
}

// cacheControl resolves the call's cache retention: "none" disables prompt
// caching, "long" asks for the one-hour TTL where the model allows it.
// Unset falls back to PI_CACHE_RETENTION, as pi does, then to "short".
func cacheControl(retention string, c compat) (sdk.CacheControlEphemeralParam, bool) {
	if retention == "" {
		retention = "short"
		if os.Getenv("PI_CACHE_RETENTION") == "long" {
			retention = "long"
		}
	}
	if retention == "none" {
		return sdk.CacheControlEphemeralParam{}, false
	}
	cc := sdk.NewCacheControlEphemeralParam()
	if retention == "long" && c.longCacheRetention {
		cc.TTL = sdk.CacheControlEphemeralTTLTTL1h
	}
	return cc, true
}

// adaptiveThinking reports whether the model decides its own thinking
// depth (Opus 4.6+, Sonnet 4.6): those take an effort, not a budget.
func adaptiveThinking(id string) bool {
	for _, s := range []string{"opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6"} {
		if strings.Contains(id, s) {
			return true
		}
	}
	return false
}

// effort maps a thinking level onto an adaptive model's effort; the model's
// ThinkingLevelMap wins (it is how "xhigh" or "max" are reached).
func effort(model *llm.Model, level llm.ThinkingLevel) sdk.OutputConfigEffort {
	if v := model.ThinkingLevelMap[level]; v != nil && *v != "" {
		return sdk.OutputConfigEffort(*v)
	}
	switch level {
	case llm.ThinkingMinimal, llm.ThinkingLow:
		return sdk.OutputConfigEffortLow
	case llm.ThinkingMedium:
		return sdk.OutputConfigEffortMedium
	}
	return sdk.OutputConfigEffortHigh
}

func thinkingBudget(level llm.ThinkingLevel, overrides map[llm.ThinkingLevel]int) int {
	if b, ok := overrides[level]; ok && b > 0 {
		return b
	}
	if b, ok := defaultBudgets[level]; ok {
		return b
	}
	return defaultBudgets[llm.ThinkingMedium]
}

// fitBudget makes room for the thinking budget: max_tokens grows by the
// budget, capped at the model's limit, and a budget that no longer fits
// below max_tokens shrinks to leave minOutputTokens for the answer.
func fitBudget(base, modelMax, budget int) (maxTokens, outBudget int) {
	maxTokens = base + budget
	if modelMax > 0 {
		maxTokens = min(maxTokens, modelMax)
	}
	if maxTokens <= budget {
		budget = max(0, maxTokens-minOutputTokens)
	}
	if budget == 0 {
		// The API's minimum; a model this small fails loudly instead.
		budget = minOutputTokens
	}
	return maxTokens, budget
}

// convertTools turns tool specs into the API's tool list; the last tool
// carries the cache breakpoint that covers them all.
func convertTools(tools []llm.ToolSpec, eager bool, cache sdk.CacheControlEphemeralParam, caching bool) []sdk.ToolUnionParam {
	out := make([]sdk.ToolUnionParam, 0, len(tools))
	for i, t := range tools {
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Parameters)}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		if eager {
			tp.EagerInputStreaming = param.NewOpt(true)
		}
		if caching && i == len(tools)-1 {
			tp.CacheControl = cache
		}
		out = append(out, sdk.ToolUnionParam{OfTool: tp})
	}
	return out
}

// inputSchema splits a JSON Schema object into the SDK's fields; keywords
// other than type, properties and required travel as extra fields.
func inputSchema(raw json.RawMessage) sdk.ToolInputSchemaParam {
	s := sdk.ToolInputSchemaParam{Properties: map[string]any{}}
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return s
	}
	for k, v := range m {
		switch k {
		case "type":
		case "properties":
			var props map[string]json.RawMessage
			if json.Unmarshal(v, &props) == nil && props != nil {
				s.Properties = props
			}
		case "required":
			_ = json.Unmarshal(v, &s.Required)
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s
}

// Placeholders for images a text-only model cannot take, and for a tool
// call whose result never made it into the conversation.
const (
	userImageOmitted = "(image omitted: model does not support images)"
	toolImageOmitted = "(tool image omitted: model does not support images)"
	imageOnlyNote    = "(see attached image)"
	noToolResult     = "No result provided"
)

var invalidToolIDChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]`) })

// toolCallID makes another API's tool call id acceptable to Anthropic
// (^[a-zA-Z0-9_-]+$, at most 64 characters). Valid ids pass unchanged, so
// a call and its result always map to the same id.
func toolCallID(id string) string {
	id = invalidToolIDChars().ReplaceAllString(id, "_")
	if len(id) > 64 {
		id = id[:64]
	}
	return id
}

// convertMessages turns the conversation into API messages. Failed or
// aborted replies are left out, thinking from another model becomes text,
// tool calls left without a result get an error result so the API accepts
// the history, and consecutive tool results share one user message.
func convertMessages(model *llm.Model, msgs []llm.Message) []sdk.MessageParam {
	images := model.SupportsImages()
	var out []sdk.MessageParam
	var pending []llm.ToolCall // tool calls of the last reply still owed a result
	answered := map[string]bool{}
	// toolResults collects the tool_result blocks of the user message being
	// built; it is flushed when anything else comes along.
	var toolResults []sdk.ContentBlockParamUnion
	flushResults := func() {
		if len(toolResults) > 0 {
			out = append(out, sdk.NewUserMessage(toolResults...))
			toolResults = nil
		}
	}
	settle := func() {
		for _, tc := range pending {
			if !answered[tc.ID] {
				toolResults = append(toolResults, toolResultBlock(tc.ID, llm.Contents{llm.TextContent{Text: noToolResult}}, true, images))
			}
		}
		pending, answered = nil, map[string]bool{}
		flushResults()
	}

	for _, m := range msgs {
		switch m := m.(type) {
		case *llm.UserMessage:
			settle()
			if blocks := userBlocks(m.Content, images); len(blocks) > 0 {
				out = append(out, sdk.NewUserMessage(blocks...))
			}
		case *llm.AssistantMessage:
			settle()
			if m.StopReason == llm.StopError || m.StopReason == llm.StopAborted {
				continue
			}
			pending = m.Content.ToolCalls()
			if blocks := assistantBlocks(model, m); len(blocks) > 0 {
				out = append(out, sdk.NewAssistantMessage(blocks...))
			}
		case *llm.ToolResultMessage:
			answered[m.ToolCallID] = true
			toolResults = append(toolResults, toolResultBlock(m.ToolCallID, m.Content, m.IsError, images))
		}
	}
	settle()
	return out
}

func userBlocks(content llm.Contents, images bool) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	lastOmitted := false
	for _, c := range content {
		switch c := c.(type) {
		case llm.TextContent:
			if strings.TrimSpace(c.Text) != "" {
				out = append(out, sdk.NewTextBlock(c.Text))
			}
			lastOmitted = false
		case llm.ImageContent:
			if images {
				out = append(out, sdk.NewImageBlockBase64(c.MimeType, c.Data))
			} else if !lastOmitted {
				out = append(out, sdk.NewTextBlock(userImageOmitted))
				lastOmitted = true
			}
		}
	}
	return out
}

func assistantBlocks(model *llm.Model, m *llm.AssistantMessage) []sdk.ContentBlockParamUnion {
	sameModel := m.Provider == model.Provider && m.API == model.API && m.Model == model.ID
	var out []sdk.ContentBlockParamUnion
	for _, c := range m.Content {
		switch c := c.(type) {
		case llm.TextContent:
			if strings.TrimSpace(c.Text) != "" {
				out = append(out, sdk.NewTextBlock(c.Text))
			}
		case llm.ThinkingContent:
			switch {
			case c.Redacted:
				// Opaque and bound to the model that wrote it.
				if sameModel && c.ThinkingSignature != "" {
					out = append(out, sdk.NewRedactedThinkingBlock(c.ThinkingSignature))
				}
			case strings.TrimSpace(c.Thinking) == "":
			case sameModel && c.ThinkingSignature != "":
				out = append(out, sdk.NewThinkingBlock(c.ThinkingSignature, c.Thinking))
			default:
				// Unsigned or foreign thinking cannot be replayed as
				// thinking; plain text keeps its content without tags the
				// model might imitate.
				out = append(out, sdk.NewTextBlock(c.Thinking))
			}
		case llm.ToolCall:
			args := c.Arguments
			if len(args) == 0 || !json.Valid(args) {
				args = json.RawMessage("{}")
			}
			out = append(out, sdk.NewToolUseBlock(toolCallID(c.ID), args, c.Name))
		}
	}
	return out
}

// toolResultBlock renders one tool result. Text-only output is one text
// block (none when empty: the API rejects empty text blocks); images get a
// note when the result has no text of its own.
func toolResultBlock(id string, content llm.Contents, isError, images bool) sdk.ContentBlockParamUnion {
	tr := &sdk.ToolResultBlockParam{ToolUseID: toolCallID(id)}
	if isError {
		tr.IsError = param.NewOpt(true)
	}
	if !content.HasImages() {
		if text := content.JoinText("\n"); text != "" {
			tr.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: text}}}
		}
		return sdk.ContentBlockParamUnion{OfToolResult: tr}
	}
	hasText := false
	lastOmitted := false
	for _, c := range content {
		switch c := c.(type) {
		case llm.TextContent:
			if c.Text == "" {
				continue
			}
			hasText = true
			lastOmitted = false
			tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
		case llm.ImageContent:
			if !images {
				if !lastOmitted {
					hasText = true
					tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: toolImageOmitted}})
				}
				lastOmitted = true
				continue
			}
			tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: &sdk.ImageBlockParam{
				Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
					Data:      c.Data,
					MediaType: sdk.Base64ImageSourceMediaType(c.MimeType),
				}},
			}})
		}
	}
	if !hasText {
		note := sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: imageOnlyNote}}
		tr.Content = append([]sdk.ToolResultBlockParamContentUnion{note}, tr.Content...)
	}
	return sdk.ContentBlockParamUnion{OfToolResult: tr}
}

// markLastUserBlock puts the conversation's cache breakpoint on the last
// block of the final message when it is the user's (their new prompt or
// the tool results), so the whole history before it is cached.
func markLastUserBlock(msgs []sdk.MessageParam, cache sdk.CacheControlEphemeralParam) {
	if len(msgs) == 0 {
		return
	}
	last := msgs[len(msgs)-1]
	if last.Role != sdk.MessageParamRoleUser || len(last.Content) == 0 {
		return
	}
	b := last.Content[len(last.Content)-1]
	if b.OfText == nil && b.OfImage == nil && b.OfToolResult == nil {
		return
	}
	if cc := b.GetCacheControl(); cc != nil {
		*cc = cache
	}
}
