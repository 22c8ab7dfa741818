package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// startApprovalJSONRPC runs gopi in the JSON-RPC dialect with the
// approval gate on and initializes it with capabilities.
func (w *world) startApprovalJSONRPC(capabilities map[string]any, extra ...string) *jproc {
	w.t.Helper()
	p := w.startJSONRPC(true, scriptedArgs(append([]string{"--mode", "jsonrpc", "--approval", "writes"}, extra...)...)...)
	p.call("initialize", map[string]any{"capabilities": capabilities})
	p.notify("initialized", map[string]any{})
	return p
}

// jsonrpcToolEnd finds the tool_execution_end event of a call.
func jsonrpcToolEnd(rs []record, callID string) record {
	for _, r := range rs {
		if event(r, "tool_execution_end") && r.obj("params").str("toolCallId") == callID {
			return r.obj("params")
		}
	}
	return nil
}

// Issue 25: in the JSON-RPC dialect too, an abort while an approval
// question waits sends no further question; the later calls end as
// aborted.
func TestJSONRPCApprovalAbortAsksNoMore(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(
			llmtest.Call("w1", "write", `{"path":"a.txt","content":"a\n"}`),
			llmtest.Call("b1", "bash", `{"command":"echo x > x.txt"}`),
			llmtest.Call("w2", "write", `{"path":"c.txt","content":"c\n"}`),
		),
	)
	p := w.startApprovalJSONRPC(map[string]any{"window": map[string]any{"showMessage": map[string]any{}}})
	p.request("pi/prompt", map[string]any{"message": "write a; bash x; write c"})
	rs := p.until(func(r record) bool { return r["method"] == "window/showMessageRequest" })
	assert.Equal(t, "Allow write: a.txt?", rs[len(rs)-1].obj("params").str("message"))

	abort := p.request("pi/abort", nil)
	rs = p.proc.collect(
		func(r record) bool { return r["method"] == nil && r["id"] == abort },
		func(r record) bool { return event(r, "agent_end") },
	)
	for _, r := range rs {
		assert.NotEqual(t, "window/showMessageRequest", r["method"], "asked after the abort: %v", r)
	}
	for _, id := range []string{"w1", "b1", "w2"} {
		end := jsonrpcToolEnd(rs, id)
		require.NotNil(t, end, "%s has no end\n%s", id, p.transcript())
		assert.Equal(t, true, end["isError"])
		assert.Equal(t, "Operation aborted", resultText(end), id)
	}
	for _, f := range []string{"a.txt", "x.txt", "c.txt"} {
		assert.NoFileExists(t, filepath.Join(w.cwd, f))
	}
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// Issue 25: a client that declared no way to show dialogs is never asked,
// so its gated calls are not "denied by the user": the result says that
// the question could not be shown and where the docs say how to change
// that, and the client hears it once as a window/showMessage.
func TestJSONRPCApprovalWithoutDialogsSaysWhy(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"a.txt","content":"a\n"}`)),
		llmtest.Text("not written"),
		llmtest.ToolCalls(llmtest.Call("b1", "bash", `{"command":"echo x > x.txt"}`)),
		llmtest.Text("not run"),
	)
	p := w.startApprovalJSONRPC(map[string]any{})
	var rs []record
	for _, msg := range []string{"write a", "run x"} {
		id := p.request("pi/prompt", map[string]any{"message": msg})
		rs = append(rs, p.proc.collect(
			func(r record) bool { return r["method"] == nil && r["id"] == id },
			func(r record) bool { return event(r, "agent_end") },
		)...)
	}
	var notes []string
	for _, r := range rs {
		assert.NotEqual(t, "window/showMessageRequest", r["method"], "asked a client that cannot show it: %v", r)
		if r["method"] == "window/showMessage" {
			notes = append(notes, r.obj("params").str("message"))
		}
	}
	for _, id := range []string{"w1", "b1"} {
		end := jsonrpcToolEnd(rs, id)
		require.NotNil(t, end, "%s has no end\n%s", id, p.transcript())
		assert.Equal(t, true, end["isError"])
		text := resultText(end)
		assert.NotContains(t, text, "denied by the user")
		assert.Contains(t, text, "not run: approval is required and this client cannot show approval dialogs")
		assert.Contains(t, text, "docs/jsonrpc.md")
	}
	require.Len(t, notes, 1, "told once\n%s", p.transcript())
	assert.Contains(t, notes[0], "cannot show approval dialogs")
	assert.NoFileExists(t, filepath.Join(w.cwd, "a.txt"))
	assert.NoFileExists(t, filepath.Join(w.cwd, "x.txt"))
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// Issue 25: window/showMessageRequest's message is the question with
// every line of the command, escapes shown.
func TestJSONRPCApprovalQuestionShowsEveryLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("b1", "bash", `{"command":"echo harmless\ntouch pwned.txt\u001b[8m"}`)),
		llmtest.Text("denied"),
	)
	p := w.startApprovalJSONRPC(map[string]any{"window": map[string]any{"showMessage": map[string]any{}}})
	p.request("pi/prompt", map[string]any{"message": "run it"})
	rs := p.until(func(r record) bool { return r["method"] == "window/showMessageRequest" })
	ask := rs[len(rs)-1]
	assert.Equal(t, `Allow bash: echo harmless`+"\n"+`touch pwned.txt\x1b[8m?`, ask.obj("params").str("message"))
	p.write(map[string]any{"id": ask["id"], "result": map[string]any{"title": "Deny"}})
	rs = append(rs, p.until(func(r record) bool { return event(r, "agent_end") })...)
	assert.Contains(t, resultText(jsonrpcToolEnd(rs, "b1")), "denied by the user")
	assert.NoFileExists(t, filepath.Join(w.cwd, "pwned.txt"))
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// In the JSON-RPC dialect the user's version of an edit or write rides in
// the window/showMessageRequest result beside the chosen title; the call
// writes exactly it, and its result tells the model. A bash call ignores
// it.
func TestJSONRPCApprovalAnswerCarriesTheUserVersion(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("e1", "edit", `{"path":"seed.txt","edits":[{"oldText":"seed","newText":"sprout"}]}`)),
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"out.txt","content":"hello\n"}`)),
		llmtest.ToolCalls(llmtest.Call("b1", "bash", `{"command":"echo x > x.txt"}`)),
		llmtest.Text("done"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "seed.txt"), []byte("a seed\r\nand soil\r\n"), 0o644))
	p := w.startApprovalJSONRPC(map[string]any{"window": map[string]any{"showMessage": map[string]any{}}})
	p.request("pi/prompt", map[string]any{"message": "go"})
	var asked int
	rs := p.until(func(r record) bool {
		if r["method"] != "window/showMessageRequest" {
			return event(r, "agent_end")
		}
		asked++
		result := map[string]any{"title": "Allow"}
		switch r.obj("params").obj("details").str("toolName") {
		case "edit":
			result["content"] = "a tree\nand soil\r\n"
		case "write":
			result = map[string]any{"title": "Allow always", "content": "hi there\n"}
		case "bash":
			result["content"] = "touch other.txt"
		}
		p.write(map[string]any{"id": r["id"], "result": result})
		return false
	})
	require.Equal(t, 3, asked, p.transcript())

	changed := "the user changed your proposed change"
	data, err := os.ReadFile(filepath.Join(w.cwd, "seed.txt"))
	require.NoError(t, err)
	assert.Equal(t, "a tree\nand soil\r\n", string(data), "written as given, line endings and all")
	end := jsonrpcToolEnd(rs, "e1")
	require.NotNil(t, end, p.transcript())
	assert.Equal(t, false, end["isError"])
	assert.Contains(t, strings.ToLower(resultText(end)), changed)

	data, err = os.ReadFile(filepath.Join(w.cwd, "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi there\n", string(data))
	assert.Contains(t, strings.ToLower(resultText(jsonrpcToolEnd(rs, "w1"))), changed)

	assert.NotContains(t, strings.ToLower(resultText(jsonrpcToolEnd(rs, "b1"))), changed)
	assert.FileExists(t, filepath.Join(w.cwd, "x.txt"))
	assert.NoFileExists(t, filepath.Join(w.cwd, "other.txt"))
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// Issue 37, item 5, in the JSON-RPC dialect: an approved edit (here with
// the user's own version of it) whose file became a link to a file
// outside the project while window/showMessageRequest waited, and an
// approved write of a new file where a dangling link appeared meanwhile,
// both fail saying why; nothing outside is written or made.
func TestJSONRPCApprovedCallRefusesAFileSwappedForALink(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("e1", "edit", `{"path":"conf.txt","edits":[{"oldText":"key=1","newText":"key=2"}]}`)),
		llmtest.ToolCalls(llmtest.Call("w1", "write", `{"path":"new.txt","content":"pwned\n"}`)),
		llmtest.Text("done"),
	)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	conf, made := filepath.Join(outside, "conf.txt"), filepath.Join(outside, "made.txt")
	require.NoError(t, os.WriteFile(conf, []byte("key=1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "conf.txt"), []byte("key=1\n"), 0o644))
	// The dialect's default sandbox would refuse the write outside the
	// project before the pin is looked at; this test is the pin's.
	p := w.startApprovalJSONRPC(map[string]any{"window": map[string]any{"showMessage": map[string]any{}}}, "--sandbox", "off")
	p.request("pi/prompt", map[string]any{"message": "go"})
	var asked []string
	rs := p.until(func(r record) bool {
		if r["method"] != "window/showMessageRequest" {
			return event(r, "agent_end")
		}
		asked = append(asked, r.obj("params").str("message"))
		result := map[string]any{"title": "Allow"}
		switch r.obj("params").obj("details").str("toolCallId") {
		case "e1":
			require.NoError(t, os.Remove(filepath.Join(w.cwd, "conf.txt")))
			require.NoError(t, os.Symlink(conf, filepath.Join(w.cwd, "conf.txt")))
			result["content"] = "key=3\n"
		case "w1":
			require.NoError(t, os.Symlink(made, filepath.Join(w.cwd, "new.txt")))
		}
		p.write(map[string]any{"id": r["id"], "result": result})
		return false
	})
	assert.Equal(t, []string{"Allow edit: conf.txt?", "Allow write: new.txt?"}, asked)
	for id, want := range map[string]string{
		"e1": filepath.Join(w.cwd, "conf.txt") + " changed while the approval question waited (it is now a link to " + conf + ")",
		"w1": filepath.Join(w.cwd, "new.txt") + " changed while the approval question waited (it is now a link to " + made + ")",
	} {
		end := jsonrpcToolEnd(rs, id)
		require.NotNil(t, end, p.transcript())
		assert.Equal(t, true, end["isError"], id)
		assert.Contains(t, resultText(end), want, id)
		assert.Contains(t, resultText(end), "nothing was read or written", id)
	}
	data, err := os.ReadFile(conf)
	require.NoError(t, err)
	assert.Equal(t, "key=1\n", string(data), "the file outside is byte-identical")
	assert.NoFileExists(t, made)
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// A codemode script's nested bash asks in the JSON-RPC dialect too; its
// pi/event notifications announce the nested call (parentToolCallId)
// before the question, and the script's output ends the codemode call.
func TestJSONRPCCodemodeNestedCallAsks(t *testing.T) {
	t.Parallel()
	w := newWorld(t,
		codemodeCall("c1", `return (await tools.bash({ command: "echo nested" })).output.trim()`),
		llmtest.Text("done"),
	)
	p := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc", "--approval", "writes", "--tools", "+codemode")...)
	p.call("initialize", map[string]any{"capabilities": map[string]any{"window": map[string]any{"showMessage": map[string]any{}}}})
	p.notify("initialized", map[string]any{})
	p.request("pi/prompt", map[string]any{"message": "go"})
	var asked record
	rs := p.until(func(r record) bool {
		if r["method"] != "window/showMessageRequest" {
			return event(r, "agent_end")
		}
		asked = r.obj("params")
		p.write(map[string]any{"id": r["id"], "result": map[string]any{"title": "Allow"}})
		return false
	})
	require.NotNil(t, asked, p.transcript())
	assert.Equal(t, "Allow bash: echo nested?", asked.str("message"))
	nested := asked.obj("details").str("toolCallId")
	assert.Equal(t, "c1/1", nested)
	var announced bool
	for _, r := range rs {
		if event(r, "tool_execution_start") && r.obj("params").str("toolCallId") == nested {
			announced = true
			assert.Equal(t, "c1", r.obj("params").str("parentToolCallId"))
		}
	}
	assert.True(t, announced, "the nested call has events of its own")
	end := jsonrpcToolEnd(rs, "c1")
	require.NotNil(t, end, p.transcript())
	assert.Equal(t, false, end["isError"])
	texts := resultTexts(end)
	require.Len(t, texts, 2)
	assert.Equal(t, "nested", texts[1])
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}
