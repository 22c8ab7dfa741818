package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// lastUser is the text and images of the last user message of an
// Anthropic Messages request.
func lastUser(t *testing.T, req llmtest.Request) (text string, images []record) {
	t.Helper()
	msgs, _ := req.JSON()["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := record(msgs[i].(map[string]any))
		if m.str("role") != "user" {
			continue
		}
		content, _ := m["content"].([]any)
		var parts []string
		for _, c := range content {
			b := record(c.(map[string]any))
			switch b.str("type") {
			case "text":
				parts = append(parts, b.str("text"))
			case "image":
				images = append(images, b.obj("source"))
			}
		}
		return strings.Join(parts, "\n"), images
	}
	t.Fatalf("no user message in %s", req.Body)
	return "", nil
}

func TestACPPromptContentReachesTheModel(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("seen"))
	p := startACP(t, w.cwd, w.agentDir, "--model", "scripted/scripted-1", "--no-session")
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	pc := res.obj("agentCapabilities").obj("promptCapabilities")
	assert.Equal(t, true, pc["image"])
	assert.Equal(t, true, pc["embeddedContext"])
	assert.NotEqual(t, true, pc["audio"])
	s := p.newSession(w.cwd)

	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n pixels"))
	jpg := base64.StdEncoding.EncodeToString([]byte("\xff\xd8\xff jpeg"))
	main := filepath.Join(w.cwd, "main.go")
	util := filepath.Join(w.cwd, "util.go")
	ups, r := p.result(p.request("session/prompt", map[string]any{"sessionId": s, "prompt": []any{
		map[string]any{"type": "text", "text": "What is in these?"},
		map[string]any{"type": "image", "data": png, "mimeType": "image/png"},
		map[string]any{"type": "resource_link", "uri": "file://" + main, "name": "main.go"},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + util, "text": "package util // not saved yet\n", "mimeType": "text/x-go"}},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + filepath.Join(w.cwd, "shot.jpg"), "blob": jpg, "mimeType": "image/jpeg"}},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + filepath.Join(w.cwd, "a.bin"), "blob": base64.StdEncoding.EncodeToString(make([]byte, 1000)), "mimeType": "application/octet-stream"}},
	}}))
	assert.Equal(t, "end_turn", r.str("stopReason"))
	assert.Equal(t, "seen", chunks(ups, "agent_message_chunk"))

	reqs := w.srv.Requests()
	require.Len(t, reqs, 1)
	text, images := lastUser(t, reqs[0])
	assert.Contains(t, text, "What is in these?")
	assert.Contains(t, text, "[Linked file: "+main+"]", "a link names the file's path")
	assert.Contains(t, text, "<attached_file path=\""+util+"\">\npackage util // not saved yet\n</attached_file>", "the editor's content, with its path")
	assert.Contains(t, text, "[Attached image: "+filepath.Join(w.cwd, "shot.jpg")+"]")
	assert.Contains(t, text, "a.bin, 1000 bytes; its content is not included")
	assert.NotContains(t, text, "AAAA", "a binary is not dumped")
	require.Len(t, images, 2)
	assert.Equal(t, "image/png", images[0].str("media_type"))
	assert.Equal(t, png, images[0].str("data"))
	assert.Equal(t, "image/jpeg", images[1].str("media_type"))
	assert.Equal(t, jpg, images[1].str("data"))

	// Audio is not advertised: refused, naming the block.
	e := p.failure(p.request("session/prompt", map[string]any{"sessionId": s, "prompt": []any{
		map[string]any{"type": "text", "text": "listen"},
		map[string]any{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
	}}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), "prompt[1]")
	assert.Len(t, w.srv.Requests(), 1, "a refused prompt reaches no model")
	assert.Equal(t, 0, p.exit())
}

func TestACPAvailableCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("reviewed"), llmtest.Text("tidied"))
	w.trustProject()
	write := func(path, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	write(filepath.Join(w.cwd, ".pi", "prompts", "review.md"), "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1 for bugs.")
	write(filepath.Join(w.cwd, ".pi", "prompts", "fix.md"), "---\ndescription: Fix things\n---\nFix $@ now.")
	write(filepath.Join(w.agentDir, "prompts", "hello.md"), "---\ndescription: Say hello\n---\nSay hello.")
	write(filepath.Join(w.cwd, ".pi", "skills", "tidy", "SKILL.md"), "---\nname: tidy\ndescription: Tidies things\n---\nKeep it tidy.")

	p := startACP(t, w.cwd, w.agentDir, "--model", "scripted/scripted-1")
	_, _ = p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	newID := p.request("session/new", map[string]any{"cwd": w.cwd, "mcpServers": []any{}})
	_, res := p.result(newID)
	answeredAt := p.read
	s := res.str("sessionId")
	u := p.commandsOf(s)
	for _, c := range p.commands {
		assert.Greater(t, c.at, answeredAt, "the commands come after the answer that opened the session")
	}
	byName := map[string]record{}
	for _, c := range u["availableCommands"].([]any) {
		cmd := record(c.(map[string]any))
		byName[cmd.str("name")] = cmd
	}
	require.Contains(t, byName, "review", "no leading slash: %v", byName)
	assert.Equal(t, "Review a file", byName["review"].str("description"))
	assert.Equal(t, "<file>", byName["review"].obj("input").str("hint"), "the template's argument-hint")
	require.Contains(t, byName, "fix")
	assert.Equal(t, "arguments", byName["fix"].obj("input").str("hint"), "a template with $@ takes arguments")
	require.Contains(t, byName, "hello")
	assert.Nil(t, byName["hello"]["input"], "a template without a place for arguments takes none")
	require.Contains(t, byName, "skill:tidy")
	assert.Equal(t, "Tidies things", byName["skill:tidy"].str("description"))

	// "/name args" runs the command as in the other modes.
	ups, r := p.result(p.prompt(s, "/review main.go"))
	assert.Equal(t, "end_turn", r.str("stopReason"))
	assert.Equal(t, "reviewed", chunks(ups, "agent_message_chunk"))
	text, _ := lastUser(t, w.srv.Requests()[0])
	assert.Equal(t, "Review main.go for bugs.", text)
	_, _ = p.result(p.prompt(s, "/skill:tidy the desk"))
	text, _ = lastUser(t, w.srv.Requests()[1])
	assert.Contains(t, text, "Keep it tidy.")
	assert.Contains(t, text, "the desk")

	// session/resume and session/load announce the commands too, after
	// their answer.
	n := len(p.commands)
	_, _ = p.result(p.request("session/close", map[string]any{"sessionId": s}))
	_, _ = p.result(p.request("session/resume", map[string]any{"sessionId": s, "cwd": w.cwd}))
	at := p.read
	for len(p.commands) == n {
		r := p.frame()
		require.Equal(t, "available_commands_update", kind(r), "%v", r)
		p.commands = append(p.commands, seenFrame{r, p.read})
	}
	assert.Greater(t, p.commands[n].at, at)
	assert.Equal(t, s, p.commands[n].r.obj("params").str("sessionId"))
	assert.Equal(t, 0, p.exit())
}

func TestACPAuthentication(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	p := startACP(t, cwd, agentDir, "--model", "anthropic/claude-sonnet-4-5", "--no-session")
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	methods := map[string]record{}
	for _, m := range res["authMethods"].([]any) {
		am := record(m.(map[string]any))
		methods[am.str("id")] = am
	}
	require.Len(t, methods, 3)
	assert.Contains(t, methods["anthropic"].str("description"), "ANTHROPIC_API_KEY")
	assert.Contains(t, methods["openai"].str("description"), "OPENAI_API_KEY")
	assert.Contains(t, methods["google"].str("description"), "GEMINI_API_KEY")
	assert.Contains(t, methods["google"].str("description"), "auth.json")

	// A model without a key: the spec's auth-required error, saying what
	// to set.
	e := p.failure(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}))
	assert.EqualValues(t, -32000, e["code"])
	assert.Contains(t, e.str("message"), "ANTHROPIC_API_KEY")
	assert.Contains(t, e.str("message"), filepath.Join(agentDir, "auth.json"))
	assert.Equal(t, "anthropic", e.obj("data").str("provider"))

	e = p.failure(p.request("authenticate", map[string]any{"methodId": "anthropic"}))
	assert.EqualValues(t, -32000, e["code"])
	assert.Contains(t, e.str("message"), "ANTHROPIC_API_KEY")
	e = p.failure(p.request("authenticate", map[string]any{"methodId": "keychain"}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"methodId"`)
	e = p.failure(p.request("authenticate", map[string]any{}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"methodId"`)

	// The user stores a key: authenticate finds it, and the session opens.
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "auth.json"), []byte(`{"anthropic": {"type": "api_key", "key": "sk-test"}}`), 0o600))
	_, _ = p.result(p.request("authenticate", map[string]any{"methodId": "anthropic"}))
	p.newSession(cwd)
	e = p.failure(p.request("authenticate", map[string]any{"methodId": "openai"}))
	assert.EqualValues(t, -32000, e["code"], "a key for one provider is not one for another")
	assert.Equal(t, 0, p.exit())

	// The offline faux model never needs one.
	q := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	q.started(cwd)
	assert.Equal(t, 0, q.exit())
}

// logout forgets the keys gopi's authentication methods have the user
// store (auth.json's, for their providers) and nothing else: sessions and
// prompts of that provider then answer auth-required as before the key
// was stored, until it is stored again. A key in the environment the
// editor gave gopi stays.
func TestACPLogout(t *testing.T) {
	t.Parallel()
	cwd, agentDir := t.TempDir(), t.TempDir()
	authFile := filepath.Join(agentDir, "auth.json")
	require.NoError(t, os.WriteFile(authFile, []byte(`{"mistral": {"type": "api_key", "key": "sk-m"}, "anthropic": {"type": "api_key", "key": "sk-a"}}`), 0o600))
	p := startACP(t, cwd, agentDir, "--model", "anthropic/claude-sonnet-4-5", "--no-session")
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1}))
	assert.NotNil(t, res.obj("agentCapabilities").obj("auth")["logout"], "logout is advertised")
	s := p.newSession(cwd)

	_, res = p.result(p.request("logout", map[string]any{}))
	assert.Empty(t, res)
	data, err := os.ReadFile(authFile)
	require.NoError(t, err)
	assert.JSONEq(t, `{"mistral": {"type": "api_key", "key": "sk-m"}}`, string(data), "another provider's key stays")

	e := p.failure(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}))
	assert.EqualValues(t, -32000, e["code"])
	assert.Contains(t, e.str("message"), "ANTHROPIC_API_KEY")
	e = p.failure(p.prompt(s, "hello"))
	assert.EqualValues(t, -32000, e["code"], "the open session's prompts need the key too")
	e = p.failure(p.request("authenticate", map[string]any{"methodId": "anthropic"}))
	assert.EqualValues(t, -32000, e["code"])

	// Logging out again has nothing to forget; params may be left out.
	p.nextID++
	p.methods[float64(p.nextID)] = "logout"
	p.write(map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": "logout"})
	_, _ = p.result(float64(p.nextID))

	require.NoError(t, os.WriteFile(authFile, []byte(`{"anthropic": {"type": "api_key", "key": "sk-again"}}`), 0o600))
	_, _ = p.result(p.request("authenticate", map[string]any{"methodId": "anthropic"}))
	p.newSession(cwd)
	assert.Equal(t, 0, p.exit())

	// A key from the environment is not gopi's to forget.
	q := &aproc{proc: launchArgv(t, cwd, agentDir, rpc.FramingNewline, []string{"ANTHROPIC_API_KEY=sk-env"},
		gopiBinary(t), "--mode", "acp", "--model", "anthropic/claude-sonnet-4-5", "--no-session"), methods: map[float64]string{}}
	q.started(cwd)
	_, _ = q.result(q.request("logout", map[string]any{}))
	q.newSession(cwd)
	data, err = os.ReadFile(authFile)
	require.NoError(t, err)
	assert.JSONEq(t, `{}`, string(data))
	assert.Equal(t, 0, q.exit())
}

// An editor that starts gopi --mode rpc and speaks ACP is served ACP;
// pi's commands and other JSON-RPC initializes are not taken for it.
func TestACPDetectedInRPCMode(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := &aproc{proc: launch(t, cwd, t.TempDir(), rpc.FramingNewline, "--mode", "rpc", "--model", "faux/faux-fast", "--no-session"), methods: map[float64]string{}}
	s := p.started(cwd)
	ups, res := p.result(p.prompt(s, "reply: over ACP"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Equal(t, "over ACP", chunks(ups, "agent_message_chunk"))
	assert.Equal(t, 0, p.exit())

	pi := startProc(t, cwd, t.TempDir(), "--mode", "rpc", "--model", "faux/faux-fast", "--no-session")
	r := pi.call("1", map[string]any{"type": "get_state"})
	assert.Equal(t, true, r["success"])
	assert.Equal(t, "faux-fast", r.obj("data").obj("model").str("id"))
	assert.Equal(t, 0, pi.exit())

	// MCP's initialize has a date for protocolVersion: JSON-RPC, not ACP.
	mcp := startProc(t, cwd, t.TempDir(), "--mode", "rpc", "--model", "faux/faux-fast", "--no-session")
	mcp.sendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
	r = mcp.next()
	assert.EqualValues(t, 1, r["id"])
	assert.Nil(t, r.obj("result")["agentCapabilities"], "answered as ACP: %v", r)
	assert.NotNil(t, r.obj("result")["capabilities"], "not answered as gopi's JSON-RPC: %v", r)
}
