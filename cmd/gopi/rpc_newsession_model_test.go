package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modelAndLevel is get_state's model id and thinking level.
func modelAndLevel(p *proc, id string) (string, string) {
	p.t.Helper()
	st := p.state(id)
	return st["model"].(map[string]any)["id"].(string), st["thinkingLevel"].(string)
}

// Issue 25: after set_model or cycle_model, new_session kept the model
// (and level) the last session ended on; pi (1.5.2 and 1.6.0) starts each new
// session as at startup: the command line's --model, else settings.json's
// defaultProvider/defaultModel (read again), with the default thinking
// level.
func TestNewSessionStartsWithTheDefaultModel(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	settings := filepath.Join(w.agentDir, "settings.json")
	require.NoError(t, os.WriteFile(settings,
		[]byte(`{"defaultProvider":"scripted","defaultModel":"scripted-1","defaultThinkingLevel":"low"}`), 0o644))

	p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc")
	m, l := modelAndLevel(p, "1")
	require.Equal(t, "scripted-1", m)
	require.Equal(t, "low", l)

	p.ok("2", map[string]any{"type": "set_model", "provider": "scripted", "modelId": "scripted-2"})
	m, l = modelAndLevel(p, "3")
	require.Equal(t, "scripted-2", m)
	require.Equal(t, "off", l)
	p.ok("4", map[string]any{"type": "new_session"})
	m, l = modelAndLevel(p, "5")
	assert.Equal(t, "scripted-1", m, "new_session goes back to the settings' default model")
	assert.Equal(t, "low", l)

	// The same after a changed level and cycle_model.
	p.ok("6", map[string]any{"type": "set_thinking_level", "level": "high"})
	p.ok("7", map[string]any{"type": "cycle_model"})
	m, _ = modelAndLevel(p, "8")
	require.NotEqual(t, "scripted-1", m)
	p.ok("9", map[string]any{"type": "new_session"})
	m, l = modelAndLevel(p, "10")
	assert.Equal(t, "scripted-1", m)
	assert.Equal(t, "low", l)
	// None of it was saved as the default, as in pi 1.6.0's RPC mode.
	saved, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.JSONEq(t, `{"defaultProvider":"scripted","defaultModel":"scripted-1","defaultThinkingLevel":"low"}`, string(saved))

	// settings.json is read again for each new session, as pi does.
	require.NoError(t, os.WriteFile(settings,
		[]byte(`{"defaultProvider":"scripted","defaultModel":"scripted-2"}`), 0o644))
	p.ok("11", map[string]any{"type": "new_session"})
	m, l = modelAndLevel(p, "12")
	assert.Equal(t, "scripted-2", m)
	assert.Equal(t, "off", l)
	assert.Equal(t, 0, p.exit())

	// With --model (and a :level), new sessions start with it instead.
	p = startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "scripted/scripted-1:high")
	p.ok("1", map[string]any{"type": "set_model", "provider": "scripted", "modelId": "scripted-2"})
	p.ok("2", map[string]any{"type": "new_session"})
	m, l = modelAndLevel(p, "3")
	assert.Equal(t, "scripted-1", m)
	assert.Equal(t, "high", l)
	assert.Equal(t, 0, p.exit())

	// With a --models scope and no --model, its first entry (with its
	// level) when the default model is not in it.
	p = startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--models", "scripted/scripted-1:minimal")
	m, l = modelAndLevel(p, "1")
	assert.Equal(t, "scripted-1", m)
	assert.Equal(t, "minimal", l)
	p.ok("2", map[string]any{"type": "set_model", "provider": "scripted", "modelId": "scripted-2"})
	p.ok("3", map[string]any{"type": "new_session"})
	m, l = modelAndLevel(p, "4")
	assert.Equal(t, "scripted-1", m)
	assert.Equal(t, "minimal", l)
	assert.Equal(t, 0, p.exit())
}
