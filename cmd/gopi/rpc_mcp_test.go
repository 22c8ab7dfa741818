package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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

func pidIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// Issue 29, the connection step: an mcp.json server with direct exposure
// declares its tools; the faux model calls one and the result is in the
// transcript. A server that fails to start is reported on stderr and
// gopi goes on; a server that crashes during a call comes back on the
// next; a server with another exposure is said to be unreachable for
// now; no server process outlives gopi.
func TestRPCMCPDirectTools(t *testing.T) {
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
	first := pidIn(t, pidFile)

	p.ok("2", map[string]any{"type": "prompt", "message": "call: mcp__test__crash"})
	end = toolEndOf(t, p, p.idle(), "mcp__test__crash")
	assert.Equal(t, true, end["isError"], p.transcript())
	require.Eventually(t, func() bool { return !alive(first) }, 10*time.Second, 20*time.Millisecond)

	p.ok("3", map[string]any{"type": "prompt", "message": `call: mcp__test__echo {"text": "again"}`})
	end = toolEndOf(t, p, p.idle(), "mcp__test__echo")
	assert.Equal(t, "echo: again", resultText(end), p.transcript())
	second := pidIn(t, pidFile)
	assert.NotEqual(t, first, second)

	assert.Equal(t, 0, p.exit())
	stderr := p.stderr.String()
	assert.Contains(t, stderr, `mcp server "broken"`)
	assert.Contains(t, stderr, "cannot start")
	assert.Contains(t, stderr, `the other tools of "later"`)
	assert.False(t, alive(second), "the MCP server %d outlived gopi", second)
}

// --no-mcp connects nothing; a trusted project's .pi/mcp.json entry
// without command or url turns a user server off.
func TestRPCMCPOff(t *testing.T) {
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
	bin := mcpServerBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			w := newWorld(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			w.writeJSON(filepath.Join(w.agentDir, "mcp.json"), map[string]any{"mcpServers": map[string]any{
				"test": map[string]any{"command": bin, "args": []string{"-pidfile", pidFile}, "exposure": "direct"},
			}})
			p := startProc(t, w.cwd, w.agentDir, "--mode", "rpc", "--model", "faux/faux-fast")
			p.ok("1", map[string]any{"type": "prompt", "message": `call: mcp__test__echo {"text": "hello"}`})
			p.idle()
			pid := pidIn(t, pidFile)
			require.True(t, alive(pid))
			p.signal(sig)
			p.wait()
			require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 20*time.Millisecond,
				"the MCP server %d outlived gopi (%v)", pid, sig)
		})
	}
}
