package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/internal/testenv"
)

// What users of other ACP adapters complain about, where no other test
// already shows what gopi does (docs/acp.md, "The complaints").

// "Cancel is ignored, or the session is wedged after it": a cancel that
// arrives while the model streams (not while a tool runs, which
// TestACPCancel covers) answers cancelled, and the next prompt of the
// same session runs and streams.
func TestACPCancelWhileTheModelStreams(t *testing.T) {
	t.Parallel()
	stalled := llmtest.Text("the first words and then nothing")
	stalled.Fault = &llmtest.Fault{StallAfter: 5} // after two deltas (start, ping, block start)
	w := newWorld(t, stalled, llmtest.Text("back again"))
	p := startACP(t, w.cwd, w.agentDir, "--model", "scripted/scripted-2", "--no-session")
	s := p.started(w.cwd)
	id := p.prompt(s, "talk")
	for {
		r := p.frame()
		require.Equal(t, "session/update", r.str("method"), "the prompt answered before it streamed\n%s", p.transcript())
		if kind(r) == "agent_message_chunk" {
			break
		}
	}
	p.notify("session/cancel", map[string]any{"sessionId": s})
	ups, res := p.result(id)
	assert.Equal(t, "cancelled", res.str("stopReason"))
	for _, u := range ups {
		assert.Contains(t, []string{"agent_message_chunk", "usage_update"}, kind(u))
	}

	ups, res = p.result(p.prompt(s, "again"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Equal(t, "back again", chunks(ups, "agent_message_chunk"))
	assert.Greater(t, len(ups), 2, "the reply streams in several chunks")
	require.Len(t, w.srv.Requests(), 2)
	// Nothing of either prompt follows its answer.
	e := p.failure(p.request("no/such", map[string]any{}))
	assert.EqualValues(t, -32601, e["code"])
	assert.Equal(t, 0, p.exit())
}

// A model that declines to answer (Anthropic's stop_reason refusal) ends
// the prompt with the spec's refusal, not a JSON-RPC error; the session
// goes on.
func TestACPRefusal(t *testing.T) {
	t.Parallel()
	refused := llmtest.Text("I can't help with that.")
	refused.StopReason = "refusal"
	w := newWorld(t, refused, llmtest.Text("fine"))
	p := startACP(t, w.cwd, w.agentDir, "--model", "scripted/scripted-2", "--no-session")
	s := p.started(w.cwd)
	ups, res := p.result(p.prompt(s, "something it declines"))
	assert.Equal(t, "refusal", res.str("stopReason"), p.transcript())
	assert.Equal(t, "I can't help with that.", chunks(ups, "agent_message_chunk"))

	_, res = p.result(p.prompt(s, "something else"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Equal(t, 0, p.exit())
}

// gatedServer is an MCP server command that writes its pid to pidFile,
// then says nothing (not even to initialize) until gate exists, then
// runs the repository's MCP test server: a server slow to start.
func gatedServer(t *testing.T, pidFile, gate string) (string, []string) {
	t.Helper()
	script := `echo $$ > "$0"; while [ ! -e "$1" ]; do sleep 0.05; done; exec "$2" -pidfile "$0"`
	return "sh", []string{"-c", script, pidFile, gate, mcpServerBinary(t)}
}

// waitFile waits until the pid file at path holds a number (a child got
// that far).
func waitFile(t *testing.T, p *aproc, path string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		// The server creates its pid file before it writes the number.
		if b, err := os.ReadFile(path); err == nil {
			if _, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared\n%s", path, p.transcript())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mcpConfig is an mcp.json with one direct server.
func mcpConfig(t *testing.T, name, command string, args []string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		name: map[string]any{"command": command, "args": args, "exposure": "direct"},
	}})
	require.NoError(t, err)
	return string(b)
}

// "Spawn hangs": initialize and session/new do not wait for MCP servers.
// Both the agent dir's mcp.json server and the client's are started and
// say nothing until the session is open; once they answer, their tools
// work in the same session.
func TestACPSessionNewDoesNotWaitForMCPServers(t *testing.T) {
	t.Parallel()
	cwd, agentDir, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	gate := filepath.Join(tmp, "gate")
	ownPID, lentPID := filepath.Join(tmp, "own.pid"), filepath.Join(tmp, "lent.pid")
	cmd, args := gatedServer(t, ownPID, gate)
	writeFile(t, filepath.Join(agentDir, "mcp.json"), mcpConfig(t, "own", cmd, args))
	cmd, args = gatedServer(t, lentPID, gate)
	lent := []any{map[string]any{"name": "lent", "command": cmd, "args": args, "env": []any{}}}

	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast", "--no-session")
	p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	_, res := p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": lent}))
	s := res.str("sessionId")
	p.commandsOf(s)
	// Both servers were started and are still silent: the gate is shut.
	waitFile(t, p, ownPID)
	waitFile(t, p, lentPID)
	_, err := os.Stat(gate)
	require.True(t, os.IsNotExist(err))

	writeFile(t, gate, "")
	for _, tool := range []string{"mcp__own__echo", "mcp__lent__echo"} {
		ups, res := p.result(p.prompt(s, `call: `+tool+` {"text": "late"}`))
		assert.Equal(t, "end_turn", res.str("stopReason"))
		status, text := toolResult(t, p, ups, tool)
		assert.Equal(t, "completed", status, p.transcript())
		assert.Equal(t, "echo: late", text)
	}
	pids := []int{testenv.ReadPID(t, ownPID), testenv.ReadPID(t, lentPID)}
	assert.Equal(t, 0, p.exit())
	for _, pid := range pids {
		assert.False(t, testenv.Alive(pid), "the MCP server %d outlived gopi", pid)
	}
}

// "Spawn hangs", at the end: stdin's end right after initialize, or right
// after session/new while MCP servers never answer, is a clean exit that
// leaves no server behind.
func TestACPStdinEndWhileMCPServersHang(t *testing.T) {
	t.Parallel()
	cwd, tmp := t.TempDir(), t.TempDir()
	never := filepath.Join(tmp, "never")
	serving := func(pidFile string) string {
		agentDir := t.TempDir()
		cmd, args := gatedServer(t, pidFile, never)
		writeFile(t, filepath.Join(agentDir, "mcp.json"), mcpConfig(t, "own", cmd, args))
		return agentDir
	}

	p := startACP(t, cwd, serving(filepath.Join(tmp, "first.pid")), "--model", "faux/faux-fast", "--no-session")
	p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	assert.Equal(t, 0, p.exit(), "stdin's end right after initialize")

	ownPID, lentPID := filepath.Join(tmp, "own.pid"), filepath.Join(tmp, "lent.pid")
	cmd, args := gatedServer(t, lentPID, never)
	p = startACP(t, cwd, serving(ownPID), "--model", "faux/faux-fast", "--no-session")
	p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{
		map[string]any{"name": "lent", "command": cmd, "args": args, "env": []any{}},
	}}))
	waitFile(t, p, ownPID)
	waitFile(t, p, lentPID)
	pids := []int{testenv.ReadPID(t, ownPID), testenv.ReadPID(t, lentPID)}
	assert.Equal(t, 0, p.exit(), "stdin's end while the servers hang")
	for _, pid := range pids {
		assert.False(t, testenv.Alive(pid), "the MCP server %d outlived gopi", pid)
	}
}
