package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// codemodeCall is a scripted codemode call running script.
func codemodeCall(id, script string) llmtest.Turn {
	args, _ := json.Marshal(map[string]string{"code": script})
	return llmtest.ToolCalls(llmtest.Call(id, "codemode", string(args)))
}

// resultTexts are a tool_execution_end's text blocks.
func resultTexts(end record) []string {
	var out []string
	for _, c := range end.obj("result")["content"].([]any) {
		if t, ok := c.(map[string]any)["text"].(string); ok {
			out = append(out, t)
		}
	}
	return out
}

// --tools +codemode offers pi's codemode tool: a script calls read and
// bash at once, each through the tool pipeline, so the nested bash asks
// the user under --approval writes (and read does not); only the
// script's output reaches the model, in pi's format. A denied nested
// call rejects in the script, and store() keeps a value for the next
// script in a codemode-store entry. Clients see each nested call as a
// call of its own, with parentToolCallId, as pi sends them.
func TestRPCCodemode(t *testing.T) {
	t.Parallel()
	script := `const [file, out] = await Promise.all([tools.read({ path: "seed.txt" }), tools.bash({ command: "echo hi" })]);
store("seen", file.trim());
return { file, out: out.output.trim(), code: out.exit_code }`
	w := newWorld(t,
		codemodeCall("c1", script),
		llmtest.Text("done"),
		codemodeCall("c2", `const denied = await tools.bash({ command: "echo again" }).catch(e => e.message); return { denied, seen: load("seen") }`),
		llmtest.Text("done"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "seed.txt"), []byte("a seed\n"), 0o644))
	p := w.start("--tools", "+codemode", "--approval", "writes")

	p.ok("1", map[string]any{"type": "prompt", "message": "run it"})
	rs := p.until(func(r record) bool { return r.is("extension_ui_request") })
	req := rs[len(rs)-1]
	assert.Equal(t, "Allow bash: echo hi?", req.str("title"), "only the nested bash asks")
	details := req.obj("details")
	assert.Equal(t, "bash", details.str("toolName"))
	assert.True(t, strings.HasPrefix(details.str("toolCallId"), "c1/"), "the nested call's id is the codemode call's, numbered: %q", details.str("toolCallId"))
	var started record
	for _, r := range rs {
		if r.is("tool_execution_start") && r.str("toolCallId") == details.str("toolCallId") {
			started = r
		}
	}
	require.NotNil(t, started, "the nested call was announced before its question")
	assert.Equal(t, "c1", started.str("parentToolCallId"))
	assert.Equal(t, "bash", started.str("toolName"))
	p.answer(req.str("id"), "Allow")
	before := rs
	rs = p.idle()
	nestedEnds := map[string]record{}
	for _, r := range append(before, rs...) {
		if r.is("tool_execution_end") && r.str("parentToolCallId") == "c1" {
			nestedEnds[r.str("toolName")] = r
		}
	}
	require.Len(t, nestedEnds, 2, "each nested call ends with its own event")
	assert.Equal(t, "a seed\n", resultText(nestedEnds["read"]))
	assert.Equal(t, "hi", nestedEnds["bash"].obj("result").obj("structuredContent")["output"].(string)[:2])
	end := toolEnd(rs, "c1")
	require.NotNil(t, end, p.transcript())
	assert.NotEqual(t, true, end["isError"])
	texts := resultTexts(end)
	require.Len(t, texts, 2, p.transcript())
	assert.Regexp(t, `^Script completed\nWall time \d+\.\d seconds\nOutput:\n$`, texts[0])
	assert.Equal(t, `{"file":"a seed\n","out":"hi","code":0}`, texts[1])
	calls := end.obj("result").obj("details")["calls"].([]any)
	require.Len(t, calls, 2)
	for _, c := range calls {
		assert.Equal(t, "ok", c.(map[string]any)["status"])
	}
	var appended bool
	for _, r := range rs {
		if r.is("entry_appended") && r.obj("entry").str("customType") == "codemode-store" {
			appended = true
			assert.Equal(t, map[string]any{"set": map[string]any{"seen": "a seed"}, "delete": []any{}}, r.obj("entry")["data"])
		}
	}
	assert.True(t, appended, "the store's write is a codemode-store entry")

	p.ok("2", map[string]any{"type": "prompt", "message": "again"})
	rs = p.until(func(r record) bool { return r.is("extension_ui_request") })
	p.answer(rs[len(rs)-1].str("id"), "Deny")
	rs = p.idle()
	end = toolEnd(rs, "c2")
	require.NotNil(t, end, p.transcript())
	texts = resultTexts(end)
	require.Len(t, texts, 2, p.transcript())
	assert.Contains(t, texts[1], `"denied":"`)
	assert.Contains(t, texts[1], "denied by the user")
	assert.Contains(t, texts[1], `"seen":"a seed"`, "load() reads what the earlier script stored")
	assert.Equal(t, 0, p.exit())
}

// Without +codemode the tool does not exist, as in pi.
func TestRPCCodemodeOnlyWhenSelected(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codemodeCall("c1", `return 1`), llmtest.Text("done"))
	p := w.start()
	p.ok("1", map[string]any{"type": "prompt", "message": "run it"})
	end := toolEnd(p.idle(), "c1")
	require.NotNil(t, end)
	assert.Equal(t, "Tool codemode not found", resultText(end))
	assert.Equal(t, 0, p.exit())
}

// An MCP server's tools with codemode exposure (pi's default) turn the
// codemode tool on, as pi's MCP extension does, and are reachable from
// scripts: searchTools() finds them, describeNamespace() names the
// server, and the call resolves to the server's CallToolResult. tool_search is not declared
// for them (pi activates it for deferred tools only).
func TestRPCCodemodeReachesMCPTools(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	w := newWorld(t,
		codemodeCall("c1", `const found = await searchTools("echo");
const ns = await describeNamespace("c");
const echoed = await tools.mcp__c__echo({ text: "hi" });
return { found: found.map(t => t.name), ns: ns.tools.includes("mcp__c__echo"), echoed }`),
		llmtest.Text("done"))
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"c": map[string]any{"command": bin}, // codemode, pi's default
	}})
	p := w.start()
	n := 0
	servers := mcpServersByName(t, func() any {
		n++
		return p.ok(fmt.Sprint("s", n), map[string]any{"type": "get_mcp_servers"})
	})
	require.Equal(t, "connected", servers["c"]["state"])
	p.ok("1", map[string]any{"type": "prompt", "message": "use echo"})
	end := toolEnd(p.idle(), "c1")
	require.NotNil(t, end, p.transcript())
	texts := resultTexts(end)
	require.Len(t, texts, 2, p.transcript())
	assert.Contains(t, texts[1], `"ns":true`)
	assert.Contains(t, texts[1], `"echoed":{"content":[{"type":"text","text":"echo: hi"}]}`, "a script gets the server's whole CallToolResult")
	assert.Regexp(t, `"found":\["mcp__c__echo"`, texts[1])
	reqs := w.srv.Requests()
	require.NotEmpty(t, reqs)
	declared := requestTools(reqs[0])
	assert.Contains(t, declared, "codemode")
	assert.NotContains(t, declared, "tool_search")
	assert.NotContains(t, declared, "mcp__c__echo")
	assert.Equal(t, 0, p.exit())
	assert.NotContains(t, p.stderr.String(), "codemode is off")
}

// toolDescription is the description a request declared a tool with.
func toolDescription(r llmtest.Request, name string) string {
	ts, _ := r.JSON()["tools"].([]any)
	for _, t := range ts {
		if m := t.(map[string]any); m["name"] == name {
			d, _ := m["description"].(string)
			return d
		}
	}
	return ""
}

// defaultTools ["+codemode"] enables codemode beside the default tools;
// codemode.mode "on" (the default) keeps them declared, each with pi's
// note on calling it from scripts, and lists none of them in codemode's
// description, "only" declares codemode alone and
// lists the tools scripts call, with their TypeScript declarations,
// within codemode.inlineBudget.
func TestRPCCodemodeModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		settings map[string]any
		declared []string
		listed   []string
	}{
		{"on", map[string]any{"defaultTools": []string{"+codemode"}}, []string{"read", "bash", "edit", "write", "codemode"}, nil},
		{"only", map[string]any{"defaultTools": []string{"+codemode"}, "codemode": map[string]any{"mode": "only"}}, []string{"codemode"}, []string{"read", "bash", "edit", "write"}},
		{"only, small budget", map[string]any{"defaultTools": []string{"+codemode"}, "codemode": map[string]any{"mode": "only", "inlineBudget": 200}}, []string{"codemode"}, []string{"write"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, llmtest.Text("hi"))
			w.writeJSON(filepath.Join(w.agentDir, "settings.json"), tc.settings)
			p := w.start("--no-session")
			p.ok("1", map[string]any{"type": "prompt", "message": "hi"})
			p.idle()
			reqs := w.srv.Requests()
			require.Len(t, reqs, 1, p.transcript())
			assert.Equal(t, tc.declared, requestTools(reqs[0]))
			desc := toolDescription(reqs[0], "codemode")
			for _, n := range []string{"read", "bash", "edit", "write"} {
				listed := strings.Contains(desc, "### `"+n+"`\n")
				assert.Equal(t, slices.Contains(tc.listed, n), listed, "%s listed in codemode's description", n)
			}
			if len(tc.listed) > 0 {
				assert.Contains(t, desc, "declare const tools: { "+tc.listed[0]+"(args: {")
			}
			bash := toolDescription(reqs[0], "bash")
			if tc.name == "on" {
				assert.True(t, strings.HasSuffix(bash, "\n\nCodemode: `tools.bash(args)` resolves to `{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`."), "pi's note on the declared bash: %q", bash)
				assert.True(t, strings.HasSuffix(toolDescription(reqs[0], "read"), "resolves to `string | { data: string; mimeType: string; note: string; type: \"image\"; }`."))
				assert.True(t, strings.HasSuffix(toolDescription(reqs[0], "edit"), "\n\nCodemode: `tools.edit(args)` resolves to a string."))
			}
			assert.Equal(t, 0, p.exit())
		})
	}
}

// The nested calls a script made are recorded on the codemode call's
// toolResult message as pi 1.6.0 records them (nestedCalls: each call's
// id, name, arguments, status, duration and error, never its result;
// arguments over 8 KiB kept only as their size, and complete false then),
// in the message_end event and in the session file. The built-ins are
// frozen before the script runs, so patching Array.prototype.toJSON does
// not spoil the returned value.
func TestRPCCodemodeRecordsNestedCalls(t *testing.T) {
	t.Parallel()
	script := `await tools.read({ path: "seed.txt" });
await tools.read({ path: "missing.txt" }).catch(() => {});
await tools.bash({ command: "echo " + "x".repeat(9000) + " >/dev/null" });
Array.prototype.toJSON = () => "spoiled";
return [1, 2];`
	w := newWorld(t, codemodeCall("c1", script), llmtest.Text("done"), codemodeCall("c2", `return 1`), llmtest.Text("done"))
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "seed.txt"), []byte("a seed\n"), 0o644))
	p := w.start("--tools", "+codemode")
	p.ok("1", map[string]any{"type": "prompt", "message": "run it"})
	rs := p.idle()
	end := toolEnd(rs, "c1")
	require.NotNil(t, end, p.transcript())
	texts := resultTexts(end)
	require.Len(t, texts, 2, p.transcript())
	assert.Equal(t, "[1,2]", texts[1], "a patched built-in does not reach the result")

	var msg record
	for _, r := range rs {
		if r.is("message_end") && r.obj("message").str("toolCallId") == "c1" {
			msg = r.obj("message")
		}
	}
	require.NotNil(t, msg, p.transcript())
	nested := msg.obj("nestedCalls")
	require.NotNil(t, nested, "the toolResult message records its nested calls: %v", msg)
	assert.Equal(t, false, nested["complete"], "the bash call's arguments were too large to keep")
	calls := nested["calls"].([]any)
	require.Len(t, calls, 3)
	read, missing, bash := record(calls[0].(map[string]any)), record(calls[1].(map[string]any)), record(calls[2].(map[string]any))
	assert.Equal(t, "c1/1", read.str("id"))
	assert.Equal(t, "read", read.str("name"))
	assert.Equal(t, "ok", read.str("status"))
	assert.Equal(t, map[string]any{"path": "seed.txt"}, read["arguments"])
	assert.Contains(t, read, "durationMs")
	assert.NotContains(t, read, "error")
	assert.Equal(t, "error", missing.str("status"))
	assert.Equal(t, "File not found: missing.txt", missing.str("error"))
	assert.Equal(t, "ok", bash.str("status"))
	assert.NotContains(t, bash, "arguments")
	assert.EqualValues(t, len(`{"command":"echo `)+9000+len(` >/dev/null"}`), bash["argumentsBytes"])

	p.ok("2", map[string]any{"type": "prompt", "message": "again"})
	rs = p.idle()
	for _, r := range rs {
		if r.is("message_end") && r.obj("message").str("toolCallId") == "c2" {
			assert.NotContains(t, r.obj("message"), "nestedCalls", "a script that called no tool has no record")
		}
	}
	assert.Equal(t, 0, p.exit())

	files := sessionFiles(t, w.agentDir)
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var saved int
	for _, line := range strings.Split(string(b), "\n") {
		var e struct {
			Message struct {
				ToolCallID  string         `json:"toolCallId"`
				NestedCalls map[string]any `json:"nestedCalls"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Message.ToolCallID == "c1" {
			saved++
			assert.Len(t, e.Message.NestedCalls["calls"], 3, "the session keeps the record")
		}
	}
	assert.Equal(t, 1, saved)
}

// Scripts share the process's codemode workers, two by default as in pi
// (PI_CODEMODE_MAX_WORKERS changes it): with one, of two scripts called
// together the second waits while the first holds the worker (its nested
// bash waits on the user), and an abort ends the wait: that script did
// not start.
func TestRPCCodemodeScriptsShareTheWorkers(t *testing.T) {
	t.Parallel()
	script := `await tools.bash({ command: "echo hi" }); return "ran"`
	args, _ := json.Marshal(map[string]string{"code": script})
	w := newWorld(t, llmtest.ToolCalls(llmtest.Call("c1", "codemode", string(args)), llmtest.Call("c2", "codemode", string(args))), llmtest.Text("done"))
	p := launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline, []string{"PI_CODEMODE_MAX_WORKERS=1"},
		gopiBinary(t), "--mode", "rpc", "--model", "scripted/scripted-1", "--tools", "+codemode", "--approval", "writes")
	p.ok("1", map[string]any{"type": "prompt", "message": "run both"})
	rs := p.until(func(r record) bool { return r.is("extension_ui_request") })
	asking := rs[len(rs)-1].obj("details").str("toolCallId")
	p.send(map[string]any{"id": "a", "type": "abort"})
	rs = append(rs, p.idle()...)
	var notStarted []string
	for _, id := range []string{"c1", "c2"} {
		end := toolEnd(rs, id)
		require.NotNil(t, end, p.transcript())
		assert.Equal(t, true, end["isError"])
		texts := resultTexts(end)
		require.Len(t, texts, 2, p.transcript())
		if strings.HasSuffix(texts[1], "\n\nThe script did not start.") {
			notStarted = append(notStarted, id)
			assert.Regexp(t, `^Script error:\nScript aborted: .+\n\nThe script did not start\.$`, texts[1])
		}
	}
	require.Len(t, notStarted, 1, "one script ran, the other waited for the worker:\n%s", p.transcript())
	assert.False(t, strings.HasPrefix(asking, notStarted[0]+"/"), "the script that asked is the one that ran")
	for _, r := range rs {
		if strings.HasPrefix(r.str("type"), "tool_execution_") {
			assert.NotEqual(t, notStarted[0], r.str("parentToolCallId"), "the waiting script made no call")
		}
	}
	assert.Equal(t, 0, p.exit())
}
