package models

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// env is a hermetic environment for Options.Getenv.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// setup writes the named files into a fresh agent dir.
func setup(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

// load builds a registry over files with the given environment and
// requires that loading succeeded.
func load(t *testing.T, files map[string]string, getenv func(string) string) *Registry {
	t.Helper()
	r, err := Load(Options{AgentDir: setup(t, files), Getenv: getenv})
	require.NoError(t, err)
	return r
}

func find(t *testing.T, r *Registry, provider, id string) llm.Model {
	t.Helper()
	m, ok := r.Find(provider, id)
	require.True(t, ok, "%s/%s not found", provider, id)
	return m
}

func ids(ms []llm.Model) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Provider+"/"+m.ID)
	}
	return out
}

func TestCatalogIsSane(t *testing.T) {
	cat, err := loadCatalog()
	require.NoError(t, err)
	require.Greater(t, len(cat), 50)

	wantAPI := map[string]string{
		"anthropic": llm.APIAnthropicMessages,
		"openai":    llm.APIOpenAIResponses,
		"google":    llm.APIGoogleGenerativeAI,
	}
	wantURL := map[string]string{
		"anthropic": "https://api.anthropic.com",
		"openai":    "https://api.openai.com/v1",
		"google":    "https://generativelanguage.googleapis.com/v1beta",
	}
	seen := map[string]bool{}
	for _, m := range cat {
		key := m.Provider + "/" + m.ID
		assert.False(t, seen[key], "duplicate %s", key)
		seen[key] = true
		assert.NotEmpty(t, m.Name, key)
		assert.Equal(t, wantAPI[m.Provider], m.API, key)
		assert.Equal(t, wantURL[m.Provider], m.BaseURL, key)
		assert.Positive(t, m.ContextWindow, key)
		assert.Positive(t, m.MaxTokens, key)
		assert.Contains(t, m.Input, "text", key)
		if !strings.HasPrefix(m.ID, "gemma-") { // Google serves Gemma for free
			assert.Positive(t, m.Cost.Input, key)
			assert.Positive(t, m.Cost.Output, key)
		}
		assert.GreaterOrEqual(t, m.Cost.CacheRead, 0.0, key)
		assert.GreaterOrEqual(t, m.Cost.CacheWrite, 0.0, key)
	}
	for p := range wantAPI {
		assert.NotEmpty(t, DefaultModels, p)
		assert.True(t, seen[p+"/"+defaultModelID(p)], "default model of %s is in the catalog", p)
	}

	r := load(t, nil, env())
	sonnet := find(t, r, "anthropic", "claude-sonnet-4-5")
	assert.Equal(t, llm.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, sonnet.Cost)
	assert.Equal(t, 200000, sonnet.ContextWindow)
	assert.Equal(t, 64000, sonnet.MaxTokens)

	levels := func(provider, id string) []llm.ThinkingLevel {
		m := find(t, r, provider, id)
		return llm.SupportedLevels(&m)
	}
	all := []llm.ThinkingLevel{"off", "minimal", "low", "medium", "high", "xhigh"}
	assert.Equal(t, all[:5], levels("anthropic", "claude-sonnet-4-5"))
	assert.Equal(t, all, levels("anthropic", "claude-opus-4-7"))
	assert.Equal(t, all[1:], levels("openai", "gpt-5.5"), "gpt-5.5 cannot switch reasoning off")
	assert.Equal(t, []llm.ThinkingLevel{"low", "high"}, levels("google", "gemini-3.1-pro-preview"))
	assert.Equal(t, all[:1], levels("openai", "gpt-4o"))

	opus := find(t, r, "anthropic", "claude-opus-4-6")
	require.NotNil(t, opus.ThinkingLevelMap[llm.ThinkingXHigh])
	assert.Equal(t, "max", *opus.ThinkingLevelMap[llm.ThinkingXHigh])
}

func TestRegistriesDoNotShareModels(t *testing.T) {
	a := load(t, nil, env())
	b := load(t, nil, env())
	m := a.cur.Load().models[0]
	m.Input[0] = "mutated"
	assert.Equal(t, "text", b.cur.Load().models[0].Input[0])
}

const ollamaJSON = `{
  // local models, JSON with comments
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1", // the OpenAI-style endpoint
      "api": "openai-completions",
      "apiKey": "ollama",
      "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
      "models": [
        {"id": "llama3.1:8b"},
        {
          "id": "gpt-oss:20b",
          "name": "GPT OSS // 20B",
          "reasoning": true,
          "input": ["text", "image"],
          "contextWindow": 131072,
          "maxTokens": 32000,
          "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0},
          "thinkingLevelMap": {"minimal": null, "xhigh": "high"},
          "compat": {"supportsReasoningEffort": true, "maxTokensField": "max_tokens"},
        },
      ],
    },
  },
}`

func TestModelsJSONCustomProvider(t *testing.T) {
	r := load(t, map[string]string{"models.json": ollamaJSON}, env())

	llama := find(t, r, "ollama", "llama3.1:8b")
	assert.Equal(t, llm.Model{
		ID: "llama3.1:8b", Name: "llama3.1:8b", API: llm.APIOpenAICompletions, Provider: "ollama",
		BaseURL: "http://localhost:11434/v1", Input: []string{"text"},
		ContextWindow: 128000, MaxTokens: 16384,
		Compat: llama.Compat,
	}, llama)
	c := llama.OpenAICompat()
	require.NotNil(t, c.SupportsDeveloperRole)
	assert.False(t, *c.SupportsDeveloperRole)
	require.NotNil(t, c.SupportsReasoningEffort)
	assert.False(t, *c.SupportsReasoningEffort)

	oss := find(t, r, "ollama", "gpt-oss:20b")
	assert.Equal(t, "GPT OSS // 20B", oss.Name, "a // inside a string is not a comment")
	assert.True(t, oss.Reasoning)
	assert.Equal(t, []string{"text", "image"}, oss.Input)
	assert.Equal(t, 131072, oss.ContextWindow)
	assert.Equal(t, 32000, oss.MaxTokens)
	assert.Equal(t, llm.ModelCost{Input: 0.1, Output: 0.2}, oss.Cost)
	assert.Equal(t, []llm.ThinkingLevel{"off", "low", "medium", "high", "xhigh"}, llm.SupportedLevels(&oss))
	c = oss.OpenAICompat()
	require.NotNil(t, c.SupportsReasoningEffort)
	assert.True(t, *c.SupportsReasoningEffort, "model compat overrides provider compat")
	require.NotNil(t, c.SupportsDeveloperRole)
	assert.False(t, *c.SupportsDeveloperRole, "provider compat still applies")
	assert.Equal(t, "max_tokens", c.MaxTokensField)

	// Custom models come after the built-in ones, in file order, and are
	// available because the provider has an apiKey.
	all := ids(r.All())
	assert.Equal(t, []string{"ollama/llama3.1:8b", "ollama/gpt-oss:20b"}, all[len(all)-2:])
	assert.Equal(t, []string{"ollama/llama3.1:8b", "ollama/gpt-oss:20b"}, ids(r.Available()))
	key, err := r.APIKey(context.Background(), &oss)
	require.NoError(t, err)
	assert.Equal(t, "ollama", key)
}

func TestModelOverridesAndProviderOverride(t *testing.T) {
	r := load(t, map[string]string{"models.json": `{"providers": {
		"anthropic": {
			"baseUrl": "https://proxy.example.com",
			"headers": {"x-proxy": "PROXY_TOKEN", "x-static": "literal"},
			"modelOverrides": {
				"claude-sonnet-4-5": {
					"name": "Sonnet via proxy",
					"cost": {"input": 1},
					"contextWindow": 1000000,
					"thinkingLevelMap": {"xhigh": "max"},
					"headers": {"x-model": "m"},
					"compat": {"supportsEagerToolInputStreaming": false}
				},
				"no-such-model": {"name": "ignored"}
			}
		}
	}}`}, env("ANTHROPIC_API_KEY", "sk-ant", "PROXY_TOKEN", "tok"))

	for _, m := range r.All() {
		if m.Provider == "anthropic" {
			assert.Equal(t, "https://proxy.example.com", m.BaseURL, m.ID)
		}
	}
	s := find(t, r, "anthropic", "claude-sonnet-4-5")
	assert.Equal(t, "Sonnet via proxy", s.Name)
	assert.Equal(t, llm.ModelCost{Input: 1, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}, s.Cost, "cost merges field by field")
	assert.Equal(t, 1000000, s.ContextWindow)
	assert.Equal(t, 64000, s.MaxTokens)
	assert.Contains(t, llm.SupportedLevels(&s), llm.ThinkingXHigh)
	ac := s.AnthropicCompat()
	require.NotNil(t, ac.SupportsEagerToolInputStreaming)
	assert.False(t, *ac.SupportsEagerToolInputStreaming)
	_, found := r.Find("anthropic", "no-such-model")
	assert.False(t, found, "overrides never create models")

	other := find(t, r, "anthropic", "claude-haiku-4-5")
	assert.Equal(t, "Claude Haiku 4.5 (latest)", other.Name)

	ctx := context.Background()
	auth, err := r.RequestAuth(ctx, &s)
	require.NoError(t, err)
	assert.Equal(t, "sk-ant", auth.APIKey)
	assert.Equal(t, map[string]string{"x-proxy": "tok", "x-static": "literal", "x-model": "m"}, auth.Headers)
	h, err := r.Headers(ctx, &other)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"x-proxy": "tok", "x-static": "literal"}, h)
}

func TestCustomModelOnBuiltinProvider(t *testing.T) {
	r := load(t, map[string]string{"models.json": `{"providers": {"openai": {"models": [
		{"id": "gpt-next", "reasoning": true},
		{"id": "gpt-4o", "name": "Replaced"}
	]}}}`}, env())
	next := find(t, r, "openai", "gpt-next")
	assert.Equal(t, llm.APIOpenAIResponses, next.API, "api inherited from the built-in provider")
	assert.Equal(t, "https://api.openai.com/v1", next.BaseURL)
	assert.Equal(t, "Replaced", find(t, r, "openai", "gpt-4o").Name)
	n := 0
	for _, m := range r.All() {
		if m.Provider == "openai" && m.ID == "gpt-4o" {
			n++
		}
	}
	assert.Equal(t, 1, n, "a custom model replaces the built-in one in place")
}

func TestBadModelsJSONIsReported(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"syntax", `{"providers": {`, "Failed to parse models.json"},
		{"not an object", `[]`, "Failed to parse models.json"},
		{"no providers", `{}`, "Invalid models.json schema:\n  - providers: required property is missing"},
		{"wrong type", `{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "openai-completions", "models": [{"id": "m", "contextWindow": "big"}]}}}`, "Invalid models.json schema:\n  - providers.x.models.contextWindow: expected number, got string"},
		{"bad input", `{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "openai-completions", "models": [{"id": "m", "input": ["audio"]}]}}}`, `providers.x.models.0.input.0: must be "text" or "image", got "audio"`},
		{"missing id", `{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "openai-completions", "models": [{"name": "m"}]}}}`, "providers.x.models.0.id: required property is missing"},
		{"partial cost", `{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "openai-completions", "models": [{"id": "m", "cost": {"input": 1}}]}}}`, "providers.x.models.0.cost.output: required property is missing"},
		{"compat not object", `{"providers": {"anthropic": {"compat": true}}}`, "providers.anthropic.compat: must be an object"},
		{"empty provider", `{"providers": {"anthropic": {}}}`, `Failed to load models.json: Provider anthropic: must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".`},
		{"no baseUrl", `{"providers": {"x": {"apiKey": "k", "api": "openai-completions", "models": [{"id": "m"}]}}}`, `Provider x: "baseUrl" is required when defining custom models.`},
		{"no apiKey", `{"providers": {"x": {"baseUrl": "http://h", "api": "openai-completions", "models": [{"id": "m"}]}}}`, `Provider x: "apiKey" is required when defining custom models.`},
		{"no api", `{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "models": [{"id": "m"}]}}}`, `Provider x, model m: no "api" specified. Set at provider or model level.`},
		{"bad window", `{"providers": {"x": {"baseUrl": "http://h", "apiKey": "k", "api": "openai-completions", "models": [{"id": "m", "contextWindow": 0}]}}}`, `Provider x, model m: invalid contextWindow`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := setup(t, map[string]string{"models.json": tt.content})
			r, err := Load(Options{AgentDir: dir, Getenv: env("OPENAI_API_KEY", "sk")})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "File: "+filepath.Join(dir, "models.json"))
			require.NotNil(t, r)
			assert.Equal(t, err, r.LoadError())
			// The built-in catalog keeps working and nothing from the file applies.
			_, custom := r.Find("x", "m")
			assert.False(t, custom)
			assert.Equal(t, "https://api.anthropic.com", find(t, r, "anthropic", "claude-sonnet-4-5").BaseURL)
			res, err := r.Resolve("gpt-4o")
			require.NoError(t, err)
			assert.Equal(t, "openai", res.Model.Provider)
		})
	}
}

func TestMissingFilesAreFine(t *testing.T) {
	r, err := Load(Options{AgentDir: filepath.Join(t.TempDir(), "absent"), Getenv: env()})
	require.NoError(t, err)
	assert.NotEmpty(t, r.All())
	assert.Empty(t, r.Available())
}

func TestAgentDir(t *testing.T) {
	assert.Equal(t, "/home/u/.pi/agent", AgentDir(env("HOME", "/home/u")))
	assert.Equal(t, "/custom/agent", AgentDir(env("HOME", "/home/u", "PI_CODING_AGENT_DIR", "/custom/agent")))
	assert.Equal(t, "/home/u/cfg", AgentDir(env("HOME", "/home/u", "PI_CODING_AGENT_DIR", "~/cfg")))

	dir := setup(t, map[string]string{"auth.json": `{"openai": {"type": "api_key", "key": "from-dir"}}`})
	r, err := Load(Options{Getenv: env("PI_CODING_AGENT_DIR", dir)})
	require.NoError(t, err)
	assert.Equal(t, dir, r.AgentDir())
	key, err := r.APIKey(context.Background(), ptr(find(t, r, "openai", "gpt-4o")))
	require.NoError(t, err)
	assert.Equal(t, "from-dir", key)
}

func ptr(m llm.Model) *llm.Model { return &m }

func TestJSONCommentStripping(t *testing.T) {
	in := `{"a": "http://x", // c
	"b": ["y", "z\"//",], }`
	var v map[string]any
	require.NoError(t, json.Unmarshal(stripJSONComments([]byte(in)), &v))
	assert.Equal(t, map[string]any{"a": "http://x", "b": []any{"y", `z"//`}}, v)
}
