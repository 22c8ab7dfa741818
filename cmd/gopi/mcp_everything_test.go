package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/internal/testenv"
)

// everythingServer is the entry file of the official MCP test server,
// @modelcontextprotocol/server-everything, when testdata/mcp/everything.sh
// installed it: make test-node does, and runs these tests with it (in CI
// too); a plain go test skips them.
func everythingServer(t *testing.T) (node, entry string) {
	t.Helper()
	entry = os.Getenv("GOPI_MCP_EVERYTHING")
	if entry == "" {
		t.Skip("GOPI_MCP_EVERYTHING is not set (make test-node installs the official MCP test server and sets it)")
	}
	node, err := exec.LookPath("node")
	require.NoError(t, err)
	return node, entry
}

// everythingChecks drive one configured "everything" server through gopi
// over RPC: its tools are declared and answer (text, numbers, an image),
// get_mcp_servers lists it with its tools' annotations, and an abort
// ends a long call of it at once.
func everythingChecks(t *testing.T, w *world) {
	p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast", "--no-session")

	p.ok("1", map[string]any{"type": "prompt", "message": `call: mcp__everything__echo {"message": "hello"}`})
	end := toolEndOf(t, p, p.idle(), "mcp__everything__echo")
	assert.Equal(t, false, end["isError"], p.transcript())
	assert.Equal(t, "Echo: hello", resultText(end))

	p.ok("2", map[string]any{"type": "prompt", "message": `call: mcp__everything__get_sum {"a": 2, "b": 40}`})
	end = toolEndOf(t, p, p.idle(), "mcp__everything__get_sum")
	assert.Contains(t, resultText(end), "42", p.transcript())

	p.ok("3", map[string]any{"type": "prompt", "message": `call: mcp__everything__get_tiny_image {}`})
	end = toolEndOf(t, p, p.idle(), "mcp__everything__get_tiny_image")
	var kinds []string
	for _, c := range end.obj("result")["content"].([]any) {
		kinds = append(kinds, c.(map[string]any)["type"].(string))
	}
	assert.Contains(t, kinds, "image", p.transcript())

	data := p.ok("4", map[string]any{"type": "get_mcp_servers"}).(map[string]any)
	servers := data["servers"].([]any)
	require.Len(t, servers, 1)
	s := servers[0].(map[string]any)
	assert.Equal(t, "everything", s["name"])
	assert.Equal(t, "connected", s["state"], p.transcript())
	assert.Equal(t, true, s["resources"])
	var echo map[string]any
	for _, tl := range s["tools"].([]any) {
		if m := tl.(map[string]any); m["remoteName"] == "echo" {
			echo = m
		}
	}
	require.NotNil(t, echo, "echo among %v", s["tools"])
	assert.Equal(t, true, echo["readOnly"], "the server's readOnlyHint")

	// A 60-second operation, aborted: the call ends now, as aborted.
	p.send(map[string]any{"id": "5", "type": "prompt", "message": `call: mcp__everything__trigger_long_running_operation {"duration": 60, "steps": 60}`})
	p.until(func(r record) bool {
		return r.is("tool_execution_start") && r.str("toolName") == "mcp__everything__trigger_long_running_operation"
	})
	// The abort's answer follows the run's end.
	p.send(map[string]any{"id": "6", "type": "abort"})
	rs := p.until(func(r record) bool { return r.is("response") && r["id"] == "6" })
	end = toolEndOf(t, p, rs, "mcp__everything__trigger_long_running_operation")
	assert.Equal(t, true, end["isError"], p.transcript())
	assert.Equal(t, true, rs[len(rs)-1]["success"])
	assert.Equal(t, 0, p.exit())
}

// Issue 29: the official MCP test server, over stdio.
func TestMCPServerEverythingStdio(t *testing.T) {
	t.Parallel()
	node, entry := everythingServer(t)
	w := newWorld(t)
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{entry}, "exposure": "direct"},
	}})
	everythingChecks(t, w)
}

// Issue 29: the official MCP test server, over streamable HTTP.
func TestMCPServerEverythingHTTP(t *testing.T) {
	node, entry := everythingServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	srv := exec.Command(node, entry, "streamableHttp")
	srv.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	srv.Stdout, srv.Stderr = &out, &out
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	require.Eventually(t, func() bool {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "the server listens: %s", &out)

	w := newWorld(t)
	w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"url": url, "exposure": "direct"},
	}})
	everythingChecks(t, w)
	assert.True(t, testenv.Alive(srv.Process.Pid), "gopi leaves a server it did not start running")
}
