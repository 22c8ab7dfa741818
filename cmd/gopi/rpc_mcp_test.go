package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gopi-dev/gopi/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopi-dev/gopi/core/llm/llmtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	mcpServerOnce sync.Once
	mcpServerPath string
	mcpServerErr  error
)

// mcpServerBinary builds core/mcp's test server once per test run.
func mcpServerBinary(t *testing.T) string {
	t.Helper()
	mcpServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gopi-mcpserver-")
		if err != nil {
			mcpServerErr = err
			return
		}
		mcpServerPath = filepath.Join(dir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", mcpServerPath, "../../core/mcp/testdata/mcpserver").CombinedOutput()
		if err != nil {
			mcpServerErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, mcpServerErr)
	return mcpServerPath
}

// toolEndOf is the tool_execution_end of a run's call of tool.
func toolEndOf(t *testing.T, p *proc, rs []record, tool string) record {
	t.Helper()
	for _, r := range rs {
		if r.is("tool_execution_end") && r.str("toolName") == tool {
			return r
		}
	}
	t.Fatalf("no tool_execution_end of %s\n%s", tool, p.transcript())
	return nil
}

// Issue 29, the connection step: an mcp.json server with direct exposure
// declares its tools; the faux model calls one and the result is in the
// transcript. A server that fails to start is reported on stderr and
// gopi goes on; a server that crashes during a call comes back on the
// next; a server with codemode exposure turns the codemode tool on, as in
// pi (nothing is said of it), and with autoEnableCodemode false is said
// to be reached through tool_search; no server process outlives gopi.
func TestRPCMCPDirectTools(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	w := newWorld(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"test": map[string]any{"command": bin, "args": []string{"-pidfile", pidFile}, "exposure": "direct"},
		"broken": map[string]any{"command": "sh", "args": []string{"-c", "echo cannot start >&2; exit 3"},
			"exposure": "direct"},
		"later": map[string]any{"command": bin},
	}})
	p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast")

	p.ok("1", map[string]any{"type": "prompt", "message": `call: mcp__test__echo {"text": "hello"}`})
	end := toolEndOf(t, p, p.idle(), "mcp__test__echo")
	assert.Equal(t, false, end["isError"], p.transcript())
	assert.Equal(t, "echo: hello", resultText(end))
	first := testenv.ReadPID(t, pidFile)

	// The server's log messages go to mcp.log in the agent directory.
	p.ok("log", map[string]any{"type": "prompt", "message": `call: mcp__test__log {"level": "error", "logger": "io", "text": "disk full"}`})
	end = toolEndOf(t, p, p.idle(), "mcp__test__log")
	assert.Equal(t, "logged", resultText(end), p.transcript())
	logPath := filepath.Join(w.agentDir, "mcp.log")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(logPath)
		return strings.Contains(string(b), "[test] error io: disk full")
	}, 10*time.Second, 10*time.Millisecond, "mcp.log has the server's message")
	if fi, err := os.Stat(logPath); assert.NoError(t, err) {
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}

	p.ok("2", map[string]any{"type": "prompt", "message": "call: mcp__test__crash"})
	end = toolEndOf(t, p, p.idle(), "mcp__test__crash")
	assert.Equal(t, true, end["isError"], p.transcript())
	require.Eventually(t, func() bool { return !testenv.Alive(first) }, 10*time.Second, 20*time.Millisecond)

	p.ok("3", map[string]any{"type": "prompt", "message": `call: mcp__test__echo {"text": "again"}`})
	end = toolEndOf(t, p, p.idle(), "mcp__test__echo")
	assert.Equal(t, "echo: again", resultText(end), p.transcript())
	second := testenv.ReadPID(t, pidFile)
	assert.NotEqual(t, first, second)

	assert.Equal(t, 0, p.exit())
	stderr := p.stderr.String()
	assert.Contains(t, stderr, `mcp server "broken"`)
	assert.Contains(t, stderr, "cannot start")
	assert.NotContains(t, stderr, "codemode is off", "the codemode tool is on: scripts reach the tools of later")
	assert.False(t, testenv.Alive(second), "the MCP server %d outlived gopi", second)
}

// --no-mcp connects nothing; a trusted project's .pi/mcp.json entry
// without command or url turns a user server off.
func TestRPCMCPOff(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	for _, tc := range []struct {
		name    string
		args    []string
		project bool
	}{
		{"no-mcp", []string{"--no-mcp"}, false},
		{"project disables", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
				"test": map[string]any{"command": bin, "args": []string{"-pidfile", pidFile}, "exposure": "direct"},
			}})
			if tc.project {
				w.trustProject()
				w.writeJSON(filepath.Join(w.cwd, ".pi", "mcp.json"), map[string]any{"mcpServers": map[string]any{
					"test": map[string]any{"enabled": false},
				}})
			}
			p := startProc(t, w.cwd, w.agentDir, append([]string{"--mode", "rpc", "--model", "faux/faux-fast"}, tc.args...)...)
			p.ok("1", map[string]any{"type": "prompt", "message": `call: mcp__test__echo {"text": "hello"}`})
			rs := p.idle()
			for _, r := range rs {
				assert.False(t, r.is("tool_execution_start"), p.transcript())
			}
			assert.Equal(t, 0, p.exit())
			_, err := os.Stat(pidFile)
			assert.True(t, errors.Is(err, os.ErrNotExist), "the server started")
		})
	}
}

// No MCP server outlives gopi: stopped by gopi on SIGTERM, and on its own
// (its stdin ends) when gopi is killed.
func TestRPCMCPServersEndWithGopi(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
				"test": map[string]any{"command": bin, "args": []string{"-pidfile", pidFile}, "exposure": "direct"},
			}})
			p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast")
			p.ok("1", map[string]any{"type": "prompt", "message": `call: mcp__test__echo {"text": "hello"}`})
			p.idle()
			pid := testenv.ReadPID(t, pidFile)
			require.True(t, testenv.Alive(pid))
			p.signal(sig)
			p.wait()
			require.Eventually(t, func() bool { return !testenv.Alive(pid) }, 10*time.Second, 20*time.Millisecond,
				"the MCP server %d outlived gopi (%v)", pid, sig)
		})
	}
}

// mcpServersByName waits until get (one get_mcp_servers call) shows no
// server connecting, and returns the servers by name.
func mcpServersByName(t *testing.T, get func() any) map[string]map[string]any {
	t.Helper()
	var byName map[string]map[string]any
	require.Eventually(t, func() bool {
		byName = map[string]map[string]any{}
		data, _ := get().(map[string]any)
		servers, _ := data["servers"].([]any)
		settled := true
		for _, s := range servers {
			m := s.(map[string]any)
			byName[m["name"].(string)] = m
			settled = settled && m["state"] != "connecting"
		}
		return settled
	}, 20*time.Second, 50*time.Millisecond)
	return byName
}

// Issue 29: get_mcp_servers, gopi's own command, lists the session's
// servers and where each stands, in both dialects: the tools of a
// connected one with their exposure and readOnlyHint, why another failed,
// a disabled one.
func TestRPCMCPServersCommand(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	for _, dialect := range []string{"rpc", "jsonrpc"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
				"test": map[string]any{"command": bin, "exposure": "direct", "toolExposure": map[string]any{"big": "hidden"}},
				"broken": map[string]any{"command": "sh", "args": []string{"-c", "echo cannot start >&2; exit 3"},
					"exposure": "direct"},
				"off": map[string]any{"url": "http://127.0.0.1:9/mcp", "enabled": false},
			}})
			var get func() any
			var exit func() int
			if dialect == "rpc" {
				p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast")
				n := 0
				get = func() any { n++; return p.ok(fmt.Sprint(n), map[string]any{"type": "get_mcp_servers"}) }
				exit = p.exit
			} else {
				p := w.startJSONRPC(false, "--mode", "jsonrpc", "--stdio", "--model", "faux/faux-fast")
				get = func() any { return p.call("pi/get_mcp_servers", nil) }
				exit = p.exit
			}
			servers := mcpServersByName(t, get)
			require.Len(t, servers, 3)

			test := servers["test"]
			assert.Equal(t, "connected", test["state"])
			assert.Equal(t, "global", test["scope"])
			assert.Equal(t, filepath.Join(w.agentDir, "mcp.json"), test["source"])
			assert.Equal(t, true, test["enabled"])
			assert.Equal(t, "direct", test["exposure"])
			assert.Equal(t, "stdio", test["type"])
			assert.Equal(t, bin, test["transport"])
			assert.NotContains(t, test, "error")
			tools := map[string]any{}
			for _, tl := range test["tools"].([]any) {
				tools[tl.(map[string]any)["remoteName"].(string)] = tl
			}
			assert.Equal(t, map[string]any{"name": "mcp__test__echo", "remoteName": "echo", "exposure": "direct", "readOnly": true}, tools["echo"])
			assert.Equal(t, map[string]any{"name": "mcp__test__big", "remoteName": "big", "exposure": "hidden", "readOnly": false}, tools["big"])

			broken := servers["broken"]
			assert.Equal(t, "failed", broken["state"])
			assert.Contains(t, broken["error"], "cannot start")
			assert.Equal(t, []any{}, broken["tools"])

			assert.Equal(t, map[string]any{
				"name": "off", "scope": "global", "source": filepath.Join(w.agentDir, "mcp.json"), "enabled": false,
				"exposure": "codemode", "type": "http", "transport": "http://127.0.0.1:9/mcp", "state": "disabled", "tools": []any{},
			}, servers["off"])
			assert.Equal(t, 0, exit())
		})
	}

	// Without servers (or with --no-mcp) the list is empty, not null.
	w := newWorld(t)
	p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast", "--no-mcp")
	assert.Equal(t, map[string]any{"servers": []any{}}, p.ok("1", map[string]any{"type": "get_mcp_servers"}))
	assert.Equal(t, 0, p.exit())
}

// Issue 29: an MCP tool (the resource tools count as MCP tools) is
// declared directly only when a --tools allowlist names or matches it
// (pi's rule); the others stay reachable through tool_search when the
// allowlist names it, and are removed once an entry starts with mcp__.
// --exclude-tools and --no-tools apply to them too.
func TestRPCMCPToolSelection(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	const list, templates, read = "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"
	for _, tc := range []struct {
		args []string
		want []string // the request's tools that are the server's
		not  []string
	}{
		{nil, []string{"mcp__test__echo", "mcp__test__slow", list, templates, read}, nil},
		{[]string{"--tools", "read"}, nil, []string{"bash", "mcp__test__echo", "mcp__test__slow", "tool_search", list, read}},
		{[]string{"--tools", "read,tool_search"}, []string{"tool_search"}, []string{"mcp__test__echo", "mcp__test__slow", list, read}},
		{[]string{"--tools", "*"}, []string{"mcp__test__echo", "mcp__test__slow", "bash", list, read}, []string{"tool_search"}},
		{[]string{"--tools", "read,mcp__test__e*"}, []string{"mcp__test__echo"}, []string{"mcp__test__slow", "bash", list, read}},
		{[]string{"--tools", "mcp__test__e*,read_mcp_*"}, []string{"mcp__test__echo", read}, []string{list, templates}},
		{[]string{"--exclude-tools", "mcp__*__s*"}, []string{"mcp__test__echo", list}, []string{"mcp__test__slow"}},
		{[]string{"--exclude-tools", "list_mcp_*"}, []string{"mcp__test__echo", read}, []string{list, templates}},
		{[]string{"--no-tools"}, nil, []string{"mcp__test__echo", "read", list, read}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, llmtest.Text("ok"))
			w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
				"test": map[string]any{"command": bin, "args": []string{"-resources"}, "exposure": "direct"},
			}})
			p := w.start(append([]string{"--no-session"}, tc.args...)...)
			p.ok("1", map[string]any{"type": "prompt", "message": "hi"})
			p.idle()
			reqs := w.srv.Requests()
			require.Len(t, reqs, 1, p.transcript())
			got := requestTools(reqs[0])
			for _, n := range tc.want {
				assert.Contains(t, got, n)
			}
			for _, n := range tc.not {
				assert.NotContains(t, got, n)
			}
			assert.Equal(t, 0, p.exit())
		})
	}
}

// Issue 29: a deferred tool (and a codemode one while the codemode tool
// is off: autoEnableCodemode false) is not declared; tool_search loads
// it, the next request of the same run declares it and the model calls
// it; a resumed session still declares it, since the search result in
// the transcript says so.
func TestRPCMCPDeferredTools(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("c1", "tool_search", `{"query": "echo"}`)),
		llmtest.ToolCalls(llmtest.Call("c2", "mcp__d__echo", `{"text": "hi"}`)),
		llmtest.Text("done"),
		llmtest.Text("again"))
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"autoEnableCodemode": false, "mcpServers": map[string]any{
		"d": map[string]any{"command": bin, "exposure": "deferred"},
		"c": map[string]any{"command": bin}, // codemode, pi's default
	}})
	p := w.start()
	n := 0
	servers := mcpServersByName(t, func() any {
		n++
		return p.ok(fmt.Sprint("s", n), map[string]any{"type": "get_mcp_servers"})
	})
	require.Equal(t, "connected", servers["d"]["state"])
	p.ok("1", map[string]any{"type": "prompt", "message": "use echo"})
	rs := p.idle()
	assert.Equal(t, "echo: hi", resultText(toolEndOf(t, p, rs, "mcp__d__echo")), p.transcript())
	assert.Equal(t, 0, p.exit())
	assert.Contains(t, p.stderr.String(), `codemode is off; the tools of "c" with exposure codemode`)

	reqs := w.srv.Requests()
	require.Len(t, reqs, 3)
	first := requestTools(reqs[0])
	assert.Contains(t, first, "tool_search")
	assert.NotContains(t, first, "mcp__d__echo")
	assert.NotContains(t, first, "mcp__c__echo")
	assert.Contains(t, requestTools(reqs[1]), "mcp__d__echo")
	assert.NotContains(t, requestTools(reqs[1]), "mcp__d__slow", "only what the search loaded")
	system := fmt.Sprint(reqs[0].JSON()["system"])
	assert.Contains(t, system, "<mcp_servers>", "the servers were waited for: the section is in the first request")
	// The test server's instructions give the line.
	assert.Contains(t, system, "\n- d: A server for gopi's tests.\n")
	assert.Contains(t, system, "\n- c: A server for gopi's tests.\n")

	p = w.start("--continue")
	p.ok("2", map[string]any{"type": "prompt", "message": "more"})
	p.idle()
	assert.Equal(t, 0, p.exit())
	reqs = w.srv.Requests()
	require.Len(t, reqs, 4)
	assert.Contains(t, requestTools(reqs[3]), "mcp__d__echo", "a resumed session keeps the loaded tool")
}

// Issue 29, resources: a direct server with resources declares pi's three
// resource tools; the scripted model lists resources (every server's, as
// pi's JSON), lists one server's templates, and reads a text, an image and
// a binary blob (saved to a file whose path it gets); a link in a tool's
// result names read_mcp_resource. An abort ends a read at once, and the
// server answers the next one.
func TestRPCMCPResources(t *testing.T) {
	bin := mcpServerBinary(t)
	w := newWorld(t,
		llmtest.ToolCalls(llmtest.Call("l1", "list_mcp_resources", `{}`)),
		llmtest.ToolCalls(llmtest.Call("l2", "list_mcp_resource_templates", `{"server": "docs"}`)),
		llmtest.ToolCalls(
			llmtest.Call("r1", "read_mcp_resource", `{"server": "docs", "uri": "test://notes/1"}`),
			llmtest.Call("r2", "read_mcp_resource", `{"server": "docs", "uri": "test://images/pixel.png"}`),
			llmtest.Call("r3", "read_mcp_resource", `{"server": "docs", "uri": "test://files/data.bin"}`),
			llmtest.Call("r4", "mcp__docs__link", `{}`),
			llmtest.Call("r5", "read_mcp_resource", `{"server": "nope", "uri": "test://notes/1"}`)),
		llmtest.Text("read"),
		llmtest.ToolCalls(llmtest.Call("s1", "read_mcp_resource", `{"server": "docs", "uri": "test://slow"}`)),
		llmtest.ToolCalls(llmtest.Call("n1", "read_mcp_resource", `{"server": "docs", "uri": "test://notes/42"}`)),
		llmtest.Text("done"))
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"docs": map[string]any{"command": bin, "args": []string{"-resources"}, "exposure": "direct"},
	}})
	p := w.start("--approval", "writes")
	p.ok("1", map[string]any{"type": "prompt", "message": "what do the servers offer?"})
	rs := p.idle()

	var listing struct {
		Resources []map[string]any `json:"resources"`
	}
	end := toolEnd(rs, "l1")
	require.NotNil(t, end, p.transcript())
	assert.Equal(t, false, end["isError"])
	require.NoError(t, json.Unmarshal([]byte(resultText(end)), &listing), resultText(end))
	assert.Contains(t, listing.Resources, map[string]any{"server": "docs", "uri": "test://notes/1", "name": "notes", "mimeType": "text/plain"})
	assert.Equal(t, map[string]any{"server": "", "tool": "list_mcp_resources"}, end.obj("result")["details"])

	end = toolEnd(rs, "l2")
	assert.Equal(t, `{"server":"docs","resourceTemplates":[{"server":"docs","uriTemplate":"test://notes/{id}","name":"note",`+
		`"description":"A note by its id.","mimeType":"text/plain"}]}`, resultText(end))

	assert.Equal(t, "a note", resultText(toolEnd(rs, "r1")))
	image := toolEnd(rs, "r2").obj("result")["content"].([]any)
	require.Len(t, image, 1)
	assert.Equal(t, "image", image[0].(map[string]any)["type"])
	assert.Equal(t, "image/png", image[0].(map[string]any)["mimeType"])
	blob := resultText(toolEnd(rs, "r3"))
	prefix := "[Binary resource test://files/data.bin (application/octet-stream, 5B) saved to "
	require.True(t, strings.HasPrefix(blob, prefix), blob)
	data, err := os.ReadFile(strings.TrimSuffix(strings.TrimPrefix(blob, prefix), "]"))
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 2, 3, 0xff}, data)
	assert.Equal(t, `[Resource test://notes/1 "notes" (text/plain). Read it with read_mcp_resource (server "docs")]`,
		resultText(toolEnd(rs, "r4")))
	end = toolEnd(rs, "r5")
	assert.Equal(t, true, end["isError"])
	assert.Equal(t, `MCP server "nope" has no resources. Servers with resources: docs`, resultText(end))
	for _, r := range rs {
		assert.False(t, r.is("extension_ui_request"), "the resource tools and a read-only tool are not asked about")
	}

	reqs := w.srv.Requests()
	require.Len(t, reqs, 4, p.transcript())
	declared := requestTools(reqs[0])
	assert.Subset(t, declared, []string{"mcp__docs__echo", "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"})
	assert.NotContains(t, declared, "tool_search")

	// An abort ends a read under way.
	p.ok("2", map[string]any{"type": "prompt", "message": "read the slow one"})
	p.until(func(r record) bool { return r.is("tool_execution_start") })
	began := time.Now()
	p.send(map[string]any{"id": "3", "type": "abort"})
	rs = p.until(func(r record) bool { return r.is("response") && r["id"] == "3" })
	assert.Less(t, time.Since(began), 10*time.Second)
	end = toolEnd(rs, "s1")
	require.NotNil(t, end, p.transcript())
	assert.Equal(t, true, end["isError"])
	p.ok("4", map[string]any{"type": "prompt", "message": "another"})
	rs = p.idle()
	assert.Equal(t, "note 42", resultText(toolEnd(rs, "n1")), p.transcript())
	assert.Equal(t, 0, p.exit())
}

// mcpStates are the servers of every mcp_server_state gopi wrote so far,
// in order, in either dialect (pi/event's params in JSON-RPC).
func mcpStates(p *proc) []record {
	p.mu.Lock()
	lines := slices.Clone(p.log)
	p.mu.Unlock()
	var out []record
	for _, l := range lines {
		var r record
		if json.Unmarshal([]byte(l), &r) != nil {
			continue
		}
		if r["method"] == "pi/event" {
			r = r.obj("params")
		}
		if r.is("mcp_server_state") {
			out = append(out, r.obj("server"))
		}
	}
	return out
}

// awaitMCPState waits for an mcp_server_state after the from-th one whose
// server matches, and returns its index and the server.
func awaitMCPState(t *testing.T, p *proc, from int, what string, match func(record) bool) (int, record) {
	t.Helper()
	var i int
	var found record
	require.Eventually(t, func() bool {
		states := mcpStates(p)
		for i = from; i < len(states); i++ {
			if match(states[i]) {
				found = states[i]
				return true
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond, "no mcp_server_state: %s\n%s", what, p.transcript())
	return i, found
}

// hasTool reports whether an mcp_server_state's server lists the tool.
func hasTool(s record, name string) bool {
	tools, _ := s["tools"].([]any)
	return slices.ContainsFunc(tools, func(tl any) bool { return record(tl.(map[string]any)).str("name") == name })
}

// Issue 29, reports to clients: each change of an MCP server's state or
// tools reaches the client as mcp_server_state (gopi's own event; in
// JSON-RPC a pi/event notification), with the server as get_mcp_servers
// lists it: a server that fails to start, one that answers garbage, one
// that connects, crashes, comes back on the next call and changes its tool
// list. A failure at start, before the client was listening, is heard
// too, in JSON-RPC after the initialize response (whether initialize
// starts the session anew or not); gopi and the other servers go on.
func TestRPCMCPServerStateEvents(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	for _, dialect := range []string{"rpc", "jsonrpc", "jsonrpc, initialize starts the session anew"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
				"test": map[string]any{"command": bin, "exposure": "direct"},
				"broken": map[string]any{"command": "sh", "args": []string{"-c", "echo cannot start >&2; exit 3"},
					"exposure": "direct"},
				"garbage": map[string]any{"command": "sh", "args": []string{"-c", "echo not JSON-RPC; sleep 30"}},
			}})
			var p *proc
			var prompt func(text string)
			var list func() any
			if dialect == "rpc" {
				p = startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast")
				n := 0
				prompt = func(text string) {
					n++
					p.ok(fmt.Sprint(n), map[string]any{"type": "prompt", "message": text})
					p.until(func(r record) bool { return r.is("agent_settled") })
				}
				list = func() any { n++; return p.ok(fmt.Sprint(n), map[string]any{"type": "get_mcp_servers"}) }
				// gopi learns the dialect from the client's first command;
				// events follow it.
				p.ok("0", map[string]any{"type": "get_state"})
			} else {
				j := w.startJSONRPC(true, "--mode", "jsonrpc", "--model", "faux/faux-fast")
				p = j.proc
				// The editors' way: initialize names the workspace (gopi's
				// own: the session the flags started serves on) and, with
				// a model, has the session started anew.
				params := map[string]any{"rootUri": "file://" + w.cwd, "capabilities": map[string]any{}}
				if strings.Contains(dialect, "anew") {
					params["initializationOptions"] = map[string]any{"model": "faux/faux-fast"}
				}
				// broken fails before initialize is read.
				require.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), `mcp server "broken"`) },
					waitLimit, 10*time.Millisecond, "%s", p.stderr.String())
				res := record(j.call("initialize", params).(map[string]any))
				assert.Contains(t, res.obj("capabilities").obj("experimental").obj("pi")["events"], "mcp_server_state")
				j.notify("initialized", map[string]any{})
				// Nothing came before the response (LSP), however early
				// the servers failed.
				p.mu.Lock()
				firstLine := p.log[0]
				p.mu.Unlock()
				var r record
				require.NoError(t, json.Unmarshal([]byte(firstLine), &r))
				require.True(t, r["method"] == nil && r["id"] == 1.0, "the first message: %s", firstLine)
				prompt = func(text string) {
					j.call("pi/prompt", map[string]any{"message": text})
					p.until(func(r record) bool { return event(r, "agent_settled") })
				}
				list = func() any { return j.call("pi/get_mcp_servers", nil) }
			}
			failed := func(name, why string) {
				_, s := awaitMCPState(t, p, 0, name+" failed", func(s record) bool { return s.str("name") == name })
				assert.Equal(t, "failed", s.str("state"))
				assert.Contains(t, s.str("error"), why)
				assert.Equal(t, []any{}, s["tools"])
			}
			failed("broken", "cannot start")
			failed("garbage", "connecting: ")
			// Once: not from the session initialize replaced too.
			n := 0
			for _, s := range mcpStates(p) {
				if s.str("name") == "broken" {
					n++
				}
			}
			assert.Equal(t, 1, n, "broken's failure")
			_, s := awaitMCPState(t, p, 0, "test connected", func(s record) bool { return s.str("name") == "test" })
			assert.Equal(t, "connected", s.str("state"))
			assert.True(t, hasTool(s, "mcp__test__echo"), "%v", s)
			assert.Equal(t, "stdio", s.str("type"))
			assert.Equal(t, bin, s.str("transport"))

			// It crashes: disconnected, its tools kept. The next call
			// starts it again: connecting, then connected.
			prompt("call: mcp__test__crash")
			i, s := awaitMCPState(t, p, 0, "test disconnected", func(s record) bool { return s.str("state") == "disconnected" })
			assert.Equal(t, "test", s.str("name"))
			assert.Contains(t, s.str("error"), "the connection ended")
			assert.True(t, hasTool(s, "mcp__test__echo"))
			prompt(`call: mcp__test__echo {"text": "back"}`)
			i, _ = awaitMCPState(t, p, i+1, "test connecting", func(s record) bool { return s.str("state") == "connecting" })
			_, s = awaitMCPState(t, p, i+1, "test connected again", func(s record) bool { return s.str("state") == "connected" })
			assert.NotContains(t, s, "error")

			// Its tool list changes.
			prompt(`call: mcp__test__add_tool {"name": "late"}`)
			_, s = awaitMCPState(t, p, i+1, "test's new tool", func(s record) bool { return hasTool(s, "mcp__test__late") })
			assert.Equal(t, "connected", s.str("state"))

			// The last event of each server is what get_mcp_servers says.
			last := map[string]record{}
			for _, s := range mcpStates(p) {
				last[s.str("name")] = s
			}
			for _, s := range list().(map[string]any)["servers"].([]any) {
				s := record(s.(map[string]any))
				assert.Equal(t, s, last[s.str("name")], "%s", s.str("name"))
			}
			assert.NotContains(t, p.stderr.String(), "panic")
		})
	}
}
