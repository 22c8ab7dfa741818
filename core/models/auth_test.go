package models

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// customKeyJSON defines provider "custom" whose apiKey is value.
func customKeyJSON(value string) string {
	return `{"providers": {"custom": {"baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",
		"apiKey": "` + value + `", "models": [{"id": "m"}]}}}`
}

func TestAPIKeySources(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		files    map[string]string
		env      []string
		override string // for the model's provider
		provider string
		id       string
		want     string
	}{
		{name: "anthropic env", env: []string{"ANTHROPIC_API_KEY", "sk-ant"}, provider: "anthropic", id: "claude-sonnet-4-5", want: "sk-ant"},
		{name: "anthropic oauth token is not used (no OAuth mode)", env: []string{"ANTHROPIC_API_KEY", "sk-ant", "ANTHROPIC_OAUTH_TOKEN", "sk-ant-oat"}, provider: "anthropic", id: "claude-sonnet-4-5", want: "sk-ant"},
		{name: "openai env", env: []string{"OPENAI_API_KEY", "sk-oai"}, provider: "openai", id: "gpt-4o", want: "sk-oai"},
		{name: "gemini env", env: []string{"GEMINI_API_KEY", "g1", "GOOGLE_API_KEY", "g2"}, provider: "google", id: "gemini-2.5-pro", want: "g1"},
		{name: "google env", env: []string{"GOOGLE_API_KEY", "g2"}, provider: "google", id: "gemini-2.5-pro", want: "g2"},
		{
			name:  "auth.json key",
			files: map[string]string{"auth.json": `{"openai": {"type": "api_key", "key": "from-auth"}}`},
			env:   []string{"OPENAI_API_KEY", "from-env"}, provider: "openai", id: "gpt-4o", want: "from-auth",
		},
		{
			name:  "auth.json key naming an env var",
			files: map[string]string{"auth.json": `{"openai": {"type": "api_key", "key": "MY_OPENAI"}}`},
			env:   []string{"MY_OPENAI", "indirect"}, provider: "openai", id: "gpt-4o", want: "indirect",
		},
		{
			name:     "auth.json key from command",
			files:    map[string]string{"auth.json": `{"openai": {"type": "api_key", "key": "!printf ' cmd-key \\n'"}}`},
			provider: "openai", id: "gpt-4o", want: "cmd-key",
		},
		{
			name:     "override beats everything",
			files:    map[string]string{"auth.json": `{"openai": {"type": "api_key", "key": "from-auth"}}`},
			env:      []string{"OPENAI_API_KEY", "from-env"},
			override: "from-flag", provider: "openai", id: "gpt-4o", want: "from-flag",
		},
		{name: "models.json literal", files: map[string]string{"models.json": customKeyJSON("literal-key")}, provider: "custom", id: "m", want: "literal-key"},
		{name: "models.json env var name", files: map[string]string{"models.json": customKeyJSON("CUSTOM_KEY")}, env: []string{"CUSTOM_KEY", "env-value"}, provider: "custom", id: "m", want: "env-value"},
		{name: "models.json unset env var name is a literal", files: map[string]string{"models.json": customKeyJSON("CUSTOM_KEY")}, provider: "custom", id: "m", want: "CUSTOM_KEY"},
		{name: "models.json command", files: map[string]string{"models.json": customKeyJSON("!echo from-shell")}, provider: "custom", id: "m", want: "from-shell"},
		{
			name:  "models.json beats env (pi 1.5's order)",
			files: map[string]string{"models.json": `{"providers": {"openai": {"apiKey": "json-key", "models": [{"id": "x"}]}}}`},
			env:   []string{"OPENAI_API_KEY", "from-env"}, provider: "openai", id: "x", want: "json-key",
		},
		{
			name:  "env when models.json's variable is unset",
			files: map[string]string{"models.json": `{"providers": {"openai": {"apiKey": "$UNSET_KEY", "models": [{"id": "x"}]}}}`},
			env:   []string{"OPENAI_API_KEY", "from-env"}, provider: "openai", id: "x", want: "from-env",
		},
		{name: "models.json $NAME", files: map[string]string{"models.json": customKeyJSON("$CUSTOM_KEY")}, env: []string{"CUSTOM_KEY", "env-value"}, provider: "custom", id: "m", want: "env-value"},
		{name: "models.json ${NAME} inside text", files: map[string]string{"models.json": customKeyJSON("pre-${CUSTOM_KEY}-post")}, env: []string{"CUSTOM_KEY", "v"}, provider: "custom", id: "m", want: "pre-v-post"},
		{name: "models.json escapes", files: map[string]string{"models.json": customKeyJSON("a$$b$!c$-${not-a-name}")}, provider: "custom", id: "m", want: "a$b!c$-${not-a-name}"},
		{
			name:  "oauth entry falls back to env",
			files: map[string]string{"auth.json": `{"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}}`},
			env:   []string{"ANTHROPIC_API_KEY", "sk-ant"}, provider: "anthropic", id: "claude-sonnet-4-5", want: "sk-ant",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := load(t, tt.files, env(tt.env...))
			if tt.override != "" {
				r.SetAPIKeyOverride(tt.provider, tt.override)
			}
			m := find(t, r, tt.provider, tt.id)
			assert.True(t, r.HasAuth(&m))
			key, err := r.APIKey(ctx, &m)
			require.NoError(t, err)
			assert.Equal(t, tt.want, key)
		})
	}
}

// A models.json key naming an unset variable is no credential.
func TestAPIKeyWithUnsetVariableIsNotConfigured(t *testing.T) {
	r := load(t, map[string]string{"models.json": customKeyJSON("$CUSTOM_KEY")}, env())
	m := find(t, r, "custom", "m")
	assert.False(t, r.HasAuth(&m))
	_, err := r.APIKey(context.Background(), &m)
	assert.ErrorIs(t, err, ErrNoAPIKey)
}

func TestAPIKeyOverrideOption(t *testing.T) {
	r, err := Load(Options{AgentDir: t.TempDir(), Getenv: env(), APIKeyOverrides: map[string]string{"google": "flag-key"}})
	require.NoError(t, err)
	m := find(t, r, "google", "gemini-2.5-pro")
	key, err := r.APIKey(context.Background(), &m)
	require.NoError(t, err)
	assert.Equal(t, "flag-key", key)
	assert.Equal(t, []string{"google"}, r.Providers()[1:2], "catalog order: anthropic, google, openai")

	r.SetAPIKeyOverride("google", "")
	assert.False(t, r.HasAuth(&m))
}

func TestNoAPIKey(t *testing.T) {
	ctx := context.Background()
	r := load(t, nil, env())
	m := find(t, r, "openai", "gpt-4o")
	assert.False(t, r.HasAuth(&m))
	_, err := r.APIKey(ctx, &m)
	require.ErrorIs(t, err, ErrNoAPIKey)
	assert.Equal(t, "No API key found for openai.", err.Error())

	r = load(t, map[string]string{"auth.json": `{"anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1}}`}, env())
	m = find(t, r, "anthropic", "claude-sonnet-4-5")
	assert.False(t, r.HasAuth(&m), "OAuth logins are not usable credentials")
	_, err = r.APIKey(ctx, &m)
	var nk *NoAPIKeyError
	require.ErrorAs(t, err, &nk)
	assert.True(t, nk.OAuth)
	assert.Contains(t, err.Error(), "OAuth")
}

func TestFailingCommandKey(t *testing.T) {
	ctx := context.Background()
	for name, cmd := range map[string]string{"exit status": "!exit 3", "empty output": "!true"} {
		t.Run(name, func(t *testing.T) {
			r := load(t, map[string]string{"models.json": customKeyJSON(cmd)}, env())
			m := find(t, r, "custom", "m")
			assert.True(t, r.HasAuth(&m), "availability runs no commands")
			_, err := r.APIKey(ctx, &m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `Failed to resolve API key for provider "custom" from shell command: `+cmd[1:])
		})
	}

	t.Run("timeout", func(t *testing.T) {
		r, err := Load(Options{AgentDir: setup(t, map[string]string{"models.json": customKeyJSON("!sleep 5; echo late")}), Getenv: env(), CommandTimeout: 100 * time.Millisecond})
		require.NoError(t, err)
		m := find(t, r, "custom", "m")
		start := time.Now()
		_, err = r.APIKey(ctx, &m)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 3*time.Second)
	})
}

func TestAuthJSONCommandIsCached(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "count")
	auth := `{"openai": {"type": "api_key", "key": "!echo x >> ` + counter + `; echo k"}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "auth.json"), []byte(auth), 0o600))
	r, err := Load(Options{AgentDir: dir, Getenv: env()})
	require.NoError(t, err)
	m := find(t, r, "openai", "gpt-4o")
	for range 3 {
		key, err := r.APIKey(context.Background(), &m)
		require.NoError(t, err)
		assert.Equal(t, "k", key)
	}
	data, err := os.ReadFile(counter)
	require.NoError(t, err)
	assert.Equal(t, "x\n", string(data), "the command ran once")
}

func TestAuthHeader(t *testing.T) {
	ctx := context.Background()
	r := load(t, map[string]string{"models.json": `{"providers": {"proxy": {
		"baseUrl": "https://proxy.example.com", "api": "anthropic-messages", "apiKey": "PROXY_KEY", "authHeader": true,
		"headers": {"x-cmd": "!echo hv"},
		"models": [{"id": "claude", "headers": {"x-model": "MODEL_HDR"}}]
	}}}`}, env("PROXY_KEY", "pk", "MODEL_HDR", "mh"))
	m := find(t, r, "proxy", "claude")
	auth, err := r.RequestAuth(ctx, &m)
	require.NoError(t, err)
	assert.Equal(t, "pk", auth.APIKey)
	assert.Equal(t, map[string]string{"Authorization": "Bearer pk", "x-cmd": "hv", "x-model": "mh"}, auth.Headers)
	assert.Nil(t, m.Headers, "request headers are not part of the model object")
}

func TestBadAuthJSONIsReported(t *testing.T) {
	dir := setup(t, map[string]string{"auth.json": `{not json`})
	r, err := Load(Options{AgentDir: dir, Getenv: env("OPENAI_API_KEY", "sk")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "auth.json")
	m := find(t, r, "openai", "gpt-4o")
	key, err := r.APIKey(context.Background(), &m)
	require.NoError(t, err)
	assert.Equal(t, "sk", key)
}

func fauxModel() llm.Model {
	return llm.Model{ID: "faux-1", Name: "Faux", API: llm.APIFaux, Provider: "faux", BaseURL: "http://localhost:0",
		Input: []string{"text"}, ContextWindow: 128000, MaxTokens: 16384}
}

func TestBuiltinFauxNeedsNoKey(t *testing.T) {
	r, err := Load(Options{AgentDir: t.TempDir(), Getenv: env(), Builtin: []llm.Model{fauxModel()}})
	require.NoError(t, err)
	assert.Equal(t, []string{"faux/faux-1"}, ids(r.Available()))
	m := find(t, r, "faux", "faux-1")
	auth, err := r.RequestAuth(context.Background(), &m)
	require.NoError(t, err)
	assert.Equal(t, llm.Auth{}, auth)
}

// A key stored in auth.json after Load is used once ReloadAuth has read
// the file again; a broken file keeps the entries read before.
func TestReloadAuth(t *testing.T) {
	dir := t.TempDir()
	r, err := Load(Options{AgentDir: dir, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	m, ok := r.Find("anthropic", "claude-sonnet-4-5")
	require.True(t, ok)
	assert.False(t, r.HasAuth(&m))

	path := filepath.Join(dir, "auth.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"anthropic": {"type": "api_key", "key": "sk-later"}}`), 0o600))
	assert.False(t, r.HasAuth(&m), "auth.json is read at Load, not at each look")
	require.NoError(t, r.ReloadAuth())
	assert.True(t, r.HasAuth(&m))
	key, err := r.APIKey(context.Background(), &m)
	require.NoError(t, err)
	assert.Equal(t, "sk-later", key)

	require.NoError(t, os.WriteFile(path, []byte(`{"anthropic": `), 0o600))
	assert.Error(t, r.ReloadAuth())
	assert.True(t, r.HasAuth(&m), "a broken file keeps the keys read before")
}
