package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/gopi-dev/gopi/core/sandbox"
	"github.com/gopi-dev/gopi/rpc"
)

// sandboxWorld is a world whose project sits beside a directory outside
// it, with a link from the project to that directory.
type sandboxWorld struct {
	*world
	outside string
}

func newSandboxWorld(t *testing.T, turns ...llmtest.Turn) sandboxWorld {
	t.Helper()
	w := newWorld(t, turns...)
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w.cwd = filepath.Join(base, "project")
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.Mkdir(w.cwd, 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(w.cwd, "out")))
	return sandboxWorld{w, outside}
}

// requireSandbox skips a test on a kernel that cannot run the sandbox
// (it fails in CI, where GOPI_REQUIRE_TOOLS is set).
func requireSandbox(t *testing.T) {
	t.Helper()
	sb := sandbox.New(sandbox.Policy{Mode: sandbox.WorkspaceWrite, TempDir: t.TempDir()}, sandbox.WithLauncher(gopiBinary(t)))
	if err := sb.Problem(); err != nil {
		if os.Getenv("GOPI_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func sandboxBash(t *testing.T, id, command string) llmtest.Block {
	return llmtest.Call(id, "bash", mustJSON(t, map[string]any{"command": command}))
}

// TestSandboxWorkspaceWriteConfinesTheBashTool: in workspace-write the
// bash tool writes in the project and $TMPDIR, and not outside: not
// directly, not through a link, not from a background job. The model
// reads that the sandbox may have refused it, and get_state names the
// layers.
func TestSandboxWorkspaceWriteConfinesTheBashTool(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	w := newSandboxWorld(t,
		llmtest.ToolCalls(
			sandboxBash(t, "in", `echo in > inside.txt && echo t > "$TMPDIR/t.txt" && cat "$TMPDIR/t.txt"`),
			sandboxBash(t, "direct", "echo x > ../outside/direct.txt"),
			sandboxBash(t, "link", "echo x > out/linked.txt"),
			sandboxBash(t, "bg", "(sleep 0.1; echo x > ../outside/bg.txt) & wait $!"),
		),
		llmtest.Text("done"),
	)
	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"sandbox": map[string]any{"mode": "workspace-write"}})
	p := w.start()

	st := p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)
	assert.Equal(t, map[string]any{"mode": "workspace-write", "network": false, "layers": []any{"landlock-fs", "landlock-net", "seccomp"}}, st["sandbox"])

	p.ok("1", map[string]any{"type": "prompt", "message": "write things"})
	rs := p.idle()
	in := toolEnd(rs, "in")
	require.NotNil(t, in)
	assert.Equal(t, false, in["isError"], resultText(in))
	assert.Equal(t, "t\n", resultText(in))
	assert.FileExists(t, filepath.Join(w.cwd, "inside.txt"))
	for _, id := range []string{"direct", "link", "bg"} {
		end := toolEnd(rs, id)
		require.NotNil(t, end, id)
		assert.Equal(t, true, end["isError"], id)
		assert.Contains(t, resultText(end), "Permission denied", id)
		assert.Contains(t, resultText(end), "The command ran in gopi's sandbox (workspace-write): it may write only in "+w.cwd, id)
	}
	entries, err := os.ReadDir(w.outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written outside the project")
	assert.Equal(t, 0, p.exit())
}

// TestSandboxNetwork: a loopback TCP listener is out of reach with the
// network off (the default) and in reach with "network": true.
func TestSandboxNetwork(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	dial := "exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + " && echo connected"
	for _, network := range []bool{false, true} {
		t.Run("network="+strconv.FormatBool(network), func(t *testing.T) {
			t.Parallel()
			w := newSandboxWorld(t, llmtest.ToolCalls(sandboxBash(t, "b1", dial)), llmtest.Text("done"))
			w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"sandbox": map[string]any{"network": network}})
			p := w.start("--sandbox", "workspace-write")
			p.ok("1", map[string]any{"type": "prompt", "message": "dial"})
			end := toolEnd(p.idle(), "b1")
			require.NotNil(t, end)
			if network {
				assert.Equal(t, false, end["isError"], resultText(end))
				assert.Equal(t, "connected\n", resultText(end))
			} else {
				assert.Equal(t, true, end["isError"])
				assert.NotContains(t, resultText(end), "connected\n")
				assert.Contains(t, resultText(end), "the network is off")
			}
			assert.Equal(t, 0, p.exit())
		})
	}
}

// TestSandboxReadOnly: read-only commands read the project and write
// only $TMPDIR; the write tool is refused too.
func TestSandboxReadOnly(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	w := newSandboxWorld(t,
		llmtest.ToolCalls(
			sandboxBash(t, "read", `cat f.txt && echo t > "$TMPDIR/t" && echo tmp-ok`),
			sandboxBash(t, "write", "echo x > f.txt"),
			llmtest.Call("tool", "write", `{"path":"g.txt","content":"x"}`),
		),
		llmtest.Text("done"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.cwd, "f.txt"), []byte("data\n"), 0o644))
	p := w.start("--sandbox", "read-only")
	p.ok("1", map[string]any{"type": "prompt", "message": "try"})
	rs := p.idle()
	assert.Equal(t, "data\ntmp-ok\n", resultText(toolEnd(rs, "read")))
	assert.Equal(t, true, toolEnd(rs, "write")["isError"])
	assert.Contains(t, resultText(toolEnd(rs, "write")), "Permission denied")
	assert.Equal(t, true, toolEnd(rs, "tool")["isError"])
	assert.Contains(t, resultText(toolEnd(rs, "tool")), "gopi's sandbox denied the write")
	data, _ := os.ReadFile(filepath.Join(w.cwd, "f.txt"))
	assert.Equal(t, "data\n", string(data))
	assert.NoFileExists(t, filepath.Join(w.cwd, "g.txt"))
	assert.Equal(t, 0, p.exit())
}

// TestSandboxWriteAndEditToolsStayInTheProject: the write and edit tools
// refuse a target outside the writable roots, named directly or reached
// through a link, and write inside.
func TestSandboxWriteAndEditToolsStayInTheProject(t *testing.T) {
	t.Parallel()
	w := newSandboxWorld(t)
	w.srv.Push(
		llmtest.ToolCalls(
			llmtest.Call("in", "write", `{"path":"in.txt","content":"x"}`),
			llmtest.Call("abs", "write", mustJSON(t, map[string]any{"path": filepath.Join(w.outside, "abs.txt"), "content": "x"})),
			llmtest.Call("link", "write", `{"path":"out/link.txt","content":"x"}`),
			llmtest.Call("edit", "edit", `{"path":"out/f.txt","edits":[{"oldText":"old","newText":"new"}]}`),
		),
		llmtest.Text("done"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(w.outside, "f.txt"), []byte("old"), 0o644))
	p := w.start("--sandbox", "workspace-write")
	p.ok("1", map[string]any{"type": "prompt", "message": "write"})
	rs := p.idle()
	assert.Equal(t, false, toolEnd(rs, "in")["isError"])
	for _, id := range []string{"abs", "link", "edit"} {
		end := toolEnd(rs, id)
		assert.Equal(t, true, end["isError"], id)
		assert.Contains(t, resultText(end), "gopi's sandbox denied the write", id)
		assert.Contains(t, resultText(end), "nothing was written", id)
	}
	entries, _ := os.ReadDir(w.outside)
	assert.Len(t, entries, 1)
	data, _ := os.ReadFile(filepath.Join(w.outside, "f.txt"))
	assert.Equal(t, "old", string(data))
	assert.Equal(t, 0, p.exit())
}

// TestSandboxFailsClosed: on a kernel without Landlock (simulated by the
// test hook) gopi says so once at start, reports it in get_state, and
// refuses every command instead of running it unconfined.
func TestSandboxFailsClosed(t *testing.T) {
	t.Parallel()
	w := newSandboxWorld(t, llmtest.ToolCalls(sandboxBash(t, "b1", "touch ran")), llmtest.Text("done"))
	p := w.startEnv([]string{sandbox.TestABIEnv + "=0"}, "--sandbox", "workspace-write")
	st := p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)
	sb := st["sandbox"].(map[string]any)
	assert.Equal(t, "workspace-write", sb["mode"])
	assert.Equal(t, []any{}, sb["layers"])
	assert.Contains(t, sb["problem"], "no Landlock")
	p.ok("1", map[string]any{"type": "prompt", "message": "run"})
	end := toolEnd(p.idle(), "b1")
	assert.Equal(t, true, end["isError"])
	assert.Contains(t, resultText(end), "cannot be enforced here, so commands are refused")
	assert.NoFileExists(t, filepath.Join(w.cwd, "ran"))
	assert.Equal(t, 0, p.exit())
	assert.Contains(t, p.stderr.String(), "gopi: sandbox workspace-write: gopi's sandbox cannot be enforced here")
}

// TestSandboxProjectMayOnlyTighten: a trusted project's settings make
// the mode stricter and never looser; the mode off is no sandbox at all.
func TestSandboxProjectMayOnlyTighten(t *testing.T) {
	t.Parallel()
	cases := []struct {
		user, project, want string
	}{
		{"workspace-write", "read-only", "read-only"},
		{"read-only", "off", "read-only"},
		{"", "", "off"},
	}
	for _, tc := range cases {
		t.Run(tc.user+"+"+tc.project, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"sandbox": map[string]any{"mode": tc.user}})
			w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"sandbox": map[string]any{"mode": tc.project}})
			w.trustProject()
			p := w.start()
			st := p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)
			if tc.want == "off" {
				assert.NotContains(t, st, "sandbox", "with the mode off get_state is pi's")
			} else {
				assert.Equal(t, tc.want, st["sandbox"].(map[string]any)["mode"])
			}
			assert.Equal(t, 0, p.exit())
		})
	}
}

// TestSandboxFlagIsChecked: an unknown mode stops gopi with a usage
// error, from the flag and from the settings.
func TestSandboxFlagIsChecked(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.start("--sandbox", "strict")
	assert.Equal(t, 2, p.exit())
	assert.Contains(t, p.stderr.String(), `--sandbox: unknown sandbox mode "strict"`)

	w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"sandbox": map[string]any{"network": "yes"}})
	p = w.start()
	assert.Equal(t, 1, p.exit())
	assert.Contains(t, p.stderr.String(), `"sandbox"`)
}

// TestSandboxEscapeQuestion: with the approval gate on, a bash command
// the sandbox stopped (a write outside the project) is put to the user
// after the command's own question: "Allow once" runs it once more
// outside the sandbox, and the file is written; "Deny" keeps the
// sandboxed result, and nothing is. With the gate off nothing is asked.
func TestSandboxEscapeQuestion(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	for _, answer := range []string{"Allow once", "Deny", "off"} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			w := newSandboxWorld(t)
			target := filepath.Join(w.outside, "escaped.txt")
			command := "echo out > " + target
			w.srv.Push(llmtest.ToolCalls(sandboxBash(t, "b1", command)), llmtest.Text("done"))
			approval := "writes"
			if answer == "off" {
				approval = "off"
			}
			p := w.start("--sandbox", "workspace-write", "--approval", approval)
			p.ok("1", map[string]any{"type": "prompt", "message": "write outside"})
			var asked []record
			var rs []record
			for {
				r := p.next()
				rs = append(rs, r)
				if r.is("agent_end") {
					break
				}
				if !r.is("extension_ui_request") || r.str("method") != "select" {
					continue
				}
				asked = append(asked, r)
				if len(asked) == 1 {
					p.answer(r.str("id"), "Allow") // the command's own question
				} else {
					p.answer(r.str("id"), answer)
				}
			}
			end := toolEnd(rs, "b1")
			require.NotNil(t, end)
			if answer == "off" {
				assert.Empty(t, asked, "nothing asked with the gate off")
				assert.Equal(t, true, end["isError"])
				assert.NoFileExists(t, target)
				assert.Equal(t, 0, p.exit())
				return
			}
			require.Len(t, asked, 2, "the command's question, then the escape's")
			assert.Equal(t, "Allow bash: "+command+"?", asked[0].str("title"))
			esc := asked[1]
			assert.Equal(t, "gopi's sandbox stopped bash: "+command+"\nRun it once outside the sandbox?", esc.str("title"))
			assert.Equal(t, []any{"Allow once", "Deny"}, esc["options"])
			details := esc.obj("details")
			assert.Equal(t, "b1", details.str("toolCallId"))
			assert.Equal(t, true, details["sandboxEscape"])
			if answer == "Deny" {
				assert.Equal(t, true, end["isError"])
				assert.Contains(t, resultText(end), "Permission denied")
				assert.NoFileExists(t, target)
			} else {
				assert.Equal(t, false, end["isError"], resultText(end))
				assert.Contains(t, resultText(end), "the user allowed it to run once more outside the sandbox")
				data, err := os.ReadFile(target)
				require.NoError(t, err)
				assert.Equal(t, "out\n", string(data))
			}
			assert.Equal(t, 0, p.exit())
		})
	}
}

// TestACPSandboxEscape: over ACP the escape question is a second
// session/request_permission on the same call, with only allow once and
// reject once; allow_once lets the command write outside the project,
// reject_once does not.
func TestACPSandboxEscape(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	cwd, outside := t.TempDir(), t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session", "--approval", "writes", "--sandbox", "workspace-write")
	s := p.started(cwd)
	for _, option := range []string{"allow_once", "reject_once"} {
		target := filepath.Join(outside, option+".txt")
		command := "echo out > " + target
		id := p.prompt(s, "bash: "+command)
		_, req := p.asked()
		require.Equal(t, "session/request_permission", req.str("method"))
		first := req.obj("params").obj("toolCall")
		assert.Equal(t, command, first.str("title"), "the command's own question")
		p.choose(req, "allow_once")
		_, req = p.asked()
		require.Equal(t, "session/request_permission", req.str("method"))
		params := req.obj("params")
		call := params.obj("toolCall")
		assert.Equal(t, first.str("toolCallId"), call.str("toolCallId"), "the same call")
		assert.Equal(t, "Run outside gopi's sandbox: "+command, call.str("title"))
		var kinds []string
		for _, o := range params["options"].([]any) {
			kinds = append(kinds, record(o.(map[string]any)).str("kind"))
		}
		assert.Equal(t, []string{"allow_once", "reject_once"}, kinds)
		p.choose(req, option)
		ups, res := p.result(id)
		assert.Equal(t, "end_turn", res.str("stopReason"))
		status, text := acpToolEnd(t, ups)
		if option == "allow_once" {
			assert.Equal(t, "completed", status, text)
			assert.FileExists(t, target)
		} else {
			assert.Equal(t, "failed", status)
			assert.Contains(t, text, "Permission denied")
			assert.NoFileExists(t, target)
		}
	}
	assert.Equal(t, 0, p.exit())
}

// TestJSONRPCSandboxEscape: in the JSON-RPC dialect the escape question
// is a window/showMessageRequest with the actions "Allow once" and
// "Deny"; "Allow once" lets the command write outside the project.
func TestJSONRPCSandboxEscape(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	w := newSandboxWorld(t)
	target := filepath.Join(w.outside, "escaped.txt")
	w.srv.Push(llmtest.ToolCalls(sandboxBash(t, "b1", "echo out > "+target)), llmtest.Text("done"))
	p := w.startJSONRPC(true, scriptedArgs("--mode", "jsonrpc", "--approval", "writes", "--sandbox", "workspace-write")...)
	p.call("initialize", map[string]any{"capabilities": map[string]any{"window": map[string]any{"showMessage": map[string]any{}}}})
	p.notify("initialized", map[string]any{})
	p.request("pi/prompt", map[string]any{"message": "write outside"})
	rs := p.until(func(r record) bool { return r["method"] == "window/showMessageRequest" })
	p.write(map[string]any{"id": rs[len(rs)-1]["id"], "result": map[string]any{"title": "Allow"}})
	rs = p.until(func(r record) bool { return r["method"] == "window/showMessageRequest" })
	ask := rs[len(rs)-1].obj("params")
	assert.Contains(t, ask.str("message"), "gopi's sandbox stopped bash: echo out > "+target+"\nRun it once outside the sandbox?")
	assert.Equal(t, []any{map[string]any{"title": "Allow once"}, map[string]any{"title": "Deny"}}, ask["actions"])
	assert.Equal(t, true, ask.obj("details")["sandboxEscape"])
	p.write(map[string]any{"id": rs[len(rs)-1]["id"], "result": map[string]any{"title": "Allow once"}})
	rs = p.until(func(r record) bool { return event(r, "agent_end") })
	end := jsonrpcToolEnd(rs, "b1")
	require.NotNil(t, end)
	assert.Equal(t, false, end["isError"], resultText(end))
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "out\n", string(data))
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(t, 0, p.wait())
}

// TestACPSandboxAdditionalDirectories: in workspace-write an ACP
// session's additional directories are writable as its own directory
// is, and those a session/resume gives replace them from then on; a
// client that lends its terminal still has bash's commands run by gopi,
// confined, not in the terminal, which gopi cannot confine.
func TestACPSandboxAdditionalDirectories(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	cwd, extra, later := t.TempDir(), t.TempDir(), t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--sandbox", "workspace-write", "--approval", "off")
	p.result(p.request("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"terminal": true}}))
	_, res := p.result(p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "additionalDirectories": []any{extra}}))
	s := res.str("sessionId")
	p.commandsOf(s)
	write := func(dir string) string {
		t.Helper()
		ups, resp, asked := p.served(p.prompt(s, "bash: echo x > "+filepath.Join(dir, "f.txt")), func(method string, _ record) reply {
			t.Errorf("gopi asked %s", method)
			return reply{err: "not served"}
		})
		require.Nil(t, resp["error"])
		assert.Empty(t, asked, "the editor's terminal is not used while the sandbox is on")
		status, _ := acpToolEnd(t, ups)
		return status
	}
	assert.Equal(t, "completed", write(extra))
	assert.FileExists(t, filepath.Join(extra, "f.txt"))
	assert.Equal(t, "failed", write(later), "not one of the session's directories yet")
	assert.NoFileExists(t, filepath.Join(later, "f.txt"))

	p.result(p.request("session/resume", map[string]any{"sessionId": s, "cwd": cwd, "additionalDirectories": []any{later}}))
	require.NoError(t, os.Remove(filepath.Join(extra, "f.txt")))
	assert.Equal(t, "completed", write(later))
	assert.FileExists(t, filepath.Join(later, "f.txt"))
	assert.Equal(t, "failed", write(extra), "no longer one of them")
	assert.NoFileExists(t, filepath.Join(extra, "f.txt"))
	assert.Equal(t, 0, p.exit())
}

// jsonrpcSandbox starts --mode jsonrpc with env and extra flags, and
// returns get_state's "sandbox" (nil when left out) and the process.
func (w *world) jsonrpcSandbox(env []string, extra ...string) (any, *jproc) {
	w.t.Helper()
	args := append([]string{gopiBinary(w.t), "--mode", "jsonrpc", "--model", "scripted/scripted-1"}, extra...)
	p := &jproc{proc: launchArgv(w.t, w.cwd, w.agentDir, rpc.FramingHeader, env, args...), header: true}
	p.call("initialize", map[string]any{"capabilities": map[string]any{}})
	p.notify("initialized", map[string]any{})
	st := p.call("pi/get_state", nil).(map[string]any)
	return st["sandbox"], p
}

// stop ends a JSON-RPC process as an editor does and checks its exit.
func (p *jproc) stop() {
	p.t.Helper()
	p.call("shutdown", nil)
	p.notify("exit", nil)
	assert.Equal(p.t, 0, p.wait())
}

// TestSandboxDefaultPerDialect: with neither --sandbox nor a mode in the
// user's settings, --mode rpc runs the model's commands unconfined, as pi
// does, and --mode jsonrpc (gopi's editors) and --mode acp in
// workspace-write. The flag and the user's settings choose otherwise,
// and a project's settings still only tighten the default.
func TestSandboxDefaultPerDialect(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ws := map[string]any{"mode": "workspace-write", "network": false, "layers": []any{"landlock-fs", "landlock-net", "seccomp"}}

	t.Run("rpc", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		p := w.start()
		st := p.ok("s", map[string]any{"type": "get_state"}).(map[string]any)
		assert.NotContains(t, st, "sandbox", "pi's clients: off, and get_state is pi's")
		assert.Equal(t, 0, p.exit())
	})
	t.Run("jsonrpc", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		sb, p := w.jsonrpcSandbox(nil)
		assert.Equal(t, ws, sb)
		p.stop()
	})
	t.Run("jsonrpc --sandbox off", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		sb, p := w.jsonrpcSandbox(nil, "--sandbox", "off")
		assert.Nil(t, sb)
		p.stop()
	})
	t.Run("jsonrpc, the user's settings", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"sandbox": map[string]any{"mode": "off"}})
		sb, p := w.jsonrpcSandbox(nil)
		assert.Nil(t, sb, "the user's settings chose off")
		p.stop()
		w.writeJSON(filepath.Join(w.agentDir, "settings.json"), map[string]any{"sandbox": map[string]any{"network": true}})
		sb, p = w.jsonrpcSandbox(nil)
		assert.Equal(t, map[string]any{"mode": "workspace-write", "network": true, "layers": []any{"landlock-fs"}}, sb,
			"settings without a mode keep the default and add what they say")
		p.stop()
	})
	t.Run("jsonrpc, a project's settings tighten the default", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"sandbox": map[string]any{"mode": "read-only"}})
		w.trustProject()
		sb, p := w.jsonrpcSandbox(nil)
		assert.Equal(t, "read-only", sb.(map[string]any)["mode"])
		p.stop()
	})
	t.Run("acp", func(t *testing.T) {
		t.Parallel()
		for _, flags := range [][]string{nil, {"--sandbox", "off"}} {
			cwd, outside := t.TempDir(), t.TempDir()
			target := filepath.Join(outside, "out.txt")
			p := startACP(t, cwd, t.TempDir(), append([]string{"--model", "faux/faux-fast", "--no-session"}, flags...)...)
			s := p.started(cwd)
			id := p.prompt(s, "bash: echo in > in.txt && echo out > "+target)
			var ups []record
			if flags == nil {
				before, req := p.asked()
				require.Equal(t, "session/request_permission", req.str("method"), "ACP's default mode, auto, asks to step out")
				assert.Contains(t, req.obj("params").obj("toolCall").str("title"), "Run outside gopi's sandbox: ")
				p.choose(req, "reject_once")
				ups = before
			}
			after, _ := p.result(id)
			status, text := acpToolEnd(t, append(ups, after...))
			assert.FileExists(t, filepath.Join(cwd, "in.txt"))
			if flags == nil {
				assert.Equal(t, "failed", status)
				assert.Contains(t, text, "The command ran in gopi's sandbox (workspace-write)")
				assert.NoFileExists(t, target)
			} else {
				assert.Equal(t, "completed", status, text)
				assert.FileExists(t, target)
			}
			assert.Equal(t, 0, p.exit())
		}
	})
}

// TestSandboxDefaultFailsClosed: where the kernel cannot enforce the
// dialect's default (no Landlock, simulated by the test hook), gopi
// treats it as a mode that was asked for: it says so once on stderr,
// with how to choose no sandbox, get_state reports it, and the model's
// commands are refused.
func TestSandboxDefaultFailsClosed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, llmtest.ToolCalls(sandboxBash(t, "b1", "touch ran")), llmtest.Text("done"))
	sb, p := w.jsonrpcSandbox([]string{sandbox.TestABIEnv + "=0"})
	state := sb.(map[string]any)
	assert.Equal(t, "workspace-write", state["mode"])
	assert.Equal(t, []any{}, state["layers"])
	assert.Contains(t, state["problem"], "no Landlock")
	p.request("pi/prompt", map[string]any{"message": "run"})
	rs := p.until(func(r record) bool { return event(r, "agent_end") })
	end := jsonrpcToolEnd(rs, "b1")
	require.NotNil(t, end)
	assert.Equal(t, true, end["isError"])
	assert.Contains(t, resultText(end), "cannot be enforced here, so commands are refused")
	assert.NoFileExists(t, filepath.Join(w.cwd, "ran"))
	p.stop()
	assert.Contains(t, p.stderr.String(), "gopi: sandbox workspace-write: gopi's sandbox cannot be enforced here")
	assert.Contains(t, p.stderr.String(), `(--mode jsonrpc's default sandbox is workspace-write; --sandbox off, or "sandbox": {"mode": "off"} in settings.json, runs commands without one)`)

	// Over ACP each session has its own sandbox; the line is said once.
	cwd := t.TempDir()
	a := &aproc{proc: launchArgv(t, cwd, t.TempDir(), rpc.FramingNewline, []string{sandbox.TestABIEnv + "=0"},
		gopiBinary(t), "--mode", "acp", "--model", "faux/faux-fast", "--no-session"), methods: map[float64]string{}}
	a.started(cwd)
	a.newSession(cwd)
	assert.Equal(t, 0, a.exit())
	assert.Equal(t, 1, strings.Count(a.stderr.String(), "gopi: sandbox workspace-write: "), a.stderr.String())
	assert.Contains(t, a.stderr.String(), "(--mode acp's default sandbox is workspace-write;")
}

// acpModeSession is an ACP session whose mode a test switches and whose
// bash commands it runs.
type acpModeSession struct {
	p *aproc
	s string
}

// setMode switches the session to mode id and checks current_mode_update.
func (m acpModeSession) setMode(id string) {
	m.p.t.Helper()
	ups, _ := m.p.result(m.p.request("session/set_mode", map[string]any{"sessionId": m.s, "modeId": id}))
	require.NotEmpty(m.p.t, ups)
	assert.Equal(m.p.t, "current_mode_update", kind(ups[0]))
	assert.Equal(m.p.t, id, ups[0].obj("params").obj("update").str("currentModeId"))
}

// bash runs command through the bash tool. With answer set it must be
// put to the user as the sandbox's escape question, answered so; with
// none nothing may be asked. It returns the call's status and text.
func (m acpModeSession) bash(command, answer string) (status, text string) {
	m.p.t.Helper()
	id := m.p.prompt(m.s, "bash: "+command)
	var ups []record
	if answer != "" {
		before, req := m.p.asked()
		require.Equal(m.p.t, "session/request_permission", req.str("method"))
		assert.Equal(m.p.t, "Run outside gopi's sandbox: "+command, req.obj("params").obj("toolCall").str("title"))
		m.p.choose(req, answer)
		ups = before
	}
	after, res := m.p.result(id)
	assert.Equal(m.p.t, "end_turn", res.str("stopReason"))
	return acpToolEnd(m.p.t, append(ups, after...))
}

// TestACPModesSetTheSandbox: an ACP session's mode sets its sandbox
// with its approval mode. The default, auto, confines a write outside
// the project and asks to run it once outside; read-only stops a write
// in the project too and asks the same; off (never ask) keeps what the
// sandbox stopped without a question; full-access lets a write outside
// the project through, asking nothing.
func TestACPModesSetTheSandbox(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	cwd, outside := t.TempDir(), t.TempDir()
	p := startACP(t, cwd, t.TempDir(), "--model", "faux/faux-fast", "--no-session")
	m := acpModeSession{p, p.started(cwd)}
	out := func(name string) string { return "echo x > " + filepath.Join(outside, name) }

	status, _ := m.bash(out("auto-denied"), "reject_once")
	assert.Equal(t, "failed", status)
	assert.NoFileExists(t, filepath.Join(outside, "auto-denied"))
	status, text := m.bash(out("auto-allowed"), "allow_once")
	assert.Equal(t, "completed", status, text)
	assert.FileExists(t, filepath.Join(outside, "auto-allowed"))
	status, _ = m.bash("echo x > in-auto.txt", "")
	assert.Equal(t, "completed", status)

	m.setMode("read-only")
	status, text = m.bash("echo x > in-ro.txt", "reject_once")
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "The command ran in gopi's sandbox (read-only)")
	assert.NoFileExists(t, filepath.Join(cwd, "in-ro.txt"))

	m.setMode("off")
	status, _ = m.bash(out("never"), "")
	assert.Equal(t, "failed", status)
	assert.NoFileExists(t, filepath.Join(outside, "never"))

	m.setMode("full-access")
	status, text = m.bash(out("full"), "")
	assert.Equal(t, "completed", status, text)
	assert.FileExists(t, filepath.Join(outside, "full"))

	m.setMode("auto")
	status, _ = m.bash(out("auto-again"), "reject_once")
	assert.Equal(t, "failed", status)
	assert.NoFileExists(t, filepath.Join(outside, "auto-again"))
	assert.Equal(t, 0, p.exit())
}

// TestACPModesKeepTheProjectsSandbox: a trusted project whose settings
// ask for read-only keeps it whatever mode the client picks. The mode is
// the one chosen (auto, ACP's default, then full-access), and the
// sandbox in force stays read-only: full-access sets the approval mode
// only, and gopi says so on stderr.
func TestACPModesKeepTheProjectsSandbox(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	w := newWorld(t)
	w.writeJSON(filepath.Join(w.cwd, ".pi", "settings.json"), map[string]any{"sandbox": map[string]any{"mode": "read-only"}})
	w.trustProject()
	p := startACP(t, w.cwd, w.agentDir, "--model", "faux/faux-fast", "--no-session")
	_, res := p.result(p.request("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	require.EqualValues(t, 1, res["protocolVersion"])
	_, res = p.result(p.request("session/new", map[string]any{"cwd": w.cwd, "mcpServers": []any{}}))
	m := acpModeSession{p, res.str("sessionId")}
	p.commandsOf(m.s)
	assert.Equal(t, "auto", res.obj("modes").str("currentModeId"), "the mode chosen")
	status, text := m.bash("echo x > in.txt", "reject_once")
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "The command ran in gopi's sandbox (read-only)", "the sandbox in force")

	m.setMode("full-access")
	status, text = m.bash("echo x > in.txt", "")
	assert.Equal(t, "failed", status)
	assert.Contains(t, text, "The command ran in gopi's sandbox (read-only)")
	assert.NoFileExists(t, filepath.Join(w.cwd, "in.txt"))
	assert.Equal(t, 0, p.exit())
	assert.Contains(t, p.stderr.String(), "the project's settings keep the sandbox read-only, stricter than off")
}

// TestSandboxLeavesGopiUnconfined: gopi confines a thread for each
// command it starts in the sandbox, and that thread ends with the start.
// After a turn of confined commands, some at once, no thread of gopi
// has no_new_privs or a seccomp filter, and the user's own bash command
// (which runs outside the sandbox), started by that same gopi, still
// writes outside the project, many times at once.
func TestSandboxLeavesGopiUnconfined(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	const commands = 12
	var calls []llmtest.Block
	for i := range commands {
		calls = append(calls, sandboxBash(t, "b"+strconv.Itoa(i), "echo x > in"+strconv.Itoa(i)))
	}
	w := newSandboxWorld(t, llmtest.ToolCalls(calls...), llmtest.Text("done"))
	p := w.start("--sandbox", "workspace-write")
	p.ok("1", map[string]any{"type": "prompt", "message": "write inside"})
	rs := p.idle()
	for i := range commands {
		end := toolEnd(rs, "b"+strconv.Itoa(i))
		require.NotNil(t, end)
		assert.Equal(t, false, end["isError"], resultText(end))
		assert.FileExists(t, filepath.Join(w.cwd, "in"+strconv.Itoa(i)))
	}

	pid := strconv.Itoa(p.cmd.Process.Pid)
	base := threadConfinement(t, filepath.Join("/proc", pid, "status"))
	require.Contains(t, base, "NoNewPrivs: 0", "gopi itself is not confined")
	// A thread ends a moment after its start: the time only bounds the
	// wait.
	confined := func() []string {
		var out []string
		tasks, _ := os.ReadDir(filepath.Join("/proc", pid, "task"))
		for _, task := range tasks {
			if got := threadConfinement(t, filepath.Join("/proc", pid, "task", task.Name(), "status")); got != "" && got != base {
				out = append(out, task.Name()+": "+got)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(confined()) == 0 }, 20*time.Second, 10*time.Millisecond,
		"gopi's threads left confined: %q", confined())

	script := `for i in $(seq 16); do (echo x > "$0/user$i") & done; wait; ls "$0" | wc -l`
	out := p.ok("2", map[string]any{"type": "bash", "command": strings.Replace(script, "$0", w.outside, -1)}).(map[string]any)
	assert.Equal(t, "16\n", out["output"], out)
	assert.Equal(t, 0, p.exit())
}

// threadConfinement is the no_new_privs and seccomp lines of a status
// file in /proc ("" when it is gone: the thread ended).
func threadConfinement(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "NoNewPrivs:") || strings.HasPrefix(l, "Seccomp:") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(lines, ", ")
}
