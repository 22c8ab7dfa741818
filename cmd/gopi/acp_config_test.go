package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The mode and config option tests: modes decide which tools ask for
// permission (and, sandbox_test.go's TestACPModesSetTheSandbox, where
// commands may write); the model and thinking level options switch what
// the next request uses.

// option is the config option id among opts (a response's or an update's
// configOptions); it fails the test when there is none.
func option(t *testing.T, opts any, id string) record {
	t.Helper()
	list, _ := opts.([]any)
	for _, o := range list {
		if r := record(o.(map[string]any)); r.str("id") == id {
			return r
		}
	}
	t.Fatalf("no config option %q in %v", id, opts)
	return nil
}

// values are a select option's value ids.
func values(o record) []string {
	var out []string
	for _, v := range o["options"].([]any) {
		out = append(out, record(v.(map[string]any)).str("value"))
	}
	return out
}

func (p *aproc) setOption(s, id string, value any) float64 {
	p.t.Helper()
	return p.request("session/set_config_option", map[string]any{"sessionId": s, "configId": id, "value": value})
}

// asks reports whether the prompt text raises a permission question; it
// answers it allow_once and waits for the prompt's answer.
func (p *aproc) asks(s, text string) bool {
	p.t.Helper()
	id := p.prompt(s, text)
	for {
		r := p.frame()
		switch {
		case r.str("method") == "session/request_permission":
			p.choose(r, "allow_once")
			_, res := p.result(id)
			assert.Equal(p.t, "end_turn", res.str("stopReason"))
			return true
		case r.str("method") == "session/update":
		default:
			require.Equal(p.t, id, r["id"], "%s", p.transcript())
			assert.Equal(p.t, "end_turn", r.obj("result").str("stopReason"))
			return false
		}
	}
}

func TestACPModes(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("a\n"), 0o644))
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	require.EqualValues(t, 1, res["protocolVersion"])
	_, res = p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}))
	s := res.str("sessionId")
	modes := res.obj("modes")
	assert.Equal(t, "auto", modes.str("currentModeId"), "ACP's defaults: the sandbox workspace-write, asking only to step out")
	var ids []string
	for _, m := range modes["availableModes"].([]any) {
		ids = append(ids, record(m.(map[string]any)).str("id"))
	}
	assert.Equal(t, []string{"read-only", "auto", "writes", "all", "off", "full-access"}, ids)
	mode := option(t, res["configOptions"], "mode")
	assert.Equal(t, "mode", mode.str("category"))
	assert.Equal(t, "auto", mode.str("currentValue"))
	assert.Equal(t, ids, values(mode))

	assert.False(t, p.asks(s, "bash: echo a"), "nothing asked before a call")

	// set_mode says the new mode as current_mode_update and the options
	// as config_option_update.
	ups, _ := p.result(p.request("session/set_mode", map[string]any{"sessionId": s, "modeId": "writes"}))
	require.Len(t, ups, 2)
	assert.Equal(t, "current_mode_update", kind(ups[0]))
	assert.Equal(t, "writes", ups[0].obj("params").obj("update").str("currentModeId"))
	assert.Equal(t, "config_option_update", kind(ups[1]))
	assert.Equal(t, "writes", option(t, ups[1].obj("params").obj("update")["configOptions"], "mode").str("currentValue"))
	assert.True(t, p.asks(s, "bash: echo b"), "bash asks under writes")
	assert.False(t, p.asks(s, "read: a.txt"), "reading does not")

	// The mode option does the same.
	ups, res = p.result(p.setOption(s, "mode", "all"))
	require.Len(t, ups, 1)
	assert.Equal(t, "all", ups[0].obj("params").obj("update").str("currentModeId"))
	assert.Equal(t, "all", option(t, res["configOptions"], "mode").str("currentValue"))
	assert.True(t, p.asks(s, "read: a.txt"), "every tool asks under all")
	_, res = p.result(p.setOption(s, "mode", "off"))
	assert.Equal(t, "off", option(t, res["configOptions"], "mode").str("currentValue"))
	assert.False(t, p.asks(s, "bash: echo c"))

	// Setting the mode it has changes nothing and says nothing.
	ups, _ = p.result(p.request("session/set_mode", map[string]any{"sessionId": s, "modeId": "off"}))
	assert.Empty(t, ups)
	assert.Equal(t, 0, p.exit())
}

func TestACPModelAndThinking(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--approval", "writes")
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	require.EqualValues(t, 1, res["protocolVersion"])
	_, res = p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}))
	s := res.str("sessionId")
	model := option(t, res["configOptions"], "model")
	assert.Equal(t, "model", model.str("category"))
	assert.Equal(t, "faux/faux-fast", model.str("currentValue"))
	assert.Contains(t, values(model), "faux/faux-1")
	thought := option(t, res["configOptions"], "thought_level")
	assert.Equal(t, "thought_level", thought.str("category"))
	assert.Equal(t, []string{"off"}, values(thought), "faux-fast does not reason")

	// faux-1 reasons: its levels are offered, and with one above off
	// the next reply thinks.
	_, res = p.result(p.setOption(s, "model", "faux/faux-1"))
	assert.Equal(t, "faux/faux-1", option(t, res["configOptions"], "model").str("currentValue"))
	assert.Contains(t, values(option(t, res["configOptions"], "thought_level")), "high")
	_, res = p.result(p.setOption(s, "thought_level", "high"))
	assert.Equal(t, "high", option(t, res["configOptions"], "thought_level").str("currentValue"))
	ups, _ := p.result(p.prompt(s, "reply: hi"))
	assert.NotEmpty(t, chunks(ups, "agent_thought_chunk"), "faux-1 thinks at high")
	assert.Equal(t, "hi", chunks(ups, "agent_message_chunk"))

	_, res = p.result(p.setOption(s, "thought_level", "off"))
	assert.Equal(t, "off", option(t, res["configOptions"], "thought_level").str("currentValue"))
	ups, _ = p.result(p.prompt(s, "reply: hi"))
	assert.Empty(t, chunks(ups, "agent_thought_chunk"), "not at off")

	// The older session/set_model: the options follow in an update.
	ups, res = p.result(p.request("session/set_model", map[string]any{"sessionId": s, "modelId": "faux/faux-fast"}))
	assert.Empty(t, res)
	require.Len(t, ups, 1)
	assert.Equal(t, "config_option_update", kind(ups[0]))
	assert.Equal(t, "faux/faux-fast", option(t, ups[0].obj("params").obj("update")["configOptions"], "model").str("currentValue"))

	// session/resume of the open session answers its modes and options
	// as they are now.
	p.result(p.setOption(s, "mode", "all"))
	_, res = p.result(p.request("session/resume", map[string]any{"sessionId": s, "cwd": cwd}))
	assert.Equal(t, "all", res.obj("modes").str("currentModeId"))
	assert.Equal(t, "faux/faux-fast", option(t, res["configOptions"], "model").str("currentValue"))

	// Errors name what is wrong.
	for _, c := range []struct {
		params map[string]any
		code   float64
		want   string
	}{
		{map[string]any{"sessionId": s, "configId": "colour", "value": "red"}, -32602, `"configId" "colour"`},
		{map[string]any{"sessionId": s, "configId": "model", "value": "faux/nope"}, -32602, `"value" "faux/nope"`},
		{map[string]any{"sessionId": s, "configId": "thought_level", "value": "high"}, -32602, `"value" "high"`},
		{map[string]any{"sessionId": s, "configId": "mode", "value": "ask"}, -32602, `"value" "ask"`},
		{map[string]any{"sessionId": s, "configId": "mode", "type": "boolean", "value": true}, -32602, `"value"`},
		{map[string]any{"sessionId": s, "configId": "mode"}, -32602, `"value"`},
		{map[string]any{"sessionId": "nope", "configId": "mode", "value": "off"}, -32002, "nope"},
	} {
		e := p.failure(p.request("session/set_config_option", c.params))
		assert.Equal(t, c.code, e["code"], "%v", c.params)
		assert.Contains(t, e.str("message"), c.want, "%v", c.params)
	}
	e := p.failure(p.request("session/set_model", map[string]any{"sessionId": s, "modelId": "faux/nope"}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"modelId" "faux/nope"`)
	assert.Equal(t, 0, p.exit())
}
