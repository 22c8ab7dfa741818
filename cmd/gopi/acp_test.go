package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kaptinlin/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/rpc"
)

// The ACP transcript tests: gopi --mode acp driven as an editor drives
// it, every frame it writes checked against the vendored ACP v1 schema
// (lspbridge/acp/testdata/schema), responses against the response type of the
// method they answer and session/update against SessionNotification.

var (
	acpSchemaOnce sync.Once
	acpSchemas    map[string]*jsonschema.Schema
	acpSchemaErr  error
)

// acpSchema compiles the definition def of the vendored schema ("" for
// the schema's branch of everything an agent sends).
func acpSchema(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	acpSchemaOnce.Do(func() {
		raw, err := os.ReadFile(filepath.Join("..", "..", "lspbridge", "acp", "testdata", "schema", "v1", "schema.json"))
		if err != nil {
			acpSchemaErr = err
			return
		}
		var root map[string]any
		if acpSchemaErr = json.Unmarshal(raw, &root); acpSchemaErr != nil {
			return
		}
		acpSchemas = map[string]*jsonschema.Schema{}
		// The whole schema is compiled once; each definition used is a
		// reference into it (compiling the 250 KB schema anew for each
		// cost seconds under the race detector).
		const base = "https://acp.invalid/schema.json"
		compiler := jsonschema.NewCompiler()
		if _, err := compiler.Compile(raw, base); err != nil {
			acpSchemaErr = fmt.Errorf("compiling the schema: %w", err)
			return
		}
		compileIn := func(base, name, pointer string) {
			b, err := json.Marshal(map[string]any{"$schema": root["$schema"], "$ref": base + "#" + pointer})
			if err != nil {
				acpSchemaErr = err
				return
			}
			s, err := compiler.Compile(b)
			if err != nil {
				acpSchemaErr = fmt.Errorf("compiling %q: %w", name, err)
				return
			}
			acpSchemas[name] = s
		}
		compile := func(name, pointer string) { compileIn(base, name, pointer) }
		// The schema's top level is anyOf [Agent, Client]: what an
		// agent may send is the first.
		branches, _ := root["anyOf"].([]any)
		agentSide, _ := branches[0].(map[string]any)
		if agentSide["title"] != "Agent" {
			acpSchemaErr = fmt.Errorf("the schema's first branch is %v, not Agent", agentSide["title"])
			return
		}
		compile("", "/anyOf/0")
		for _, d := range []string{"InitializeResponse", "NewSessionResponse", "PromptResponse", "SessionNotification", "Error",
			"LoadSessionResponse", "ResumeSessionResponse", "ListSessionsResponse", "CloseSessionResponse", "DeleteSessionResponse",
			"AuthenticateResponse", "LogoutResponse", "SetSessionModeResponse", "SetSessionConfigOptionResponse"} {
			compile(d, "/$defs/"+d)
		}
		for _, d := range clientRequestDefs {
			compile(d, "/$defs/"+d)
		}
		// What gopi serves of the unstable schema (session/fork), from
		// its own file, named "unstable/<def>".
		raw, err = os.ReadFile(filepath.Join("..", "..", "lspbridge", "acp", "testdata", "schema", "v1", "schema.unstable.json"))
		if err != nil {
			acpSchemaErr = err
			return
		}
		const unstableBase = "https://acp.invalid/schema.unstable.json"
		if _, err := compiler.Compile(raw, unstableBase); err != nil {
			acpSchemaErr = fmt.Errorf("compiling the unstable schema: %w", err)
			return
		}
		for _, d := range []string{"ForkSessionResponse"} {
			compileIn(unstableBase, "unstable/"+d, "/$defs/"+d)
		}
	})
	require.NoError(t, acpSchemaErr)
	s := acpSchemas[def]
	require.NotNil(t, s, "no compiled schema %q", def)
	return s
}

// acpValid fails the test when frame is not valid against def.
func acpValid(t *testing.T, def string, frame []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	res := acpSchema(t, def).Validate(v)
	if !res.IsValid() {
		detail, _ := json.MarshalIndent(res.ToList(), "", "  ")
		t.Errorf("gopi wrote a frame that is not a valid ACP %s:\n%s\n%s", orAgent(def), frame, detail)
	}
}

func orAgent(def string) string {
	if def == "" {
		return "agent message"
	}
	return def
}

// aproc is gopi in --mode acp: requests are sent with increasing ids and
// each frame read is checked against the schema.
type aproc struct {
	*proc
	nextID int
	// methods remembers which method each request id called, to check
	// its response against that method's result type.
	methods map[float64]string
	// read counts the frames read; commands are the
	// available_commands_update frames answer passed over, each with
	// the count at its arrival (acp_prompt_test.go).
	read     int
	commands []seenFrame
}

// seenFrame is a frame and the number of frames read when it came.
type seenFrame struct {
	r  record
	at int
}

func startACP(t *testing.T, cwd, agentDir string, args ...string) *aproc {
	t.Helper()
	p := launch(t, cwd, agentDir, rpc.FramingNewline, append([]string{"--mode", "acp"}, args...)...)
	return &aproc{proc: p, methods: map[float64]string{}}
}

func (p *aproc) request(method string, params any) float64 {
	p.t.Helper()
	p.nextID++
	id := float64(p.nextID)
	p.methods[id] = method
	p.write(map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method, "params": params})
	return id
}

func (p *aproc) notify(method string, params any) {
	p.t.Helper()
	p.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (p *aproc) write(msg map[string]any) {
	p.t.Helper()
	b, err := json.Marshal(msg)
	require.NoError(p.t, err)
	p.sendRaw(string(b))
}

var resultDefs = map[string]string{
	"initialize":     "InitializeResponse",
	"session/new":    "NewSessionResponse",
	"session/prompt": "PromptResponse",
	"session/load":   "LoadSessionResponse",
	"session/resume": "ResumeSessionResponse",
	"session/list":   "ListSessionsResponse",
	"session/close":  "CloseSessionResponse",
	"session/delete": "DeleteSessionResponse",
	"authenticate":   "AuthenticateResponse",
	"logout":         "LogoutResponse",
	"session/fork":   "unstable/ForkSessionResponse",
	// The config and mode methods (acp_config_test.go); the older
	// session/set_model's answer had only _meta, as set_mode's has.
	"session/set_mode":          "SetSessionModeResponse",
	"session/set_config_option": "SetSessionConfigOptionResponse",
	"session/set_model":         "SetSessionModeResponse",
}

// frame reads the next frame and validates it: as an agent message, and
// as the result, error or notification params it carries.
func (p *aproc) frame() record {
	p.t.Helper()
	r := p.next()
	p.read++
	raw, err := json.Marshal(r)
	require.NoError(p.t, err)
	acpValid(p.t, "", raw)
	part := func(k string) []byte {
		b, err := json.Marshal(r[k])
		require.NoError(p.t, err)
		return b
	}
	switch {
	case r["error"] != nil:
		acpValid(p.t, "Error", part("error"))
	case r["result"] != nil:
		id, _ := r["id"].(float64)
		def := resultDefs[p.methods[id]]
		require.NotEmpty(p.t, def, "a result for request %v, which expects none\n%s", r["id"], p.transcript())
		acpValid(p.t, def, part("result"))
	case r.str("method") == "session/update":
		acpValid(p.t, "SessionNotification", part("params"))
	case clientRequestDefs[r.str("method")] != "":
		// gopi's requests to the client, and $/cancel_request.
		acpValid(p.t, clientRequestDefs[r.str("method")], part("params"))
	default:
		p.t.Errorf("gopi sent a frame this step does not expect: %v", r)
	}
	return r
}

// answer reads frames up to the response to id; it returns the
// session/update notifications before it and the response.
func (p *aproc) answer(id float64) (updates []record, resp record) {
	p.t.Helper()
	for {
		r := p.frame()
		if r.str("method") == "session/update" {
			// A session's commands come when its extensions have
			// loaded, in no fixed place among other frames.
			if kind(r) == "available_commands_update" {
				p.commands = append(p.commands, seenFrame{r, p.read})
				continue
			}
			updates = append(updates, r)
			continue
		}
		require.Equal(p.t, id, r["id"], "a response to another request\n%s", p.transcript())
		return updates, r
	}
}

// result is the response to id, required to succeed.
func (p *aproc) result(id float64) ([]record, record) {
	p.t.Helper()
	ups, r := p.answer(id)
	require.Nil(p.t, r["error"], "request %v failed\n%s", id, p.transcript())
	return ups, r.obj("result")
}

// failure is the error answering id.
func (p *aproc) failure(id float64) record {
	p.t.Helper()
	_, r := p.answer(id)
	require.NotNil(p.t, r["error"], "request %v succeeded\n%s", id, p.transcript())
	return r.obj("error")
}

// started initializes and opens one session in cwd; it returns its id.
func (p *aproc) started(cwd string) string {
	p.t.Helper()
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	require.EqualValues(p.t, 1, res["protocolVersion"])
	return p.newSession(cwd)
}

func (p *aproc) newSession(cwd string) string {
	p.t.Helper()
	_, res := p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}))
	id := res.str("sessionId")
	require.NotEmpty(p.t, id)
	p.commandsOf(id)
	return id
}

// commandsOf waits for the available_commands_update of session id (it
// follows the answer that opened the session) and returns its update.
func (p *aproc) commandsOf(id string) record {
	p.t.Helper()
	for {
		for _, c := range p.commands {
			if c.r.obj("params").str("sessionId") == id {
				return c.r.obj("params").obj("update")
			}
		}
		r := p.frame()
		require.Equal(p.t, "session/update", r.str("method"), "a frame before session %s's commands\n%s", id, p.transcript())
		if kind(r) != "available_commands_update" {
			p.t.Fatalf("an update before session %s's commands: %v", id, r)
		}
		p.commands = append(p.commands, seenFrame{r, p.read})
	}
}

func (p *aproc) prompt(session, text string) float64 {
	p.t.Helper()
	return p.request("session/prompt", map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}})
}

// usageLast splits a prompt's updates into those of the run and the
// usage_update that ends them.
func usageLast(t *testing.T, ups []record) ([]record, record) {
	t.Helper()
	require.NotEmpty(t, ups)
	last := ups[len(ups)-1]
	require.Equal(t, "usage_update", kind(last), "a run's updates end with its usage")
	for _, u := range ups[:len(ups)-1] {
		require.NotEqual(t, "usage_update", kind(u), "one usage_update, at the end")
	}
	return ups[:len(ups)-1], last.obj("params").obj("update")
}

// kind is a session/update's sessionUpdate.
func kind(r record) string { return r.obj("params").obj("update").str("sessionUpdate") }

// chunks joins the text of the updates of kind k.
func chunks(ups []record, k string) string {
	var b strings.Builder
	for _, u := range ups {
		if kind(u) == k {
			b.WriteString(u.obj("params").obj("update").obj("content").str("text"))
		}
	}
	return b.String()
}

func TestACPInitialize(t *testing.T) {
	t.Parallel()
	p := startACP(t, t.TempDir(), t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 7}))
	assert.EqualValues(t, 1, res["protocolVersion"], "gopi answers the version it speaks")
	assert.Equal(t, "gopi", res.obj("agentInfo").str("name"))
	assert.NotEmpty(t, res.obj("agentInfo").str("version"))
	assert.Len(t, res["authMethods"], 3, "one per provider family (acp_prompt_test.go)")
	assert.NotEqual(t, true, res.obj("agentCapabilities")["loadSession"], "no session/load without stored sessions")
	sc := res.obj("agentCapabilities").obj("sessionCapabilities")
	for _, c := range []string{"resume", "list", "delete"} {
		assert.Nil(t, sc[c], "no session/%s without stored sessions", c)
	}
	assert.NotNil(t, sc["close"], "session/close needs no stored sessions")
	assert.Equal(t, 0, p.exit(), "stdin's end is a clean exit")
}

func TestACPPromptStreamsAndAnswersAfterTheRun(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s1 := p.started(cwd)
	s2 := p.newSession(cwd)
	assert.NotEqual(t, s1, s2, "every session/new is a session of its own")

	ups, res := p.result(p.prompt(s1, "stream: 5"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	ups, usage := usageLast(t, ups)
	assert.Positive(t, usage["used"], "tokens in the context")
	assert.EqualValues(t, 128000, usage["size"], "the faux model's context window")
	assert.Equal(t, "USD", usage.obj("cost").str("currency"))
	require.NotEmpty(t, ups)
	for _, u := range ups {
		assert.Equal(t, "agent_message_chunk", kind(u))
		assert.Equal(t, s1, u.obj("params").str("sessionId"))
	}
	assert.Len(t, ups, 5, "one chunk per delta, each carrying only the delta")
	assert.Equal(t, "1 2 3 4 5", chunks(ups, "agent_message_chunk"))

	// A tool call in the other session: its own cwd, its own updates.
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "note.txt"), []byte("hello from the file\n"), 0o644))
	ups, res = p.result(p.prompt(s2, "bash: cat note.txt"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	ups, usage = usageLast(t, ups)
	var kinds []string
	for _, u := range ups {
		assert.Equal(t, s2, u.obj("params").str("sessionId"))
		kinds = append(kinds, kind(u))
	}
	require.GreaterOrEqual(t, len(ups), 4, "%v", kinds)
	assert.Equal(t, []string{"tool_call", "tool_call_update", "tool_call_update"}, kinds[:3])
	call := ups[0].obj("params").obj("update")
	id := call.str("toolCallId")
	assert.NotEmpty(t, id)
	assert.Equal(t, "cat note.txt", call.str("title"))
	assert.Equal(t, "execute", call.str("kind"))
	assert.Equal(t, "pending", call.str("status"))
	assert.Equal(t, "cat note.txt", call.obj("rawInput").str("command"))
	running := ups[1].obj("params").obj("update")
	assert.Equal(t, id, running.str("toolCallId"))
	assert.Equal(t, "in_progress", running.str("status"))
	done := ups[2].obj("params").obj("update")
	assert.Equal(t, id, done.str("toolCallId"))
	assert.Equal(t, "completed", done.str("status"))
	content, _ := done["content"].([]any)
	require.Len(t, content, 1)
	text := record(content[0].(map[string]any)).obj("content").str("text")
	assert.Contains(t, text, "hello from the file")
	assert.Contains(t, chunks(ups, "agent_message_chunk"), "hello from the file", "the model's reply after the tool")

	// A failing tool is failed.
	ups, res = p.result(p.prompt(s2, "read: missing.txt"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	require.GreaterOrEqual(t, len(ups), 3)
	assert.Equal(t, "Read missing.txt", ups[0].obj("params").obj("update").str("title"))
	assert.Equal(t, "read", ups[0].obj("params").obj("update").str("kind"))
	assert.Equal(t, "failed", ups[2].obj("params").obj("update").str("status"))

	_, usage2 := usageLast(t, ups)
	assert.Greater(t, usage2["used"], usage["used"], "the context has grown")

	// Nothing of an answered prompt comes after its answer: the next
	// frame answers the next request.
	e := p.failure(p.request("no/such", map[string]any{}))
	assert.EqualValues(t, -32601, e["code"])
	assert.Equal(t, 0, p.exit())
}

func TestACPThoughtChunks(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-1", "--thinking", "low", "--no-session")
	s := p.started(cwd)
	ups, res := p.result(p.prompt(s, "think: weighing the options"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Contains(t, chunks(ups, "agent_thought_chunk"), "weighing the options")
	assert.Contains(t, chunks(ups, "agent_message_chunk"), "Done thinking.")
	assert.Equal(t, 0, p.exit())
}

func TestACPCancel(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.started(cwd)
	id := p.prompt(s, "bash: sleep 60")
	// Wait until the command runs.
	for {
		r := p.frame()
		require.Equal(t, "session/update", r.str("method"), "the prompt answered before it ran\n%s", p.transcript())
		if u := r.obj("params").obj("update"); u.str("sessionUpdate") == "tool_call_update" && u.str("status") == "in_progress" {
			break
		}
	}
	p.notify("session/cancel", map[string]any{"sessionId": s})
	_, res := p.result(id)
	assert.Equal(t, "cancelled", res.str("stopReason"), "a cancelled prompt answers cancelled, never an error")
	// The session is usable again, and nothing of the cancelled prompt
	// arrives after its answer.
	ups, res := p.result(p.prompt(s, "reply: again"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	ups, _ = usageLast(t, ups)
	assert.Equal(t, "again", chunks(ups, "agent_message_chunk"))
	for _, u := range ups {
		assert.Equal(t, "agent_message_chunk", kind(u), "an update of the cancelled prompt after its answer")
	}
	assert.Equal(t, 0, p.exit())
}

func TestACPStdinEndAbortsTheRun(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.started(cwd)
	id := p.prompt(s, "bash: sleep 60")
	for {
		if u := p.frame().obj("params").obj("update"); u.str("status") == "in_progress" {
			break
		}
	}
	require.NoError(t, p.stdin.Close())
	// The prompt is answered (cancelled) before gopi exits.
	_, res := p.result(id)
	assert.Equal(t, "cancelled", res.str("stopReason"))
	assert.Equal(t, 0, p.wait())
}

func TestACPSignalAbortsTheRun(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.started(cwd)
	id := p.prompt(s, "bash: sleep 60")
	for {
		if u := p.frame().obj("params").obj("update"); u.str("status") == "in_progress" {
			break
		}
	}
	p.signal(syscall.SIGTERM)
	// The run is aborted and the prompt answered before gopi exits,
	// though the connection's context is over.
	ups, res := p.result(id)
	assert.Equal(t, "cancelled", res.str("stopReason"))
	for _, u := range ups {
		assert.Contains(t, []string{"tool_call_update", "usage_update"}, kind(u))
	}
	assert.Equal(t, 0, p.wait())
}

func TestACPBadInput(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	s := p.started(cwd)

	p.sendRaw(`{"jsonrpc":"2.0","id":`)
	r := p.frame()
	assert.EqualValues(t, -32700, r.obj("error")["code"])
	assert.Nil(t, r["id"])

	e := p.failure(p.request("session/teleport", map[string]any{}))
	assert.EqualValues(t, -32601, e["code"])

	e = p.failure(p.request("session/set_mode", map[string]any{"sessionId": s, "modeId": "ask"}))
	assert.EqualValues(t, -32602, e["code"], "an unknown mode")
	assert.Contains(t, e.str("message"), `"modeId" "ask"`)

	e = p.failure(p.request("session/load", map[string]any{"sessionId": s, "cwd": cwd, "mcpServers": []any{}}))
	assert.EqualValues(t, -32601, e["code"], "no stored sessions with --no-session")
	assert.Contains(t, e.str("message"), "--no-session")

	e = p.failure(p.request("session/new", map[string]any{"mcpServers": []any{}}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"cwd"`)

	e = p.failure(p.request("session/new", map[string]any{"cwd": 42, "mcpServers": []any{}}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"cwd"`)

	e = p.failure(p.request("session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), "absolute")

	e = p.failure(p.request("session/prompt", map[string]any{"sessionId": s}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), `"prompt"`)

	e = p.failure(p.prompt("no-such-session", "reply: hi"))
	assert.EqualValues(t, -32002, e["code"])
	assert.Contains(t, e.str("message"), "no-such-session")

	e = p.failure(p.request("session/prompt", map[string]any{"sessionId": s, "prompt": []any{map[string]any{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}}}))
	assert.EqualValues(t, -32602, e["code"])
	assert.Contains(t, e.str("message"), "prompt[0]")

	// An unknown notification is ignored; the connection goes on.
	p.notify("$/cancel_request", map[string]any{"requestId": 99})
	ups, res := p.result(p.prompt(s, "reply: still here"))
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.Equal(t, "still here", chunks(ups, "agent_message_chunk"))
	assert.Equal(t, 0, p.exit())
}

// The checks above are only as good as the validator: it must reject
// what the schema forbids.
func TestACPSchemaCatchesBadFrames(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"":                    `{"id":1,"result":{"stopReason":"end_turn"}}`,
		"SessionNotification": `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","kind":"teleport"}}`,
		"Error":               `{"code":"oops","message":"x"}`,
		"PromptResponse":      `{"stopReason":"finished"}`,
		"InitializeResponse":  `{"protocolVersion":"1"}`,
	}
	for def, frame := range bad {
		dec := json.NewDecoder(strings.NewReader(frame))
		dec.UseNumber()
		var v any
		require.NoError(t, dec.Decode(&v))
		assert.False(t, acpSchema(t, def).Validate(v).IsValid(), "%s accepted %s", orAgent(def), frame)
	}
}
