package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// session/fork (the unstable schema's, which acp.el sends): a new session
// with an id of its own on a copy of the branch, as pi's clone; both go
// on apart, each prompt carrying the shared history and its own turns.
func TestACPForkSharesTheHistoryAndGoesApart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("first answer"), llmtest.Text("original's answer"), llmtest.Text("fork's answer"), llmtest.Text("replayed"))
	p := startACP(t, w.cwd, w.agentDir, "--model", "scripted/scripted-2")
	caps := p.initialized()
	assert.NotNil(t, caps.obj("sessionCapabilities")["fork"], "fork is advertised")
	orig := p.newSession(w.cwd)
	_, _ = p.result(p.prompt(orig, "first question"))

	_, res := p.result(p.request("session/fork", map[string]any{"sessionId": orig, "cwd": w.cwd, "mcpServers": []any{}}))
	fork := res.str("sessionId")
	require.NotEmpty(t, fork)
	assert.NotEqual(t, orig, fork)
	assert.NotNil(t, res["modes"], "answered as session/new is")
	assert.NotEmpty(t, res["configOptions"])
	p.commandsOf(fork)

	_, res = p.result(p.prompt(orig, "to the original"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	ups, res := p.result(p.prompt(fork, "to the fork"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Equal(t, "fork's answer", chunks(ups, "agent_message_chunk"))
	for _, u := range ups {
		assert.Equal(t, fork, u.obj("params").str("sessionId"))
	}

	reqs := w.srv.Requests()
	require.Len(t, reqs, 3)
	toOrig, toFork := string(reqs[1].Body), string(reqs[2].Body)
	for _, shared := range []string{"first question", "first answer"} {
		assert.Contains(t, toOrig, shared)
		assert.Contains(t, toFork, shared, "the fork carries the history")
	}
	assert.Contains(t, toOrig, "to the original")
	assert.NotContains(t, toFork, "to the original", "the original's later turns are not the fork's")

	// Bad forks: an unknown session, another directory.
	e := p.failure(p.request("session/fork", map[string]any{"sessionId": "nope", "cwd": w.cwd}))
	assert.EqualValues(t, -32002, e["code"])
	e = p.failure(p.request("session/fork", map[string]any{"sessionId": orig, "cwd": t.TempDir()}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"cwd"`)
	require.Equal(t, 0, p.exit())

	// Two session files; the fork's names its parent, and loads in
	// another gopi with its own history.
	files := sessionFiles(t, w.agentDir)
	require.Len(t, files, 2)
	var forkFile string
	for _, f := range files {
		if strings.Contains(f, fork) {
			forkFile = f
		}
	}
	require.NotEmpty(t, forkFile)
	raw, err := os.ReadFile(forkFile)
	require.NoError(t, err)
	head, _, _ := strings.Cut(string(raw), "\n")
	assert.Contains(t, head, `"parentSession"`)
	assert.NotContains(t, string(raw), "to the original")

	q := startACP(t, w.cwd, w.agentDir, "--model", "scripted/scripted-2")
	q.initialized()
	ups, _ = q.result(q.request("session/load", map[string]any{"sessionId": fork, "cwd": w.cwd, "mcpServers": []any{}}))
	got := strings.Join(replayed(ups), "\n")
	assert.Contains(t, got, "user_message_chunk first question")
	assert.Contains(t, got, "user_message_chunk to the fork")
	assert.NotContains(t, got, "to the original")
	require.Equal(t, 0, q.exit())
}

// Without stored sessions a fork is a copy in memory; a session that is
// answering a prompt is not forked.
func TestACPForkInMemory(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.started(cwd)
	_, _ = p.result(p.prompt(s, "reply: remembered"))
	_, res := p.result(p.request("session/fork", map[string]any{"sessionId": s, "cwd": cwd}))
	fork := res.str("sessionId")
	p.commandsOf(fork)
	ups, _ := p.result(p.prompt(fork, "reply: still here"))
	assert.Equal(t, "still here", chunks(ups, "agent_message_chunk"))

	id := p.prompt(s, "bash: sleep 60")
	for {
		if u := upd(p.frame()); u.str("status") == "in_progress" {
			break
		}
	}
	e := p.failure(p.request("session/fork", map[string]any{"sessionId": s, "cwd": cwd}))
	assert.EqualValues(t, -32600, e["code"])
	p.notify("session/cancel", map[string]any{"sessionId": s})
	_, res = p.result(id)
	assert.Equal(t, "cancelled", res.str("stopReason"))
	assert.Equal(t, 0, p.exit())
}
