package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/mcp/testdata/oauthserver"
	"github.com/gopi-dev/gopi/internal/testenv"
)

// mcpCommandClient drives the built-in /mcp command in one dialect.
type mcpCommandClient struct {
	commands func() []any
	servers  func() any
	// prompt sends a prompt and does not wait for its answer.
	prompt func(text string)
	// handled waits for the last prompt's answer: handled, no run.
	handled func()
	// selectAsked waits for a select dialog and returns its title and
	// options; answer (nil cancels) answers it.
	selectAsked func() (title string, options []string, answer func(value *string))
	// notified waits for a notification containing text.
	notified func(text string) string
}

func rpcMCPCommandClient(t *testing.T, p *proc) mcpCommandClient {
	n := 0
	id := func() string { n++; return fmt.Sprint(n) }
	last := ""
	return mcpCommandClient{
		commands: func() []any {
			return p.ok(id(), map[string]any{"type": "get_commands"}).(map[string]any)["commands"].([]any)
		},
		servers: func() any { return p.ok(id(), map[string]any{"type": "get_mcp_servers"}) },
		prompt: func(text string) {
			last = id()
			p.send(map[string]any{"id": last, "type": "prompt", "message": text})
		},
		handled: func() {
			r := p.response(last)
			require.Equal(t, true, r["success"], "%v", r)
			assert.Equal(t, "handled", r.obj("data").str("disposition"))
		},
		selectAsked: func() (string, []string, func(*string)) {
			rs := p.until(func(r record) bool { return r.is("extension_ui_request") && r.str("method") == "select" })
			req := rs[len(rs)-1]
			var options []string
			for _, o := range req["options"].([]any) {
				options = append(options, o.(string))
			}
			return req.str("title"), options, func(v *string) {
				resp := map[string]any{"type": "extension_ui_response", "id": req.str("id")}
				if v == nil {
					resp["cancelled"] = true
				} else {
					resp["value"] = *v
				}
				p.send(resp)
			}
		},
		notified: func(text string) string { return p.notified(text).str("message") },
	}
}

func jsonrpcMCPCommandClient(t *testing.T, p *jproc) mcpCommandClient {
	var last float64
	return mcpCommandClient{
		commands: func() []any { return p.call("pi/get_commands", nil).(map[string]any)["commands"].([]any) },
		servers:  func() any { return p.call("pi/get_mcp_servers", nil) },
		prompt:   func(text string) { last = p.request("pi/prompt", map[string]any{"message": text}) },
		handled: func() {
			r := p.reply(last)
			require.Nil(t, r["error"], "%v", r)
			assert.Equal(t, "handled", r.obj("result").str("disposition"))
		},
		selectAsked: func() (string, []string, func(*string)) {
			rs := p.until(func(r record) bool { return r["method"] == "window/showMessageRequest" })
			req := rs[len(rs)-1]
			var options []string
			for _, a := range req.obj("params")["actions"].([]any) {
				options = append(options, a.(map[string]any)["title"].(string))
			}
			return req.obj("params").str("message"), options, func(v *string) {
				var result any
				if v != nil {
					result = map[string]any{"title": *v}
				}
				p.write(map[string]any{"id": req["id"], "result": result})
			}
		},
		notified: func(text string) string {
			rs := p.until(func(r record) bool {
				return r["method"] == "window/showMessage" && strings.Contains(r.obj("params").str("message"), text)
			})
			return rs[len(rs)-1].obj("params").str("message")
		},
	}
}

// Issue 40: get_commands lists the built-in /mcp as pi 1.6.0 does (a
// built-in extension's command), and "/mcp" runs pi's flow over the
// dialect's dialogs: the status of each server; "/mcp reconnect" asks
// which server with a select when more than one fits, and connects the
// chosen one again (its process is a new one) and no other; a cancelled
// select changes nothing. Its dialects run side by side: that once showed
// a data race between /mcp's saving a server's change and a state report
// reading the servers (mcpstate.TestEntriesAreACopy keeps it fixed).
func TestMCPCommand(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	for _, dialect := range []string{"rpc", "jsonrpc"} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			pidA := filepath.Join(t.TempDir(), "a.pid")
			pidB := filepath.Join(t.TempDir(), "b.pid")
			w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
				"alpha": map[string]any{"command": bin, "args": []string{"-pidfile", pidA}, "exposure": "direct"},
				"beta":  map[string]any{"command": bin, "args": []string{"-pidfile", pidB}},
				"off":   map[string]any{"command": bin, "enabled": false},
			}})
			var c mcpCommandClient
			if dialect == "rpc" {
				c = rpcMCPCommandClient(t, startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast"))
			} else {
				p := w.startJSONRPC(true, "--mode", "jsonrpc", "--model", "faux/faux-fast")
				p.call("initialize", map[string]any{"capabilities": map[string]any{"window": map[string]any{"showMessage": map[string]any{}}}})
				p.notify("initialized", map[string]any{})
				c = jsonrpcMCPCommandClient(t, p)
			}

			cmds := c.commands()
			require.NotEmpty(t, cmds)
			assert.Equal(t, map[string]any{
				"name":        "mcp",
				"description": "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
				"source":      "extension",
				"sourceInfo":  map[string]any{"path": "builtin:mcp", "source": "builtin", "scope": "temporary", "origin": "top-level"},
			}, cmds[0])

			mcpServersByName(t, c.servers)
			a0, b0 := testenv.ReadPID(t, pidA), testenv.ReadPID(t, pidB)

			c.prompt("/mcp")
			status := c.notified("alpha: connected")
			assert.Contains(t, status, "beta: connected")
			assert.Contains(t, status, "off: disabled")
			c.handled()

			// Cancelled: nothing changes.
			c.prompt("/mcp reconnect")
			title, options, answer := c.selectAsked()
			assert.Equal(t, "MCP server", title)
			assert.Equal(t, []string{"alpha", "beta"}, options, "a disabled server is no choice")
			answer(nil)
			c.handled()
			assert.Equal(t, a0, testenv.ReadPID(t, pidA))
			assert.True(t, testenv.Alive(a0))

			c.prompt("/mcp reconnect")
			_, _, answer = c.selectAsked()
			alpha := "alpha"
			answer(&alpha)
			assert.Contains(t, c.notified(`"alpha"`), "connected")
			c.handled()
			a1 := testenv.ReadPID(t, pidA)
			assert.NotEqual(t, a0, a1, "alpha was not started again")
			assert.Equal(t, b0, testenv.ReadPID(t, pidB), "beta was started again")
			assert.True(t, testenv.Alive(b0))
			servers := mcpServersByName(t, c.servers)
			assert.Equal(t, "connected", servers["alpha"]["state"])
			assert.NotEmpty(t, servers["alpha"]["tools"])

			// Named: no question.
			c.prompt("/mcp reconnect beta")
			assert.Contains(t, c.notified(`"beta"`), "connected")
			c.handled()
			assert.NotEqual(t, b0, testenv.ReadPID(t, pidB), "beta was not started again")

			c.prompt("/mcp reconnect off")
			c.notified("no enabled MCP server to reconnect")
			c.handled()

			c.prompt("/mcp frobnicate")
			c.notified("Usage: /mcp")
			c.handled()

			// Disabled: saved to mcp.json as pi saves it; its process
			// ends and its tools are gone.
			c.prompt("/mcp disable")
			title, options, answer = c.selectAsked()
			assert.Equal(t, "MCP server", title)
			assert.Equal(t, []string{"alpha", "beta"}, options)
			answer(&alpha)
			c.notified(`"alpha" is disabled`)
			c.handled()
			servers = mcpServersByName(t, c.servers)
			assert.Equal(t, "disabled", servers["alpha"]["state"])
			assert.Equal(t, false, servers["alpha"]["enabled"])
			assert.Empty(t, servers["alpha"]["tools"])
			require.Eventually(t, func() bool { return !testenv.Alive(a1) }, waitLimit, 20*time.Millisecond,
				"the disabled server's process %d still runs", a1)
			assert.Equal(t, false, mcpJSONServer(t, w)["alpha"]["enabled"])

			// A cancelled choice enables nothing.
			c.prompt("/mcp enable")
			_, options, answer = c.selectAsked()
			assert.Equal(t, []string{"alpha", "off"}, options)
			answer(nil)
			c.handled()
			assert.Equal(t, "disabled", mcpServersByName(t, c.servers)["alpha"]["state"])

			c.prompt("/mcp enable alpha")
			assert.Contains(t, c.notified(`"alpha" is enabled`), "connected")
			c.handled()
			servers = mcpServersByName(t, c.servers)
			assert.Equal(t, "connected", servers["alpha"]["state"])
			assert.NotEmpty(t, servers["alpha"]["tools"])
			assert.Equal(t, true, mcpJSONServer(t, w)["alpha"]["enabled"])

			// Exposure: a cancelled choice changes nothing; a chosen one is
			// saved and the server's tools have it.
			assert.Equal(t, "codemode", servers["beta"]["exposure"])
			c.prompt("/mcp exposure beta")
			title, options, answer = c.selectAsked()
			assert.Contains(t, title, "beta")
			assert.Equal(t, []string{"direct", "deferred", "codemode"}, options)
			answer(nil)
			c.handled()
			assert.Equal(t, "codemode", mcpServersByName(t, c.servers)["beta"]["exposure"])
			assert.NotContains(t, mcpJSONServer(t, w)["beta"], "exposure")

			c.prompt("/mcp exposure beta")
			_, _, answer = c.selectAsked()
			direct := "direct"
			answer(&direct)
			c.notified(`"beta" is direct now`)
			c.handled()
			servers = mcpServersByName(t, c.servers)
			assert.Equal(t, "direct", servers["beta"]["exposure"])
			require.NotEmpty(t, servers["beta"]["tools"])
			for _, tl := range servers["beta"]["tools"].([]any) {
				assert.Equal(t, "direct", tl.(map[string]any)["exposure"], "%v", tl)
			}
			assert.Equal(t, "direct", mcpJSONServer(t, w)["beta"]["exposure"])

			// Named in full: no question.
			c.prompt("/mcp exposure beta deferred")
			c.notified(`"beta" is deferred now`)
			c.handled()
			assert.Equal(t, "deferred", mcpServersByName(t, c.servers)["beta"]["exposure"])
			assert.Equal(t, "deferred", mcpJSONServer(t, w)["beta"]["exposure"])
			c.prompt("/mcp enable beta")
			c.notified(`"beta" is enabled already`)
			c.handled()
		})
	}
}

// Issue 40: "/mcp login" signs in within the session: the authorization
// address comes as a notify, the browser's answer reaches gopi's loopback
// listener while an input dialog waits for a pasted address, and the
// server connects with the new tokens at once. Cancelling that dialog
// cancels the sign-in and stores nothing; "/mcp logout" deletes the
// tokens and the server needs a sign-in again.
func TestRPCMCPCommandLogin(t *testing.T) {
	t.Parallel()
	as := oauthserver.New(t, oauthserver.Options{})
	w := newWorld(t)
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"docs": map[string]any{"url": as.MCPURL, "exposure": "direct"},
	}})
	p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast", "--no-session")
	c := rpcMCPCommandClient(t, p)
	assert.Equal(t, "needs-auth", mcpServersByName(t, c.servers)["docs"]["state"])

	// Cancelled: nothing stored, nothing connected.
	c.prompt("/mcp login")
	c.notified("sign in to MCP server \"docs\"")
	p.answerUI("input", map[string]any{"cancelled": true})
	c.notified("Sign-in cancelled.")
	c.handled()
	assert.Equal(t, "needs-auth", mcpServersByName(t, c.servers)["docs"]["state"])
	assert.NoFileExists(t, filepath.Join(w.agentDir, "mcp-auth.json"))

	c.prompt("/mcp login docs")
	msg := c.notified("sign in to MCP server \"docs\"")
	lines := strings.Split(msg, "\n")
	authURL := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(authURL, as.Issuer+"/authorize?"), msg)
	browsed := make(chan error, 1)
	go func() {
		resp, err := http.Get(authURL)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		browsed <- err
	}()
	assert.Equal(t, `Signed in to MCP server "docs" (2 tools).`, c.notified("Signed in"))
	c.handled()
	require.NoError(t, <-browsed)
	docs := mcpServersByName(t, c.servers)["docs"]
	assert.Equal(t, "connected", docs["state"], "%v", docs)
	assert.Len(t, docs["tools"], 2)
	assert.NotNil(t, authState(t, w.agentDir, "docs", as.MCPURL)["tokens"])

	c.prompt("/mcp logout")
	c.notified("Signed out of MCP server \"docs\"")
	c.handled()
	assert.Nil(t, authState(t, w.agentDir, "docs", as.MCPURL))
	assert.Equal(t, "needs-auth", mcpServersByName(t, c.servers)["docs"]["state"])
	assert.Equal(t, 0, p.exit())
}

// mcpJSONServer is the global mcp.json's servers, as the file has them.
func mcpJSONServer(t *testing.T, w *world) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.agentDir, "mcp.json"))
	require.NoError(t, err)
	var f struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	return f.MCPServers
}

// Issue 40 over ACP: /mcp is among the available commands, and its
// choice of server reaches a client with form elicitation as a form
// whose field's enum is the servers; the chosen one connects again.
func TestACPMCPCommand(t *testing.T) {
	t.Parallel()
	bin := mcpServerBinary(t)
	cwd, agentDir := t.TempDir(), t.TempDir()
	pidA := filepath.Join(t.TempDir(), "a.pid")
	pidB := filepath.Join(t.TempDir(), "b.pid")
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"alpha": map[string]any{"command": bin, "args": []string{"-pidfile", pidA}, "exposure": "direct"},
		"beta":  map[string]any{"command": bin, "args": []string{"-pidfile", pidB}, "exposure": "direct"},
	}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(agentDir, "mcp.json"), b, 0o644))
	p := startACP(t, cwd, agentDir, "--model", "faux/faux-fast")
	s := p.startedWith(cwd, map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	var names []string
	for _, c := range p.commandsOf(s)["availableCommands"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	assert.Contains(t, names, "mcp")
	a0 := testenv.WaitPID(t, pidA, waitLimit)
	b0 := testenv.WaitPID(t, pidB, waitLimit)

	id := p.prompt(s, "/mcp reconnect")
	_, req := p.asked()
	require.Equal(t, "elicitation/create", req.str("method"))
	assert.Contains(t, req.obj("params").str("message"), "MCP server")
	p.write(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{
		"action": "accept", "content": map[string]any{"value": "alpha"}}})
	_, res := p.result(id)
	assert.Equal(t, "end_turn", res.str("stopReason"))
	assert.NotEqual(t, a0, testenv.ReadPID(t, pidA), "alpha was not started again")
	assert.Equal(t, b0, testenv.ReadPID(t, pidB))
	assert.Equal(t, 0, p.exit())
}
