package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ACP session lifecycle: sessions are pi session files, loaded,
// resumed, listed, closed and deleted across gopi processes.

// upd is a session/update's update.
func upd(r record) record { return r.obj("params").obj("update") }

// initialized sends initialize and returns its agentCapabilities.
func (p *aproc) initialized() record {
	p.t.Helper()
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	return res.obj("agentCapabilities")
}

// sessionFiles are the session files under agentDir.
func sessionFiles(t *testing.T, agentDir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(agentDir, "sessions", "*", "*.jsonl"))
	require.NoError(t, err)
	return files
}

// replayed summarises a replay: each update as its kind, with the text
// or title it carries.
func replayed(ups []record) []string {
	var out []string
	for _, r := range ups {
		u := upd(r)
		switch k := u.str("sessionUpdate"); k {
		case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
			out = append(out, k+" "+u.obj("content").str("text"))
		case "tool_call":
			out = append(out, k+" "+u.str("kind")+" "+u.str("title"))
		case "tool_call_update":
			text := ""
			if c, ok := u["content"].([]any); ok && len(c) > 0 {
				text = " " + strings.TrimSpace(record(c[0].(map[string]any)).obj("content").str("text"))
			}
			out = append(out, k+" "+u.str("status")+text)
		default:
			out = append(out, k)
		}
	}
	return out
}

func TestACPLoadReplaysAndContinuesInAnotherProcess(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "note.txt"), []byte("hello from the file\n"), 0o644))

	// Started over ACP in one gopi.
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-1", "--thinking", "low")
	caps := p.initialized()
	assert.Equal(t, true, caps["loadSession"])
	assert.NotNil(t, caps.obj("sessionCapabilities")["resume"])
	id := p.newSession(cwd)
	_, res := p.result(p.prompt(id, "think: weighing the options"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	ups, res := p.result(p.prompt(id, "bash: cat note.txt"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	var callID string
	for _, u := range ups {
		if kind(u) == "tool_call" {
			callID = upd(u).str("toolCallId")
		}
	}
	require.NotEmpty(t, callID)
	require.Equal(t, 0, p.exit())
	files := sessionFiles(t, agentDir)
	require.Len(t, files, 1)

	// Loaded in another: the whole history comes before the answer.
	q := startACP(t, cwd, agentDir, "--model", "faux/faux-1", "--thinking", "low")
	q.initialized()
	ups, _ = q.result(q.request("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}))
	for _, u := range ups {
		assert.Equal(t, id, u.obj("params").str("sessionId"))
	}
	got := replayed(ups)
	// The faux model thinks before its tool calls too.
	want := []string{
		"user_message_chunk think: weighing the options",
		"agent_thought_chunk weighing the options",
		"agent_message_chunk Done thinking.",
		"user_message_chunk bash: cat note.txt",
		"agent_thought_chunk ",
		"tool_call execute cat note.txt",
		"tool_call_update completed hello from the file",
		"agent_message_chunk Tool said: hello from the file",
	}
	require.Len(t, got, len(want), "%q", got)
	for i, w := range want {
		assert.True(t, strings.HasPrefix(got[i], w), "update %d is %q, not %q", i, got[i], w)
	}
	call := upd(ups[5])
	assert.Equal(t, callID, call.str("toolCallId"), "the tool call keeps its id")
	assert.Equal(t, "cat note.txt", call.obj("rawInput").str("command"))
	assert.Equal(t, "pending", call.str("status"))
	assert.Equal(t, callID, upd(ups[6]).str("toolCallId"))

	// A new prompt continues the same session, in the same file.
	ups, res = q.result(q.prompt(id, "reply: continued here"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Equal(t, "continued here", chunks(ups, "agent_message_chunk"))
	require.Equal(t, 0, q.exit())
	assert.Equal(t, files, sessionFiles(t, agentDir), "no new session file")
	raw, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Contains(t, string(raw), "weighing the options")
	assert.Contains(t, string(raw), "continued here")
}

func TestACPLoadsASessionOfRPCMode(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "note.txt"), []byte("hello from the file\n"), 0o644))
	r := startProc(t, cwd, agentDir, "--mode", "rpc", "--model", "faux/faux-fast")
	r.ok("1", map[string]any{"type": "prompt", "message": "read: missing.txt"})
	r.idle()
	r.ok("2", map[string]any{"type": "prompt", "message": "bash: cat note.txt"})
	r.idle()
	id := r.state("3")["sessionId"].(string)
	require.Equal(t, 0, r.exit())

	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	p.initialized()
	ups, _ := p.result(p.request("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}))
	got := replayed(ups)
	require.GreaterOrEqual(t, len(got), 8, "%q", got)
	assert.Equal(t, "user_message_chunk read: missing.txt", got[0])
	assert.Equal(t, "tool_call read Read missing.txt", got[1])
	assert.Contains(t, got[2], "tool_call_update failed")
	assert.Contains(t, got, "user_message_chunk bash: cat note.txt")
	assert.Contains(t, got, "tool_call execute cat note.txt")
	assert.Contains(t, got, "tool_call_update completed hello from the file")
	ups, res := p.result(p.prompt(id, "reply: and on"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Equal(t, "and on", chunks(ups, "agent_message_chunk"))
	assert.Equal(t, 0, p.exit())
}

func TestACPLoadAndResumeRefusals(t *testing.T) {
	t.Parallel()
	cwd, other, agentDir := t.TempDir(), t.TempDir(), t.TempDir()
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	id := p.started(cwd)
	_, res := p.result(p.prompt(id, "reply: stored"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	require.Equal(t, 0, p.exit())

	q := startACP(t, other, agentDir, "--model", "faux/faux-fast")
	q.initialized()
	// Another directory's session: the spec has the cwd match.
	e := q.failure(q.request("session/load", map[string]any{"sessionId": id, "cwd": other, "mcpServers": []any{}}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), cwd, "says whose session it is")
	e = q.failure(q.request("session/resume", map[string]any{"sessionId": id, "cwd": other}))
	assert.EqualValues(t, -32602, e["code"])
	// No such session.
	e = q.failure(q.request("session/load", map[string]any{"sessionId": "no-such-session", "cwd": cwd, "mcpServers": []any{}}))
	assert.EqualValues(t, -32002, e["code"])
	e = q.failure(q.request("session/load", map[string]any{"sessionId": id, "cwd": cwd}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"mcpServers"`)
	e = q.failure(q.request("session/resume", map[string]any{"sessionId": id, "cwd": "relative"}))
	assert.EqualValues(t, -32602, e["code"])

	// Resume: the session, without its history.
	ups, _ := q.result(q.request("session/resume", map[string]any{"sessionId": id, "cwd": cwd}))
	assert.Empty(t, ups, "session/resume replays nothing")
	ups, res = q.result(q.prompt(id, "reply: resumed"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Equal(t, "resumed", chunks(ups, "agent_message_chunk"))
	// Loading it now replays from the open session, the new turn too.
	ups, _ = q.result(q.request("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}))
	assert.Equal(t, []string{
		"user_message_chunk reply: stored", "agent_message_chunk stored",
		"user_message_chunk reply: resumed", "agent_message_chunk resumed",
	}, replayed(ups))
	assert.Equal(t, 0, q.exit())
	assert.Len(t, sessionFiles(t, agentDir), 1)

	// Deleted from a gopi where it is not open.
	d := startACP(t, other, agentDir, "--model", "faux/faux-fast")
	d.initialized()
	_, _ = d.result(d.request("session/delete", map[string]any{"sessionId": id}))
	assert.Empty(t, sessionFiles(t, agentDir))
	ids, _ := d.listed(map[string]any{})
	assert.Empty(t, ids)
	assert.Equal(t, 0, d.exit())
}

// listed is session/list's sessions, by id.
func (p *aproc) listed(params map[string]any) (ids []string, byID map[string]record) {
	p.t.Helper()
	_, res := p.result(p.request("session/list", params))
	byID = map[string]record{}
	for _, s := range res["sessions"].([]any) {
		r := record(s.(map[string]any))
		ids = append(ids, r.str("sessionId"))
		byID[r.str("sessionId")] = r
	}
	return ids, byID
}

func TestACPListCloseDelete(t *testing.T) {
	t.Parallel()
	cwd, other, agentDir := t.TempDir(), t.TempDir(), t.TempDir()
	// A session of pi's RPC mode, named there.
	r := startProc(t, cwd, agentDir, "--mode", "rpc", "--model", "faux/faux-fast")
	r.ok("1", map[string]any{"type": "prompt", "message": "reply: from rpc"})
	r.idle()
	r.ok("2", map[string]any{"type": "set_session_name", "name": "The named one"})
	named := r.state("3")["sessionId"].(string)
	require.Equal(t, 0, r.exit())

	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	caps := p.initialized().obj("sessionCapabilities")
	for _, c := range []string{"list", "close", "delete", "resume"} {
		assert.NotNil(t, caps[c], "sessionCapabilities.%s", c)
	}
	a := p.newSession(cwd)
	_, res := p.result(p.prompt(a, "reply: first line\nsecond line"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	b := p.newSession(cwd)
	_, res = p.result(p.prompt(b, "reply: bee"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	c := p.newSession(other)
	_, res = p.result(p.prompt(c, "reply: elsewhere"))
	require.Equal(t, "end_turn", res.str("stopReason"))

	ids, byID := p.listed(map[string]any{"cwd": cwd})
	assert.Equal(t, []string{b, a, named}, ids, "the cwd's sessions, newest first")
	assert.Equal(t, "The named one", byID[named].str("title"), "a named session is titled by its name")
	assert.Equal(t, "reply: first line", byID[a].str("title"), "else by its first user message's first line")
	assert.Equal(t, cwd, byID[a].str("cwd"))
	assert.NotEmpty(t, byID[a].str("updatedAt"))
	ids, _ = p.listed(map[string]any{})
	assert.ElementsMatch(t, []string{a, b, c, named}, ids, "without a cwd, every directory's")
	assert.Equal(t, c, ids[0])
	e := p.failure(p.request("session/list", map[string]any{"cursor": "not-ours"}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"cursor"`)
	e = p.failure(p.request("session/list", map[string]any{"cwd": "relative"}))
	assert.EqualValues(t, -32602, e["code"])

	// Closing a session cancels its run, answers its prompt, then
	// itself; the session is gone from the connection, its file stays.
	id := p.prompt(a, "bash: sleep 60")
	for {
		if u := upd(p.frame()); u.str("sessionUpdate") == "tool_call_update" && u.str("status") == "in_progress" {
			break
		}
	}
	closing := p.request("session/close", map[string]any{"sessionId": a})
	_, res = p.result(id)
	assert.Equal(t, "cancelled", res.str("stopReason"))
	ups, _ := p.result(closing)
	assert.Empty(t, ups)
	e = p.failure(p.prompt(a, "reply: after close"))
	assert.EqualValues(t, -32002, e["code"])
	e = p.failure(p.request("session/close", map[string]any{"sessionId": a}))
	assert.EqualValues(t, -32002, e["code"])
	ids, _ = p.listed(map[string]any{"cwd": cwd})
	assert.Contains(t, ids, a, "a closed session's file stays")
	// And it can be loaded again.
	ups, _ = p.result(p.request("session/load", map[string]any{"sessionId": a, "cwd": cwd, "mcpServers": []any{}}))
	assert.Equal(t, "user_message_chunk reply: first line\nsecond line", replayed(ups)[0])

	// A named session's load begins with its title.
	ups, _ = p.result(p.request("session/load", map[string]any{"sessionId": named, "cwd": cwd, "mcpServers": []any{}}))
	require.Equal(t, []string{"session_info_update", "user_message_chunk reply: from rpc", "agent_message_chunk from rpc"}, replayed(ups))
	assert.Equal(t, "The named one", upd(ups[0]).str("title"))

	// Deleting a session open here closes it and removes its file.
	_, _ = p.result(p.request("session/delete", map[string]any{"sessionId": b}))
	e = p.failure(p.prompt(b, "reply: after delete"))
	assert.EqualValues(t, -32002, e["code"])
	// And the named one, open here now too.
	_, _ = p.result(p.request("session/delete", map[string]any{"sessionId": named}))
	ids, _ = p.listed(map[string]any{"cwd": cwd})
	assert.Equal(t, []string{a}, ids)
	e = p.failure(p.request("session/delete", map[string]any{"sessionId": named}))
	assert.EqualValues(t, -32002, e["code"])
	e = p.failure(p.request("session/load", map[string]any{"sessionId": b, "cwd": cwd, "mcpServers": []any{}}))
	assert.EqualValues(t, -32002, e["code"])
	assert.Equal(t, 0, p.exit())
	assert.Len(t, sessionFiles(t, agentDir), 2, "a's and c's files")
}

// Issue 31: deleting a session removes its checkpoints too: their refs in
// the project's repository, and its edit journal outside git.
func TestACPDeleteForgetsCheckpoints(t *testing.T) {
	t.Parallel()
	repo, plain, agentDir := t.TempDir(), t.TempDir(), t.TempDir()
	gitIn(t, repo, "init", "-q")
	p := startACP(t, repo, agentDir, "--model", "faux/faux-fast")
	p.initialized()
	a := p.newSession(repo)
	_, res := p.result(p.prompt(a, "write: a.txt :: hello"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	b := p.newSession(plain)
	_, res = p.result(p.prompt(b, "write: b.txt :: hello"))
	require.Equal(t, "end_turn", res.str("stopReason"))
	assert.NotEmpty(t, strings.TrimSpace(gitIn(t, repo, "for-each-ref", "refs/gopi/checkpoints/"+a+"/")))
	assert.DirExists(t, filepath.Join(agentDir, "checkpoints", b), "the journal of the session outside git")

	_, _ = p.result(p.request("session/delete", map[string]any{"sessionId": a}))
	_, _ = p.result(p.request("session/delete", map[string]any{"sessionId": b}))
	assert.Empty(t, strings.TrimSpace(gitIn(t, repo, "for-each-ref", "refs/gopi/")))
	assert.NoDirExists(t, filepath.Join(agentDir, "checkpoints", b))
	assert.Equal(t, 0, p.exit())
}
