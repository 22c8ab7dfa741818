package models

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/gopi-dev/gopi/core/llm"
)

// builtinCatalog lists the built-in models, provider by provider in pi's
// order; the facts (ids, windows, prices, thinking maps) come from pi
// 0.73.1's generated catalog. As in pi, Google's baseUrl already carries
// the API version (".../v1beta"), so a client must not append another.
//
//go:embed catalog/builtin.json
var builtinCatalog []byte

// loadCatalog decodes a fresh copy of the embedded built-in models, so no
// two registries share maps.
func loadCatalog() ([]llm.Model, error) {
	var ms []llm.Model
	if err := json.Unmarshal(builtinCatalog, &ms); err != nil {
		return nil, fmt.Errorf("decoding the built-in model catalog: %w", err)
	}
	return ms, nil
}

// envKeys names the environment variables holding each provider's API key,
// in lookup order (pi's env-api-keys table). Google also accepts
// GOOGLE_API_KEY, which Google's own SDKs read.
var envKeys = map[string][]string{
	"anthropic":              {"ANTHROPIC_API_KEY"}, // pi also reads ANTHROPIC_OAUTH_TOKEN; gopi has no OAuth mode
	"openai":                 {"OPENAI_API_KEY"},
	"google":                 {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
	"github-copilot":         {"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"},
	"azure-openai-responses": {"AZURE_OPENAI_API_KEY"},
	"deepseek":               {"DEEPSEEK_API_KEY"},
	"google-vertex":          {"GOOGLE_CLOUD_API_KEY"},
	"groq":                   {"GROQ_API_KEY"},
	"cerebras":               {"CEREBRAS_API_KEY"},
	"xai":                    {"XAI_API_KEY"},
	"openrouter":             {"OPENROUTER_API_KEY"},
	"vercel-ai-gateway":      {"AI_GATEWAY_API_KEY"},
	"zai":                    {"ZAI_API_KEY"},
	"mistral":                {"MISTRAL_API_KEY"},
	"minimax":                {"MINIMAX_API_KEY"},
	"minimax-cn":             {"MINIMAX_CN_API_KEY"},
	"moonshotai":             {"MOONSHOT_API_KEY"},
	"moonshotai-cn":          {"MOONSHOT_API_KEY"},
	"huggingface":            {"HF_TOKEN"},
	"fireworks":              {"FIREWORKS_API_KEY"},
	"opencode":               {"OPENCODE_API_KEY"},
	"opencode-go":            {"OPENCODE_API_KEY"},
	"kimi-coding":            {"KIMI_API_KEY"},
	"cloudflare-workers-ai":  {"CLOUDFLARE_API_KEY"},
	"cloudflare-ai-gateway":  {"CLOUDFLARE_API_KEY"},
	"xiaomi":                 {"XIAOMI_API_KEY"},
	"xiaomi-token-plan-cn":   {"XIAOMI_TOKEN_PLAN_CN_API_KEY"},
	"xiaomi-token-plan-ams":  {"XIAOMI_TOKEN_PLAN_AMS_API_KEY"},
	"xiaomi-token-plan-sgp":  {"XIAOMI_TOKEN_PLAN_SGP_API_KEY"},
}

// EnvKeys returns the environment variables that may hold provider's API
// key, in lookup order; nil for a provider without one.
func EnvKeys(provider string) []string {
	return append([]string(nil), envKeys[provider]...)
}

// ProviderDefault is the model picked for a provider when nothing else
// decides.
type ProviderDefault struct {
	Provider string
	ModelID  string
}

// DefaultModels is pi's per-provider default model, in the order the
// initial model is looked for among the available ones.
var DefaultModels = []ProviderDefault{
	{"amazon-bedrock", "us.anthropic.claude-opus-4-6-v1"},
	{"anthropic", "claude-opus-4-7"},
	{"openai", "gpt-5.4"},
	{"azure-openai-responses", "gpt-5.4"},
	{"openai-codex", "gpt-5.5"},
	{"deepseek", "deepseek-v4-pro"},
	{"google", "gemini-3.1-pro-preview"},
	{"google-vertex", "gemini-3.1-pro-preview"},
	{"github-copilot", "gpt-5.4"},
	{"openrouter", "moonshotai/kimi-k2.6"},
	{"vercel-ai-gateway", "zai/glm-5.1"},
	{"xai", "grok-4.20-0309-reasoning"},
	{"groq", "openai/gpt-oss-120b"},
	{"cerebras", "zai-glm-4.7"},
	{"zai", "glm-5.1"},
	{"mistral", "devstral-medium-latest"},
	{"minimax", "MiniMax-M2.7"},
	{"minimax-cn", "MiniMax-M2.7"},
	{"moonshotai", "kimi-k2.6"},
	{"moonshotai-cn", "kimi-k2.6"},
	{"huggingface", "moonshotai/Kimi-K2.6"},
	{"fireworks", "accounts/fireworks/models/kimi-k2p6"},
	{"opencode", "kimi-k2.6"},
	{"opencode-go", "kimi-k2.6"},
	{"kimi-coding", "kimi-for-coding"},
	{"cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.6"},
	{"cloudflare-ai-gateway", "workers-ai/@cf/moonshotai/kimi-k2.6"},
	{"xiaomi", "mimo-v2.5-pro"},
	{"xiaomi-token-plan-cn", "mimo-v2.5-pro"},
	{"xiaomi-token-plan-ams", "mimo-v2.5-pro"},
	{"xiaomi-token-plan-sgp", "mimo-v2.5-pro"},
}

func defaultModelID(provider string) string {
	for _, d := range DefaultModels {
		if d.Provider == provider {
			return d.ModelID
		}
	}
	return ""
}

// DefaultThinking is the thinking level used when nothing sets one.
const DefaultThinking = llm.ThinkingMedium
