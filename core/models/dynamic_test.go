package models

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegisterProviderAddsAndRemovesModels(t *testing.T) {
	r := load(t, nil, env("PROXY_KEY", "k-123"))
	err := r.RegisterProvider("proxy", json.RawMessage(`{
		"baseUrl": "http://127.0.0.1:9/v1", "api": "anthropic-messages", "apiKey": "$PROXY_KEY",
		"headers": {"x-team": "core"},
		"models": [{"id": "p-1", "name": "Proxy One", "contextWindow": 50000,
			"cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}}]}`))
	require.NoError(t, err)

	m := find(t, r, "proxy", "p-1")
	assert.Equal(t, "Proxy One", m.Name)
	assert.Equal(t, "anthropic-messages", m.API)
	assert.Equal(t, 50000, m.ContextWindow)
	assert.Equal(t, defaultMaxTokens, m.MaxTokens)
	assert.Equal(t, []string{"text"}, m.Input)
	assert.True(t, r.HasAuth(&m))
	auth, err := r.RequestAuth(context.Background(), &m)
	require.NoError(t, err)
	assert.Equal(t, "k-123", auth.APIKey)
	assert.Equal(t, "core", auth.Headers["x-team"])
	assert.Contains(t, ids(r.Available()), "proxy/p-1")

	// Registering again replaces the first registration.
	require.NoError(t, r.RegisterProvider("proxy", json.RawMessage(`{
		"baseUrl": "http://127.0.0.1:9/v1", "api": "anthropic-messages", "apiKey": "lit",
		"models": [{"id": "p-2"}]}`)))
	_, ok := r.Find("proxy", "p-1")
	assert.False(t, ok)
	find(t, r, "proxy", "p-2")

	assert.True(t, r.UnregisterProvider("proxy"))
	assert.False(t, r.UnregisterProvider("proxy"))
	_, ok = r.Find("proxy", "p-2")
	assert.False(t, ok)
}

func TestRegisterProviderOverridesABuiltInOne(t *testing.T) {
	r := load(t, nil, env("ANTHROPIC_API_KEY", "sk"))
	before := find(t, r, "anthropic", "claude-sonnet-4-5")
	n := len(r.All())

	// Without models: the endpoint moves, the models stay.
	require.NoError(t, r.RegisterProvider("anthropic", json.RawMessage(`{"baseUrl": "https://proxy.example/a"}`)))
	m := find(t, r, "anthropic", "claude-sonnet-4-5")
	assert.Equal(t, "https://proxy.example/a", m.BaseURL)
	assert.Equal(t, before.ContextWindow, m.ContextWindow)
	assert.Len(t, r.All(), n)

	// With models: they replace every model the provider had, and inherit
	// its api.
	require.NoError(t, r.RegisterProvider("anthropic", json.RawMessage(`{"models": [{"id": "only"}]}`)))
	only := find(t, r, "anthropic", "only")
	assert.Equal(t, before.API, only.API)
	_, ok := r.Find("anthropic", "claude-sonnet-4-5")
	assert.False(t, ok)

	// Unregistering brings the catalog's models back.
	require.True(t, r.UnregisterProvider("anthropic"))
	assert.Equal(t, before, find(t, r, "anthropic", "claude-sonnet-4-5"))
	assert.Len(t, r.All(), n)
}

func TestModelsJSONAppliesOverARegisteredProvider(t *testing.T) {
	r := load(t, map[string]string{"models.json": `{"providers": {"proxy": {"baseUrl": "http://file.example",
		"modelOverrides": {"p-1": {"name": "Named in models.json"}}}}}`}, env())
	require.NoError(t, r.RegisterProvider("proxy", json.RawMessage(`{"baseUrl": "http://ext.example",
		"api": "openai-completions", "apiKey": "k", "models": [{"id": "p-1"}]}`)))
	m := find(t, r, "proxy", "p-1")
	assert.Equal(t, "http://file.example", m.BaseURL)
	assert.Equal(t, "Named in models.json", m.Name)
}

func TestRegisterProviderRefusesWhatPiRefuses(t *testing.T) {
	r := load(t, nil, env())
	n := len(r.All())
	for name, tc := range map[string]struct{ provider, config, want string }{
		"no name":      {"", `{}`, "needs a name"},
		"empty":        {"p", `{}`, `must specify "baseUrl"`},
		"not object":   {"p", `[1]`, "config"},
		"no base url":  {"p", `{"api": "openai-completions", "models": [{"id": "m"}]}`, `no "baseUrl"`},
		"no api":       {"p", `{"baseUrl": "http://x", "models": [{"id": "m"}]}`, `no "api"`},
		"bad input":    {"p", `{"baseUrl": "http://x", "api": "openai-completions", "models": [{"id": "m", "input": ["audio"]}]}`, "must be \"text\" or \"image\""},
		"bad window":   {"p", `{"baseUrl": "http://x", "api": "openai-completions", "models": [{"id": "m", "contextWindow": 0}]}`, "invalid contextWindow"},
		"missing id":   {"p", `{"baseUrl": "http://x", "api": "openai-completions", "models": [{}]}`, "id: required"},
		"wrong type":   {"p", `{"baseUrl": 3}`, "baseUrl"},
		"partial cost": {"p", `{"baseUrl": "http://x", "api": "openai-completions", "models": [{"id": "m", "cost": {"input": 1}}]}`, "cost.output"},
	} {
		t.Run(name, func(t *testing.T) {
			err := r.RegisterProvider(tc.provider, json.RawMessage(tc.config))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Len(t, r.All(), n, "a refused registration changes nothing")
		})
	}
}

// Lookups run while providers come and go (go test -race).
func TestRegisterProviderWhileLookingUp(t *testing.T) {
	r := load(t, nil, env("ANTHROPIC_API_KEY", "sk"))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, m := range r.Available() {
					_, _ = r.RequestAuth(context.Background(), &m)
				}
				_, _ = r.Find("proxy", "p")
			}
		})
	}
	for range 50 {
		require.NoError(t, r.RegisterProvider("proxy", json.RawMessage(`{"baseUrl": "http://x", "api": "openai-completions", "apiKey": "k", "models": [{"id": "p"}]}`)))
		r.UnregisterProvider("proxy")
	}
	close(stop)
	wg.Wait()
}
