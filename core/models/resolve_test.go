package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// proxyJSON adds a provider that re-serves a built-in id, making the bare
// id ambiguous, plus a model id containing a slash.
const proxyJSON = `{"providers": {
	"proxy": {"baseUrl": "http://127.0.0.1:1", "api": "anthropic-messages", "apiKey": "k",
		"models": [{"id": "claude-sonnet-4-5", "name": "Proxied Sonnet"}, {"id": "openai/gpt-4o:extended"}]}
}}`

func TestResolve(t *testing.T) {
	r := load(t, map[string]string{"models.json": proxyJSON}, env("ANTHROPIC_API_KEY", "sk"))
	tests := []struct {
		provider, pattern string
		want              string // provider/id
		thinking          llm.ThinkingLevel
		warning           string
	}{
		{pattern: "anthropic/claude-opus-4-5", want: "anthropic/claude-opus-4-5"},
		{pattern: "ANTHROPIC/Claude-Opus-4-5", want: "anthropic/claude-opus-4-5"},
		{pattern: "gpt-4o", want: "openai/gpt-4o"},
		{pattern: "claude-sonnet-4-5", want: "anthropic/claude-sonnet-4-5", warning: ""}, // exact id: first in order
		{pattern: "proxy/claude-sonnet-4-5", want: "proxy/claude-sonnet-4-5"},
		{provider: "proxy", pattern: "claude-sonnet-4-5", want: "proxy/claude-sonnet-4-5"},
		{provider: "Anthropic", pattern: "anthropic/claude-haiku-4-5", want: "anthropic/claude-haiku-4-5"},
		{pattern: "openai/gpt-4o:extended", want: "proxy/openai/gpt-4o:extended"},
		// Partial matches prefer undated aliases, then the highest id.
		{pattern: "opus", want: "anthropic/claude-opus-4-7"},
		{pattern: "haiku", want: "anthropic/claude-haiku-4-5"},
		{pattern: "opus-4-1", want: "anthropic/claude-opus-4-1"},
		{pattern: "sonnet-4-5-2025", want: "anthropic/claude-sonnet-4-5-20250929"},
		{pattern: "Claude Sonnet 3.7", want: "anthropic/claude-3-7-sonnet-20250219"},
		{pattern: "gemini-2.5-pro", want: "google/gemini-2.5-pro"},
		// Thinking suffixes.
		{pattern: "opus:high", want: "anthropic/claude-opus-4-7", thinking: llm.ThinkingHigh},
		{pattern: "openai/gpt-5.5:xhigh", want: "openai/gpt-5.5", thinking: llm.ThinkingXHigh},
		{provider: "google", pattern: "gemini-2.5-flash:off", want: "google/gemini-2.5-flash", thinking: llm.ThinkingOff},
		// An unknown id on a known provider becomes a custom id on its default model.
		{pattern: "anthropic/claude-9", want: "anthropic/claude-9", warning: `Model "claude-9" not found for provider "anthropic". Using custom model id.`},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"|"+tt.pattern, func(t *testing.T) {
			res, err := r.ResolveCLI(tt.provider, tt.pattern)
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Model.Provider+"/"+res.Model.ID)
			assert.Equal(t, tt.thinking, res.Thinking)
			assert.Equal(t, tt.warning, res.Warning)
		})
	}

	fb, err := r.Resolve("anthropic/claude-9")
	require.NoError(t, err)
	assert.Equal(t, "claude-9", fb.Model.Name)
	assert.Equal(t, 1000000, fb.Model.ContextWindow, "built on claude-opus-4-7, anthropic's default")
}

func TestResolveErrors(t *testing.T) {
	r := load(t, nil, env())
	tests := []struct {
		provider, pattern string
		kind              error
		msg               string
	}{
		{pattern: "no-such-model", kind: ErrModelNotFound, msg: `Model "no-such-model" not found. Use --list-models to see available models.`},
		{pattern: "opus:turbo", kind: ErrModelNotFound, msg: `Model "opus:turbo" not found. Use --list-models to see available models.`},
		{provider: "nope", pattern: "x", kind: ErrUnknownProvider, msg: `Unknown provider "nope". Use --list-models to see available providers/models.`},
		{pattern: "", kind: ErrModelNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"|"+tt.pattern, func(t *testing.T) {
			_, err := r.ResolveCLI(tt.provider, tt.pattern)
			require.ErrorIs(t, err, tt.kind)
			if tt.msg != "" {
				assert.Equal(t, tt.msg, err.Error())
			}
		})
	}
}

func TestResolvePrefersModelsWithCredentials(t *testing.T) {
	// "mini" matches OpenAI and Google models; only Google has a key.
	r := load(t, nil, env("GEMINI_API_KEY", "g"))
	res, err := r.Resolve("mini")
	require.NoError(t, err)
	assert.Equal(t, "google", res.Model.Provider)

	r = load(t, nil, env("OPENAI_API_KEY", "o"))
	res, err = r.Resolve("mini")
	require.NoError(t, err)
	assert.Equal(t, "openai", res.Model.Provider)

	// Without credentials resolution still works over all models.
	r = load(t, nil, env())
	res, err = r.Resolve("sonnet")
	require.NoError(t, err)
	assert.Equal(t, "anthropic/claude-sonnet-4-6", res.Model.Provider+"/"+res.Model.ID)
}

func TestScope(t *testing.T) {
	r := load(t, nil, env("ANTHROPIC_API_KEY", "a", "OPENAI_API_KEY", "o"))
	scoped, warnings := r.Scope([]string{"anthropic/claude-sonnet-4-*:high, gpt-5.5", "*opus-4-7", "claude-sonnet-4-5", "gemini*", "sonnet-4-6:bogus"})
	var got []string
	for _, s := range scoped {
		got = append(got, s.Model.Provider+"/"+s.Model.ID+":"+string(s.Thinking))
	}
	assert.Equal(t, []string{
		"anthropic/claude-sonnet-4-0:high",
		"anthropic/claude-sonnet-4-20250514:high",
		"anthropic/claude-sonnet-4-5:high",
		"anthropic/claude-sonnet-4-5-20250929:high",
		"anthropic/claude-sonnet-4-6:high",
		"openai/gpt-5.5:",
		"anthropic/claude-opus-4-7:",
	}, got, "globs match provider/id or id, duplicates dropped, gemini has no key")
	assert.Equal(t, []string{
		`No models match pattern "gemini*"`,
		`Invalid thinking level "bogus" in pattern "sonnet-4-6:bogus". Using default instead.`,
	}, warnings)

	scoped, _ = r.Scope([]string{"GPT-4O*"})
	require.Len(t, scoped, 5, "globs ignore case: gpt-4o, its three snapshots and gpt-4o-mini")
}

func TestDefault(t *testing.T) {
	faux := []llm.Model{fauxModel()}
	tests := []struct {
		name  string
		env   []string
		files map[string]string
		want  string
	}{
		{"anthropic first", []string{"ANTHROPIC_API_KEY", "a", "OPENAI_API_KEY", "o", "GEMINI_API_KEY", "g"}, nil, "anthropic/claude-opus-4-7"},
		{"openai next", []string{"OPENAI_API_KEY", "o", "GEMINI_API_KEY", "g"}, nil, "openai/gpt-5.4"},
		{"google", []string{"GEMINI_API_KEY", "g"}, nil, "google/gemini-3.1-pro-preview"},
		{"custom provider before faux", nil, map[string]string{"models.json": customKeyJSON("k")}, "custom/m"},
		{"faux when nothing has a key", nil, nil, "faux/faux-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Load(Options{AgentDir: setup(t, tt.files), Getenv: env(tt.env...), Builtin: faux})
			require.NoError(t, err)
			m, ok := r.Default()
			require.True(t, ok)
			assert.Equal(t, tt.want, m.Provider+"/"+m.ID)
		})
	}

	r := load(t, nil, env())
	_, ok := r.Default()
	assert.False(t, ok, "no credentials and no faux: no default")
}

func TestFindAvailable(t *testing.T) {
	r := load(t, nil, env("OPENAI_API_KEY", "o"))
	m, err := r.FindAvailable("openai", "gpt-4o")
	require.NoError(t, err)
	assert.Equal(t, "gpt-4o", m.ID)
	_, err = r.FindAvailable("anthropic", "claude-sonnet-4-5")
	require.ErrorIs(t, err, ErrModelNotFound)
	assert.Equal(t, "Model not found: anthropic/claude-sonnet-4-5", err.Error())
}
