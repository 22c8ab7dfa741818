package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// Issue 10: a models.json that nulls every thinking level of a reasoning
// model used to crash gopi at startup (ClampThinking indexed an empty
// list) and cycle_thinking_level divided by zero.
func TestRPCReasoningModelWithoutUsableLevels(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	null := map[string]any{"off": nil, "minimal": nil, "low": nil, "medium": nil, "high": nil, "xhigh": nil}
	w.writeJSON(filepath.Join(w.agentDir, "models.json"), map[string]any{"providers": map[string]any{
		"scripted": map[string]any{
			"baseUrl": w.srv.AnthropicURL(), "api": "anthropic-messages", "apiKey": "test-key",
			"models": []any{map[string]any{
				"id": "scripted-1", "name": "No levels", "reasoning": true, "input": []string{"text"},
				"contextWindow": 100000, "maxTokens": 8000, "thinkingLevelMap": null,
			}},
		},
	}})
	p := w.start("--thinking", "high")
	st := p.ok("1", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, "off", st["thinkingLevel"])
	r := p.call("2", map[string]any{"type": "cycle_thinking_level"})
	assert.Equal(t, true, r["success"], p.transcript())
	p.ok("3", map[string]any{"type": "set_thinking_level", "level": "medium"})
	st = p.ok("4", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, "off", st["thinkingLevel"])
	assert.Equal(t, 0, p.exit())
}

// Issue 10: with a real provider's credentials, the scripted faux model is
// neither listed nor reachable by cycle_model; naming it still works.
func TestRPCFauxModelHiddenWhenRealCredentialsExist(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.start()
	models := p.ok("1", map[string]any{"type": "get_available_models"}).(map[string]any)["models"].([]any)
	var providers []string
	for _, m := range models {
		providers = append(providers, record(m.(map[string]any)).str("provider"))
	}
	assert.NotContains(t, providers, "faux")
	assert.Contains(t, providers, "scripted")
	for i := range 4 {
		r := p.ok("c"+string(rune('0'+i)), map[string]any{"type": "cycle_model"}).(map[string]any)
		assert.NotEqual(t, "faux", record(r).obj("model").str("provider"), "cycle_model moved onto the faux model")
	}
	r := p.call("2", map[string]any{"type": "set_model", "provider": "faux", "modelId": "faux-1"})
	assert.Equal(t, true, r["success"], "choosing faux by name still works\n%s", p.transcript())
	assert.Equal(t, 0, p.exit())
}

// models.json's provider and model headers reach the provider on every
// call, turns and compaction summaries alike, with pi 1.5's $NAME
// interpolation in them and in the key. They used to be read and dropped.
func TestRPCModelsJSONHeadersAreSent(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("first "+strings.Repeat("a ", 50)), llmtest.Text("The summary."))
	w.writeJSON(filepath.Join(w.agentDir, "models.json"), map[string]any{"providers": map[string]any{
		"scripted": map[string]any{
			"baseUrl": w.srv.AnthropicURL(), "api": "anthropic-messages", "apiKey": "${GOPI_TEST_KEY}",
			"headers": map[string]any{"x-team": "team-$GOPI_TEST_TEAM"},
			"models": []any{map[string]any{
				"id": "scripted-1", "name": "S", "input": []string{"text"}, "contextWindow": 100000, "maxTokens": 8000,
				"headers": map[string]any{"x-model": "one"},
			}},
		},
	}})
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 10}})
	p := w.startEnv([]string{"GOPI_TEST_TEAM=core", "GOPI_TEST_KEY=k-42"})
	p.ok("1", map[string]any{"type": "prompt", "message": "hello " + strings.Repeat("z ", 50)})
	p.idle()
	p.ok("2", map[string]any{"type": "compact"})
	reqs := w.srv.Requests()
	require.Len(t, reqs, 2, p.transcript())
	for i, r := range reqs {
		assert.Equal(t, "k-42", r.Header.Get("x-api-key"), "request %d", i)
		assert.Equal(t, "team-core", r.Header.Get("x-team"), "request %d", i)
		assert.Equal(t, "one", r.Header.Get("x-model"), "request %d", i)
	}
	assert.Equal(t, 0, p.exit())
}
