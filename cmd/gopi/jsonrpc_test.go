package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// jproc is gopi spoken to in JSON-RPC 2.0, in either framing.
type jproc struct {
	*proc
	header bool
	nextID int
}

// startJSONRPC runs gopi with args in w, framing its messages with
// Content-Length headers when header is set, else one per line.
func (w *world) startJSONRPC(header bool, args ...string) *jproc {
	w.t.Helper()
	framing := rpc.FramingNewline
	if header {
		framing = rpc.FramingHeader
	}
	return &jproc{proc: launch(w.t, w.cwd, w.agentDir, framing, args...), header: header}
}

func (p *jproc) writeRaw(body string) {
	p.t.Helper()
	var err error
	if p.header {
		_, err = fmt.Fprintf(p.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	} else {
		_, err = io.WriteString(p.stdin, body+"\n")
	}
	require.NoError(p.t, err)
}

func (p *jproc) write(msg map[string]any) {
	p.t.Helper()
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(msg)
	require.NoError(p.t, err)
	p.writeRaw(string(b))
}

// request sends a request and returns its id.
func (p *jproc) request(method string, params any) float64 {
	p.t.Helper()
	p.nextID++
	m := map[string]any{"id": p.nextID, "method": method}
	if params != nil {
		m["params"] = params
	}
	p.write(m)
	return float64(p.nextID)
}

func (p *jproc) notify(method string, params any) {
	p.t.Helper()
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	p.write(m)
}

// reply waits for the response to id (a success or an error).
func (p *jproc) reply(id float64) record {
	p.t.Helper()
	seen := p.until(func(r record) bool { return r["method"] == nil && r["id"] == id })
	return seen[len(seen)-1]
}

// call sends a request and returns its result, failing on an error.
func (p *jproc) call(method string, params any) any {
	p.t.Helper()
	r := p.reply(p.request(method, params))
	require.Nil(p.t, r["error"], "%s failed\n%s", method, p.transcript())
	return r["result"]
}

// event reports whether r is the pi/event of type typ.
func event(r record, typ string) bool {
	return r["method"] == "pi/event" && r.obj("params").str("type") == typ
}

func scriptedArgs(extra ...string) []string {
	return append([]string{"--model", "scripted/scripted-1"}, extra...)
}

// TestJSONRPCDetection: --mode rpc tells the three dialects apart from the
// first bytes, and --mode jsonrpc (with vscode-languageclient's --stdio)
// speaks JSON-RPC in either framing.
func TestJSONRPCDetection(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, tc := range []struct {
		name   string
		header bool
		args   []string
	}{
		{"rpc/newline", false, []string{"--mode", "rpc"}},
		{"rpc/content-length", true, []string{"--mode", "rpc"}},
		{"jsonrpc/newline", false, []string{"--mode", "jsonrpc", "--stdio"}},
		{"jsonrpc/content-length", true, []string{"--mode", "jsonrpc", "--stdio"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := *w
			w.t = t
			p := w.startJSONRPC(tc.header, scriptedArgs(tc.args...)...)
			state := p.call("pi/get_state", nil).(map[string]any)
			assert.Equal(t, "scripted-1", record(state).obj("model").str("id"))
			p.request("shutdown", nil)
			p.notify("exit", nil)
			assert.Equal(t, 0, p.wait())
		})
	}
	t.Run("native", func(t *testing.T) {
		w := *w
		w.t = t
		p := w.start()
		data := p.ok("1", map[string]any{"type": "get_state"}).(map[string]any)
		assert.Equal(t, "scripted-1", record(data).obj("model").str("id"))
		assert.Equal(t, 0, p.exit())
	})
	t.Run("forced jsonrpc answers a native command as an invalid request", func(t *testing.T) {
		w := *w
		w.t = t
		p := w.startJSONRPC(false, scriptedArgs("--mode", "jsonrpc")...)
		p.writeRaw(`{"id":"x","type":"get_state"}`)
		r := p.next()
		assert.EqualValues(t, -32600, r.obj("error")["code"], p.transcript())
		assert.Equal(t, "x", r["id"])
		_ = p.stdin.Close()
		assert.Equal(t, 0, p.wait())
	})
}

// TestJSONRPCExitCodes follows LSP: exit after shutdown is 0, exit
// without it 1; a client that just closes stdin ends gopi cleanly.
func TestJSONRPCExitCodes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.startJSONRPC(true, scriptedArgs("--mode", "rpc")...)
	p.call("initialize", map[string]any{"capabilities": map[string]any{}})
	p.notify("initialized", map[string]any{})
	assert.Nil(t, p.call("shutdown", nil))
	r := p.reply(p.request("pi/get_state", nil))
	assert.EqualValues(t, -32600, r.obj("error")["code"], "requests after shutdown are refused")
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())

	p = w.startJSONRPC(true, scriptedArgs("--mode", "rpc")...)
	p.call("initialize", map[string]any{"capabilities": map[string]any{}})
	p.notify("exit", nil)
	assert.Equal(t, 1, p.wait(), "exit without shutdown")

	p = w.startJSONRPC(false, scriptedArgs("--mode", "rpc")...)
	p.call("pi/get_state", nil)
	require.NoError(t, p.stdin.Close())
	assert.Equal(t, 0, p.wait(), "end of input")
}

// TestJSONRPCInitializeOptions: the workspace folder becomes the cwd, and
// initializationOptions choose the model, thinking level and session the
// way the flags would.
func TestJSONRPCInitializeOptions(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("b1", "bash", `{"command":"pwd"}`)),
		llmtest.Text("done"),
	)
	project := filepath.Join(t.TempDir(), "project")
	require.NoError(t, os.Mkdir(project, 0o755))
	sessionFile := filepath.Join(t.TempDir(), "chosen.jsonl")

	p := w.startJSONRPC(true, "--mode", "rpc")
	res := record(p.call("initialize", map[string]any{
		"rootUri":      "file://" + w.cwd,
		"capabilities": map[string]any{},
		"workspaceFolders": []any{
			map[string]any{"uri": "file://" + project, "name": "project"},
		},
		"initializationOptions": map[string]any{
			"model": "scripted/scripted-2", "thinkingLevel": "off", "sessionFile": sessionFile, "fullUpdates": true,
		},
	}).(map[string]any))
	assert.Equal(t, "gopi", res.obj("serverInfo").str("name"))
	pi := res.obj("capabilities").obj("experimental").obj("pi")
	assert.EqualValues(t, 1, pi["protocolVersion"])
	assert.Contains(t, pi["commands"], "pi/prompt")
	assert.Contains(t, pi["events"], "message_update")

	state := record(p.call("pi/get_state", nil).(map[string]any))
	assert.Equal(t, "scripted-2", state.obj("model").str("id"))
	assert.Equal(t, "off", state.str("thinkingLevel"))
	assert.Equal(t, sessionFile, state.str("sessionFile"))

	promptID := p.request("pi/prompt", map[string]any{"message": "where are you?"})
	seen := p.until(func(r record) bool { return event(r, "agent_end") })
	assert.Equal(t, promptID, seen[0]["id"], "the prompt's response comes before its events")
	var pwd string
	fullUpdate := false
	for _, r := range seen {
		if event(r, "tool_execution_end") {
			content := r.obj("params").obj("result")["content"].([]any)
			pwd = strings.TrimSpace(record(content[0].(map[string]any)).str("text"))
		}
		if event(r, "message_update") && r.obj("params")["message"] != nil {
			fullUpdate = true
		}
	}
	assert.Equal(t, project, pwd, "bash runs in the workspace folder")
	assert.True(t, fullUpdate, "fullUpdates keeps message in message_update")
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
	_, err := os.Stat(sessionFile)
	assert.NoError(t, err, "the session went to the file initialize named")

	// A workspace that does not exist is a bad param, and gopi keeps
	// serving the one it has.
	p = w.startJSONRPC(false, scriptedArgs("--mode", "rpc")...)
	r := p.reply(p.request("initialize", map[string]any{"rootUri": "file:///no/such/dir/anywhere"}))
	assert.EqualValues(t, -32602, r.obj("error")["code"], p.transcript())
	r = p.reply(p.request("initialize", map[string]any{"initializationOptions": map[string]any{"model": "nosuch/model-x"}}))
	assert.EqualValues(t, -32803, r.obj("error")["code"], p.transcript())
	state = record(p.call("pi/get_state", nil).(map[string]any))
	assert.Equal(t, "scripted-1", state.obj("model").str("id"))
}

// TestJSONRPCApprovalAndCancel: the approval gate asks through
// window/showMessageRequest, messages stream lean by default, and
// $/cancelRequest of the prompt aborts its run.
func TestJSONRPCApprovalAndCancel(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"out.txt","content":"hello\n"}`)),
		llmtest.Text("written"),
		llmtest.Turn{Blocks: []llmtest.Block{{Kind: llmtest.KindText, Text: strings.Repeat("word ", 200)}}, Fault: &llmtest.Fault{StallAfter: 6, Stall: true}},
	)
	p := w.startJSONRPC(true, scriptedArgs("--mode", "rpc", "--approval", "writes")...)
	p.call("initialize", map[string]any{"capabilities": map[string]any{
		"window": map[string]any{"showMessage": map[string]any{}, "workDoneProgress": true},
	}})

	p.request("pi/prompt", map[string]any{"message": "write it"})
	var ask record
	before := p.until(func(r record) bool {
		if r["method"] == "window/workDoneProgress/create" {
			p.write(map[string]any{"id": r["id"], "result": nil})
		}
		if r["method"] == "window/showMessageRequest" {
			ask = r
			return true
		}
		return false
	})
	params := ask.obj("params")
	assert.EqualValues(t, 3, params["type"])
	titles := []string{}
	for _, a := range params["actions"].([]any) {
		titles = append(titles, record(a.(map[string]any)).str("title"))
	}
	assert.Equal(t, []string{"Allow", "Allow always", "Deny"}, titles)
	assert.Equal(t, "write", params.obj("details").str("toolName"))
	p.write(map[string]any{"id": ask["id"], "result": map[string]any{"title": "Allow"}})

	seen := append(before, p.until(func(r record) bool { return event(r, "agent_end") })...)
	body, err := os.ReadFile(filepath.Join(w.cwd, "out.txt"))
	require.NoError(t, err, p.transcript())
	assert.Equal(t, "hello\n", string(body))
	var progress []string
	for _, r := range seen {
		if event(r, "message_update") {
			ev := r.obj("params")
			assert.Nil(t, ev["message"], "message_update is lean by default")
			assert.Nil(t, ev.obj("assistantMessageEvent")["partial"])
		}
		if r["method"] == "$/progress" {
			progress = append(progress, r.obj("params").obj("value").str("kind")+":"+r.obj("params").obj("value").str("message"))
		}
	}
	assert.Contains(t, progress, "begin:Working")
	assert.Contains(t, progress, "report:write: out.txt")

	// The third turn holds its stream open until the run is cancelled.
	id := p.request("pi/prompt", map[string]any{"message": "talk"})
	p.until(func(r record) bool {
		if r["method"] == "window/workDoneProgress/create" {
			p.write(map[string]any{"id": r["id"], "result": nil})
		}
		return event(r, "message_update")
	})
	p.notify("$/cancelRequest", map[string]any{"id": id})
	seen = p.until(func(r record) bool { return event(r, "agent_end") })
	msgs := seen[len(seen)-1].obj("params")["messages"].([]any)
	last := record(msgs[len(msgs)-1].(map[string]any))
	assert.Equal(t, "aborted", last.str("stopReason"), p.transcript())

	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// Issue 10: a client that lists the dialog kinds it shows used to fail
// initialize ("cannot unmarshal array ... of type bool").
func TestJSONRPCInitializeWithDialogKindList(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc")...)
	res := p.call("initialize", map[string]any{"capabilities": map[string]any{
		"experimental": map[string]any{"pi": map[string]any{"ui": []string{"input", "editor"}}},
	}})
	require.NotNil(t, res)
	p.notify("initialized", map[string]any{})
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// Issue 10: attached as a language server, gopi hears the editor's
// textDocument/* and workspace/* notifications. A storm of them while a run
// streams is accepted silently and disturbs nothing: every delta arrives,
// the run ends, and no error goes back to the editor.
func TestJSONRPCDocumentNotificationStormDuringARun(t *testing.T) {
	t.Parallel()
	var chunks []string
	for i := range 200 {
		chunks = append(chunks, fmt.Sprintf("w%d ", i))
	}
	w := newWorld(t, llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say(strings.Join(chunks, ""))}, ChunkSize: 4})
	p := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc")...)
	p.call("initialize", map[string]any{"capabilities": map[string]any{}})
	p.notify("initialized", map[string]any{})
	id := p.request("pi/prompt", map[string]any{"message": "talk"})
	for i := range 300 {
		uri := fmt.Sprintf("file:///w/f%d.go", i%7)
		switch i % 4 {
		case 0:
			p.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": i, "text": strings.Repeat("x", 2000)}})
		case 1:
			p.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": i}, "contentChanges": []any{map[string]any{"text": "y"}}})
		case 2:
			p.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
		case 3:
			p.notify("workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": uri, "type": 2}}})
		}
	}
	rs := p.until(func(r record) bool { return event(r, "agent_end") })
	var text strings.Builder
	for _, r := range rs {
		if r["method"] == nil {
			if r["id"] == id {
				assert.Nil(t, r["error"], "pi/prompt failed")
				continue
			}
			t.Errorf("unexpected response to the editor: %v", r)
		}
		if event(r, "message_update") {
			if ev := r.obj("params").obj("assistantMessageEvent"); ev.str("type") == "text_delta" {
				text.WriteString(ev.str("delta"))
			}
		}
	}
	assert.Equal(t, strings.Join(chunks, ""), text.String(), "every delta arrived")
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// The order the scheduler keeps, through the binary in this dialect
// (issue 28): a pi/get_state sent right behind a pi/bash is answered while
// the bash runs, a $/cancelRequest of the bash reaches it, and
// pi/prompt's response precedes its run's agent_start.
func TestJSONRPCCommandOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.Text("done"))
	p := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc")...)
	bash := p.request("pi/bash", map[string]any{"command": "sleep 37.75"})
	state := p.request("pi/get_state", nil)
	r := p.next()
	require.True(t, r["method"] == nil && r["id"] == state, "get_state is answered while bash runs, got %v\n%s", r, p.transcript())
	assert.Nil(t, r["error"])

	p.notify("$/cancelRequest", map[string]any{"id": bash})
	r = p.next()
	require.True(t, r["method"] == nil && r["id"] == bash, "bash emits no events, got %v", r)
	assert.Equal(t, true, r.obj("result")["cancelled"], "the cancel reached the bash")
	assert.False(t, processRunning("sleep 37.75"))

	prompt := p.request("pi/prompt", map[string]any{"message": "hi"})
	r = p.next()
	require.True(t, r["method"] == nil && r["id"] == prompt, "the prompt's response comes first, got %v\n%s", r, p.transcript())
	assert.Equal(t, "started", r.obj("result")["disposition"])
	r = p.next()
	assert.True(t, event(r, "agent_start"), "then its run's agent_start, got %v", r)
	p.until(func(r record) bool { return event(r, "agent_end") })

	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}
