package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

// The client's MCP servers (mcpServers of session/new, load and resume):
// connected for that session alone, their tools declared to the model,
// stopped with the session.

// initNotices initializes as a client that takes notice updates; it
// returns the agent's capabilities.
func (p *aproc) initNotices() record {
	p.t.Helper()
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"session": map[string]any{"notices": map[string]any{}}}}))
	return res.obj("agentCapabilities")
}

// toolResult is the text of the completed or failed update of the call
// of tool among a prompt's updates, and its status.
func toolResult(t *testing.T, p *aproc, ups []record, tool string) (status, text string) {
	t.Helper()
	var id string
	for _, u := range ups {
		up := upd(u)
		switch {
		case kind(u) == "tool_call" && up.str("title") == tool:
			id = up.str("toolCallId")
		case kind(u) == "tool_call_update" && id != "" && up.str("toolCallId") == id &&
			(up.str("status") == "completed" || up.str("status") == "failed"):
			content, _ := up["content"].([]any)
			if len(content) > 0 {
				text = record(content[0].(map[string]any)).obj("content").str("text")
			}
			return up.str("status"), text
		}
	}
	t.Fatalf("no finished call of %s\n%s", tool, p.transcript())
	return "", ""
}

// noticeTitles are the titles of the notice updates among ups.
func noticeTitles(ups []record) []string {
	var out []string
	for _, u := range ups {
		if kind(u) == "notice" {
			out = append(out, upd(u).str("title")+": "+upd(u).str("description"))
		}
	}
	return out
}

// A stdio server of the client: its tool is called and answers; it
// replaces mcp.json's server of the same name for the session; a server
// that cannot start is a notice (the client takes them) and the session
// goes on; the server stops at session/close, starts again for
// session/load, and stops when stdin ends.
func TestACPClientMCPServers(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	cwd, agentDir := t.TempDir(), t.TempDir()
	// pi's own "test" would fail: the client's of that name wins.
	writeFile(t, filepath.Join(agentDir, "mcp.json"), `{"mcpServers": {"test": {"command": "sh", "args": ["-c", "exit 3"], "exposure": "direct"}}}`)
	pidFile := filepath.Join(t.TempDir(), "pid")
	servers := []any{
		map[string]any{"name": "test", "command": bin, "args": []string{"-pidfile", pidFile},
			"env": []any{map[string]any{"name": "GOPI_TEST_VALUE", "value": "$HOME"}}},
		map[string]any{"name": "broken", "command": filepath.Join(t.TempDir(), "no-such-server"), "args": []string{}, "env": []any{}},
	}
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	caps := p.initNotices()
	assert.Equal(t, true, caps.obj("mcpCapabilities")["http"], "http servers are advertised")
	assert.NotEqual(t, true, caps.obj("mcpCapabilities")["sse"], "sse is not")

	_, res := p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": servers}))
	sid := res.str("sessionId")
	ups, res := p.result(p.prompt(sid, `call: mcp__test__echo {"text": "hello"}`))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	status, text := toolResult(t, p, ups, "mcp__test__echo")
	assert.Equal(t, "completed", status, p.transcript())
	assert.Equal(t, "echo: hello", text)
	first := testenv.ReadPID(t, pidFile)
	require.True(t, testenv.Alive(first))

	// The broken server is said once, in a notice of the first prompt
	// (or of the next, should it settle later).
	said := noticeTitles(ups)
	if len(said) == 0 {
		ups, _ = p.result(p.prompt(sid, "hi"))
		said = noticeTitles(ups)
	}
	require.Len(t, said, 1, p.transcript())
	assert.Contains(t, said[0], `MCP server "broken" did not start`)
	ups, _ = p.result(p.prompt(sid, "hi again"))
	assert.Empty(t, noticeTitles(ups), "a failure is said once")

	// session/close stops the client's servers before it answers.
	p.result(p.request("session/close", map[string]any{"sessionId": sid}))
	assert.False(t, testenv.Alive(first), "the MCP server %d outlived session/close", first)
	require.NoError(t, os.Remove(pidFile))

	// session/load connects the servers it is given.
	ups, _ = p.result(p.request("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": servers[:1]}))
	assert.NotEmpty(t, ups, "the history is replayed")
	ups, _ = p.result(p.prompt(sid, `call: mcp__test__echo {"text": "again"}`))
	_, text = toolResult(t, p, ups, "mcp__test__echo")
	assert.Equal(t, "echo: again", text)
	second := testenv.ReadPID(t, pidFile)
	assert.NotEqual(t, first, second)

	assert.Equal(t, 0, p.exit())
	assert.False(t, testenv.Alive(second), "the MCP server %d outlived gopi", second)
	stderr := p.stderr.String()
	assert.Contains(t, stderr, `the client's MCP server "test" replaces "test"`)
	assert.Contains(t, stderr, `mcp server "broken"`, "the failure is on stderr too")
}

// An http server of the client gets its headers as written: a client's
// values are not expanded as mcp.json's are. Without the notices
// capability a server that fails is on stderr only.
func TestACPClientMCPServerHTTP(t *testing.T) {
	t.Parallel()
	url := mcpHTTPServer(t)

	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	p.initialized()
	_, res := p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{
		map[string]any{"type": "http", "name": "web", "url": url,
			"headers": []any{map[string]any{"name": "X-Token", "value": "$HOME and ${HOME}"}}},
		map[string]any{"type": "http", "name": "down", "url": "http://127.0.0.1:1/mcp", "headers": []any{}},
	}}))
	sid := res.str("sessionId")
	ups, _ := p.result(p.prompt(sid, `call: mcp__web__header {"name": "X-Token"}`))
	status, text := toolResult(t, p, ups, "mcp__web__header")
	assert.Equal(t, "completed", status, p.transcript())
	assert.Equal(t, "$HOME and ${HOME}", text)
	assert.Empty(t, noticeTitles(ups), "no notices for a client that did not ask for them")
	assert.Equal(t, 0, p.exit())
	assert.Contains(t, p.stderr.String(), `mcp server "down"`)
}

// Bad mcpServers are -32602 naming the field; the connection goes on.
func TestACPClientMCPServersBadInput(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	p.initialized()
	for _, tc := range []struct {
		servers any
		want    string
	}{
		{"stdio", `"mcpServers" must be an array`},
		{[]any{"x"}, `"mcpServers[0]" must be an object`},
		{[]any{map[string]any{"command": "x", "args": []any{}, "env": []any{}}}, `mcpServers[0] needs "name"`},
		{[]any{map[string]any{"name": "a", "args": []any{}, "env": []any{}}}, `mcpServers[0] needs "command"`},
		{[]any{map[string]any{"name": "a", "command": "x", "args": []any{1}, "env": []any{}}}, `"mcpServers[0].args" must be an array of strings`},
		{[]any{map[string]any{"name": "a", "command": "x", "args": []any{}, "env": []any{map[string]any{"name": "K"}}}}, `"mcpServers[0].env[0]" must be {"name": string, "value": string}`},
		{[]any{map[string]any{"type": "http", "name": "a", "headers": []any{}}}, `mcpServers[0] needs "url"`},
		{[]any{map[string]any{"type": "http", "name": "a", "url": "ftp://x", "headers": []any{}}}, `"mcpServers[0]"`},
		{[]any{map[string]any{"type": "sse", "name": "a", "url": "http://x", "headers": []any{}}}, `"mcpServers[0].type": gopi does not connect sse`},
		{[]any{
			map[string]any{"name": "a-b", "command": "x", "args": []any{}, "env": []any{}},
			map[string]any{"name": "a_b", "command": "y", "args": []any{}, "env": []any{}},
		}, `"mcpServers[1].name" "a_b" clashes with mcpServers[0]'s "a-b"`},
	} {
		e := p.failure(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": tc.servers}))
		assert.EqualValues(t, -32602, e["code"], "%v", tc.servers)
		assert.Contains(t, e.str("message"), tc.want)
	}
	p.newSession(cwd)
	assert.Equal(t, 0, p.exit())
}

// mcp.json's servers start once for a session: --mode acp builds no host
// besides the sessions' own, so nothing else starts a copy of them.
func TestACPStartsConfiguredServerOnce(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	cwd, agentDir, dir := t.TempDir(), t.TempDir(), t.TempDir()
	starts, pidFile := filepath.Join(dir, "starts"), filepath.Join(dir, "pid")
	// The wrapper notes each start, then becomes the server (same pid).
	wrapper := filepath.Join(dir, "server.sh")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\necho $$ >> '"+starts+"'\nexec '"+bin+"' \"$@\"\n"), 0o755))
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"alpha": map[string]any{"command": wrapper, "args": []string{"-pidfile", pidFile}, "exposure": "direct"},
	}})
	require.NoError(t, err)
	writeFile(t, filepath.Join(agentDir, "mcp.json"), string(b))
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	p.started(cwd)
	pid := testenv.WaitPID(t, pidFile, waitLimit)
	// Every start gopi began has happened once it has exited.
	require.Equal(t, 0, p.exit())
	log, err := os.ReadFile(starts)
	require.NoError(t, err)
	assert.Equal(t, []string{strconv.Itoa(pid)}, strings.Fields(string(log)), "starts of alpha for one session/new")
}
