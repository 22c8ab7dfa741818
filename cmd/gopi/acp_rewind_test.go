package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentText joins the agent_message_chunk texts of ups.
func agentText(ups []record) string {
	var b strings.Builder
	for _, u := range ups {
		if kind(u) == "agent_message_chunk" {
			b.WriteString(upd(u).obj("content").str("text"))
		}
	}
	return b.String()
}

// Issue 31 over ACP: /rewind lists the session's checkpoints to a client
// without elicitation, restores the one named (files only, here), and
// says how to undo it.
func TestACPRewindByID(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	gitIn(t, cwd, "init", "-q")
	file := filepath.Join(cwd, "a.txt")
	require.NoError(t, os.WriteFile(file, []byte("one"), 0o644))
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	p.initialized()
	s := p.newSession(cwd)
	assert.Equal(t, "rewind", p.commandsOf(s)["availableCommands"].([]any)[0].(map[string]any)["name"])

	_, res := p.result(p.prompt(s, "write: a.txt :: two"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	data, _ := os.ReadFile(file)
	require.Equal(t, "two", string(data))

	ups, res := p.result(p.prompt(s, "/rewind"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	list := agentText(ups)
	assert.Contains(t, list, "before “write: a.txt :: two”")
	m := regexp.MustCompile("`([0-9a-f]{12})`").FindStringSubmatch(list)
	require.NotNil(t, m, list)
	data, _ = os.ReadFile(file)
	assert.Equal(t, "two", string(data), "listing restores nothing")

	ups, res = p.result(p.prompt(s, "/rewind "+m[1]+" code"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	said := agentText(ups)
	assert.Contains(t, said, "Restored 1 file(s):\n- a.txt (restored)")
	data, _ = os.ReadFile(file)
	assert.Equal(t, "one", string(data))
	undo := regexp.MustCompile("`/rewind ([0-9a-f]{12}) code`").FindStringSubmatch(said)
	require.NotNil(t, undo, said)
	_, res = p.result(p.prompt(s, "/rewind "+undo[1]+" code"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	data, _ = os.ReadFile(file)
	assert.Equal(t, "two", string(data), "the rewind is undone")

	e := p.failure(p.prompt(s, "/rewind abc def"))
	assert.EqualValues(t, -32602, e["code"])
	assert.Equal(t, 0, p.exit())
}

// With form elicitation the client picks the checkpoint and what to
// restore; restoring the conversation moves the session back, which a
// later session/load replays. Cancel while the form is open answers
// cancelled and withdraws it.
func TestACPRewindElicited(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	gitIn(t, cwd, "init", "-q")
	file := filepath.Join(cwd, "a.txt")
	require.NoError(t, os.WriteFile(file, []byte("one"), 0o644))
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	s := p.startedWith(cwd, map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	_, res := p.result(p.prompt(s, "write: a.txt :: two"))
	require.Equal(t, "end_turn", res.str("stopReason"))

	// Cancelled while the form is open.
	id := p.prompt(s, "/rewind")
	_, req := p.asked()
	require.Equal(t, "elicitation/create", req.str("method"))
	p.notify("session/cancel", map[string]any{"sessionId": s})
	_, res, asked := p.served(id, func(string, record) reply { return reply{hold: true} })
	assert.Equal(t, "cancelled", res.obj("result").str("stopReason"), "%v", res)
	require.Len(t, asked, 1)
	assert.Equal(t, "$/cancel_request", asked[0].str("method"))
	data, _ := os.ReadFile(file)
	assert.Equal(t, "two", string(data))

	id = p.prompt(s, "/rewind")
	_, req = p.asked()
	require.Equal(t, "elicitation/create", req.str("method"))
	props := req.obj("params").obj("requestedSchema").obj("properties")
	options := props.obj("checkpoint")["oneOf"].([]any)
	require.Len(t, options, 1)
	first := record(options[0].(map[string]any))
	assert.Contains(t, first.str("title"), "before “write: a.txt :: two”")
	p.write(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{
		"action": "accept", "content": map[string]any{"checkpoint": first.str("const"), "restore": "both"}}})
	ups, res := p.result(id)
	assert.Equal(t, "end_turn", res.str("stopReason"))
	said := agentText(ups)
	assert.Contains(t, said, "> write: a.txt :: two", "the prompt's text, to send again")
	data, _ = os.ReadFile(file)
	assert.Equal(t, "one", string(data))
	assert.Equal(t, 0, p.exit())

	// The conversation is back before that prompt: a load replays none
	// of it.
	q := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	q.initialized()
	ups, _ = q.result(q.request("session/load", map[string]any{"sessionId": s, "cwd": cwd, "mcpServers": []any{}}))
	assert.Empty(t, replayed(ups))
	assert.Equal(t, 0, q.exit())
}
