package openai

import (
	"encoding/json"
	"strings"

	"github.com/gopi-dev/gopi/core/llm"
)

// ThinkingFormat is the wire name of compat.thinkingFormat: how a Chat
// Completions server wants to be told to reason.
type ThinkingFormat string

const (
	// ThinkingOpenAI sends reasoning_effort.
	ThinkingOpenAI ThinkingFormat = "openai"
	// ThinkingOpenRouter sends reasoning: {effort}.
	ThinkingOpenRouter ThinkingFormat = "openrouter"
	// ThinkingDeepSeek sends thinking: {type} plus reasoning_effort.
	ThinkingDeepSeek ThinkingFormat = "deepseek"
	// ThinkingZAI sends enable_thinking.
	ThinkingZAI ThinkingFormat = "zai"
	// ThinkingQwen sends enable_thinking.
	ThinkingQwen ThinkingFormat = "qwen"
	// ThinkingQwenChatTemplate sends chat_template_kwargs.enable_thinking.
	ThinkingQwenChatTemplate ThinkingFormat = "qwen-chat-template"
)

// MaxTokensField values.
const (
	fieldMaxCompletionTokens = "max_completion_tokens"
	fieldMaxTokens           = "max_tokens"
)

// chatCompat is the fully resolved compat of an openai-completions model.
type chatCompat struct {
	supportsStore                    bool
	supportsDeveloperRole            bool
	supportsReasoningEffort          bool
	reasoningEffortMap               map[llm.ThinkingLevel]string
	supportsUsageInStreaming         bool
	maxTokensField                   string
	requiresToolResultName           bool
	requiresAssistantAfterToolResult bool
	requiresThinkingAsText           bool
	requiresReasoningContent         bool
	thinkingFormat                   ThinkingFormat
	supportsStrictMode               bool
	sendSessionAffinityHeaders       bool
	supportsLongCacheRetention       bool
}

// compatExtra holds pi compat switches that [llm.OpenAICompat] does not
// carry; they are read from the same raw object.
type compatExtra struct {
	RequiresReasoningContentOnAssistantMessages *bool `json:"requiresReasoningContentOnAssistantMessages,omitempty"`
	SendSessionAffinityHeaders                  *bool `json:"sendSessionAffinityHeaders,omitempty"`
	SupportsLongCacheRetention                  *bool `json:"supportsLongCacheRetention,omitempty"`
}

// detectCompat guesses a server's quirks from the model's provider and
// base URL, the way pi does; an explicit compat field always wins (see
// resolveCompat). Unknown servers (Ollama, vLLM, LM Studio, llama.cpp) get
// the standard OpenAI behaviour, which they accept.
func detectCompat(model *llm.Model) chatCompat {
	provider, url := model.Provider, model.BaseURL
	has := func(s string) bool { return strings.Contains(url, s) }

	zai := provider == "zai" || has("api.z.ai")
	moonshot := provider == "moonshotai" || provider == "moonshotai-cn" || has("api.moonshot.")
	cfWorkers := provider == "cloudflare-workers-ai" || has("api.cloudflare.com")
	cfGateway := provider == "cloudflare-ai-gateway" || has("gateway.ai.cloudflare.com")
	grok := provider == "xai" || has("api.x.ai")
	deepseek := provider == "deepseek" || has("deepseek.com")
	nonStandard := provider == "cerebras" || has("cerebras.ai") || grok || has("chutes.ai") ||
		has("deepseek.com") || zai || moonshot || provider == "opencode" || has("opencode.ai") ||
		cfWorkers || cfGateway

	c := chatCompat{
		supportsStore:              !nonStandard,
		supportsDeveloperRole:      !nonStandard,
		supportsReasoningEffort:    !grok && !zai && !moonshot && !cfGateway,
		supportsUsageInStreaming:   true,
		maxTokensField:             fieldMaxCompletionTokens,
		requiresReasoningContent:   deepseek,
		thinkingFormat:             ThinkingOpenAI,
		supportsStrictMode:         !moonshot && !cfGateway,
		supportsLongCacheRetention: !cfWorkers && !cfGateway,
	}
	if has("chutes.ai") || moonshot || cfGateway {
		c.maxTokensField = fieldMaxTokens
	}
	switch {
	case deepseek:
		c.thinkingFormat = ThinkingDeepSeek
	case zai:
		c.thinkingFormat = ThinkingZAI
	case provider == "openrouter" || has("openrouter.ai"):
		c.thinkingFormat = ThinkingOpenRouter
	}
	return c
}

// resolveCompat overlays the model's explicit compat on the detected one.
func resolveCompat(model *llm.Model) chatCompat {
	c := detectCompat(model)
	oc := model.OpenAICompat()
	var extra compatExtra
	if len(model.Compat) > 0 {
		_ = json.Unmarshal(model.Compat, &extra)
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.supportsStore, oc.SupportsStore)
	set(&c.supportsDeveloperRole, oc.SupportsDeveloperRole)
	set(&c.supportsReasoningEffort, oc.SupportsReasoningEffort)
	set(&c.supportsUsageInStreaming, oc.SupportsUsageInStreaming)
	set(&c.requiresToolResultName, oc.RequiresToolResultName)
	set(&c.requiresAssistantAfterToolResult, oc.RequiresAssistantAfterToolResult)
	set(&c.requiresThinkingAsText, oc.RequiresThinkingAsText)
	set(&c.supportsStrictMode, oc.SupportsStrictMode)
	set(&c.requiresReasoningContent, extra.RequiresReasoningContentOnAssistantMessages)
	set(&c.sendSessionAffinityHeaders, extra.SendSessionAffinityHeaders)
	set(&c.supportsLongCacheRetention, extra.SupportsLongCacheRetention)
	if oc.MaxTokensField != "" {
		c.maxTokensField = oc.MaxTokensField
	}
	if oc.ThinkingFormat != "" {
		c.thinkingFormat = ThinkingFormat(oc.ThinkingFormat)
	}
	c.reasoningEffortMap = oc.ReasoningEffortMap
	return c
}
