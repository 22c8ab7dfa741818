package llm

import "encoding/json"

// The API families gopi speaks; a model's "api" picks the [Provider].
const (
	APIAnthropicMessages  = "anthropic-messages"
	APIOpenAICompletions  = "openai-completions"
	APIOpenAIResponses    = "openai-responses"
	APIGoogleGenerativeAI = "google-generative-ai"
	APIFaux               = "faux"
)

// Model describes one model the way pi's model registry does; it is also
// the "model" object of the RPC protocol.
type Model struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	API           string            `json:"api"`
	Provider      string            `json:"provider"`
	BaseURL       string            `json:"baseUrl"`
	Reasoning     bool              `json:"reasoning"`
	Input         []string          `json:"input"`
	Cost          ModelCost         `json:"cost"`
	ContextWindow int               `json:"contextWindow"`
	MaxTokens     int               `json:"maxTokens"`
	Headers       map[string]string `json:"headers,omitempty"`
	// ThinkingLevelMap maps gopi thinking levels to the provider's own
	// values; a JSON null marks a level unsupported. See [SupportedLevels].
	ThinkingLevelMap map[ThinkingLevel]*string `json:"thinkingLevelMap,omitempty"`
	// Compat holds the API-specific compatibility switches, raw; decode it
	// with [Model.OpenAICompat] or [Model.AnthropicCompat].
	Compat json.RawMessage `json:"compat,omitempty"`
}

// ModelCost is a model's price in dollars per million tokens.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// SupportsImages reports whether the model takes image input.
func (m *Model) SupportsImages() bool {
	for _, in := range m.Input {
		if in == "image" {
			return true
		}
	}
	return false
}

// OpenAICompat is the "compat" object for openai-completions models
// (Ollama, vLLM, LM Studio and other servers that speak that dialect).
// Nil fields mean "detect from the base URL".
type OpenAICompat struct {
	SupportsStore                    *bool                    `json:"supportsStore,omitempty"`
	SupportsDeveloperRole            *bool                    `json:"supportsDeveloperRole,omitempty"`
	SupportsReasoningEffort          *bool                    `json:"supportsReasoningEffort,omitempty"`
	ReasoningEffortMap               map[ThinkingLevel]string `json:"reasoningEffortMap,omitempty"`
	SupportsUsageInStreaming         *bool                    `json:"supportsUsageInStreaming,omitempty"`
	MaxTokensField                   string                   `json:"maxTokensField,omitempty"`
	RequiresToolResultName           *bool                    `json:"requiresToolResultName,omitempty"`
	RequiresAssistantAfterToolResult *bool                    `json:"requiresAssistantAfterToolResult,omitempty"`
	RequiresThinkingAsText           *bool                    `json:"requiresThinkingAsText,omitempty"`
	ThinkingFormat                   string                   `json:"thinkingFormat,omitempty"`
	SupportsStrictMode               *bool                    `json:"supportsStrictMode,omitempty"`
}

// AnthropicCompat is the "compat" object for anthropic-messages models.
type AnthropicCompat struct {
	SupportsEagerToolInputStreaming *bool `json:"supportsEagerToolInputStreaming,omitempty"`
}

// OpenAICompat decodes m.Compat; a missing or malformed object is empty.
func (m *Model) OpenAICompat() OpenAICompat {
	var c OpenAICompat
	if len(m.Compat) > 0 {
		_ = json.Unmarshal(m.Compat, &c)
	}
	return c
}

// AnthropicCompat decodes m.Compat; a missing or malformed object is empty.
func (m *Model) AnthropicCompat() AnthropicCompat {
	var c AnthropicCompat
	if len(m.Compat) > 0 {
		_ = json.Unmarshal(m.Compat, &c)
	}
	return c
}
