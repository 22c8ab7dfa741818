package mcpstate

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/internal/testenv"
)

func registration(name, config string) ext.MCPServer {
	return ext.MCPServer{Name: name, Config: json.RawMessage(config), ExtensionPath: "/exts/mine.ts"}
}

// serversSettled are the listed servers once none is connecting.
func serversSettled(t *testing.T, s *State) []api.MCPServer {
	t.Helper()
	var out []api.MCPServer
	require.Eventually(t, func() bool {
		out = s.Servers()
		return !slices.ContainsFunc(out, func(srv api.MCPServer) bool { return srv.State == api.MCPConnecting })
	}, 20*time.Second, 10*time.Millisecond)
	return out
}

// pi.registerMcpServer checks its config with core/mcp's validation: a
// bad one gets pi's message, naming the extension; a good one comes back
// with its aliases resolved and its other fields as they were.
func TestValidate(t *testing.T) {
	r := Validate(registration("docs", `{"url":"ftp://x"}`))
	assert.Equal(t, ext.ValidateMCPServerResult{Error: `Invalid MCP server registered by extension "/exts/mine.ts": server "docs": url must be an http or https URL`}, r)
	r = Validate(registration("bad name", `{"command":"x"}`))
	assert.Contains(t, r.Error, `invalid server name "bad name"`)
	r = Validate(registration("docs", `{"command":"x","exposure":"codemode-deferred","mine":1}`))
	assert.Empty(t, r.Error)
	assert.JSONEq(t, `{"command":"x","exposure":"codemode","mine":1}`, string(r.Config))
}

// Issue 29 (extensions): a server an extension registered is served like
// a configured one: it connects, its direct tools are declared, and the
// listing has it after mcp.json's with scope "extension" and the
// extension as its source; one mcp.json defines already (a name that
// differs at most in "-" and "_") is left to mcp.json's, said once.
// Registered again alike it goes on; with another config it starts
// again; no longer registered it stops. gopi says once that a server's
// codemode tools are reached through tool_search.
func TestSyncRegistered(t *testing.T) {
	bin := buildServer(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	quoted, _ := json.Marshal(bin)
	withPID, _ := json.Marshal([]string{"-pidfile", pidFile})
	s, heard := newState(t, Config{Extensions: extensions{}, Servers: []mcp.Entry{
		{Name: "c_f_g", Server: mcp.Server{Command: bin, Exposure: mcp.ExposureDeferred}, Source: "/agent/mcp.json", Scope: mcp.ScopeGlobal},
	}}, nil)
	regs := []ext.MCPServer{
		registration("reg", `{"command":`+string(quoted)+`,"args":`+string(withPID)+`,"exposure":"direct","toolExposure":{"slow":"codemode-deferred"}}`),
		registration("c-f-g", `{"command":"never-started"}`),
	}
	s.SyncRegistered(regs)

	servers := serversSettled(t, s)
	require.Len(t, servers, 2)
	assert.Equal(t, "c_f_g", servers[0].Name)
	reg := servers[1]
	assert.Equal(t, "reg", reg.Name)
	assert.Equal(t, "extension", reg.Scope)
	assert.Equal(t, "/exts/mine.ts", reg.Source)
	assert.Equal(t, api.MCPConnected, reg.State)
	assert.Equal(t, "stdio", reg.Type)
	assert.Contains(t, heard.Reports(), `mcp: "c-f-g" registered by /exts/mine.ts is overridden by "c_f_g" in /agent/mcp.json`)
	assert.Contains(t, names(s.Declared()), "mcp__reg__echo")
	assert.NotContains(t, names(s.Declared()), "mcp__reg__slow", "codemode: reached through tool_search")
	assert.Contains(t, names(s.Searchable()), "mcp__reg__slow")
	pid := testenv.ReadPID(t, pidFile)

	// The same registrations again: nothing starts again, nothing is
	// said again.
	s.SyncRegistered(regs)
	assert.Equal(t, api.MCPConnected, serversSettled(t, s)[1].State)
	assert.True(t, testenv.Alive(pid), "the server goes on")
	assert.Equal(t, 1, strings.Count(heard.Reports(), "is overridden"), heard.Reports())

	// Another config: the server starts again, with it.
	s.SyncRegistered([]ext.MCPServer{registration("reg", `{"command":`+string(quoted)+`,"exposure":"deferred"}`)})
	assert.Eventually(t, func() bool { return !testenv.Alive(pid) }, 10*time.Second, 10*time.Millisecond, "the old server stops")
	servers = serversSettled(t, s)
	require.Len(t, servers, 2)
	assert.Equal(t, "deferred", servers[1].Exposure)
	assert.Equal(t, api.MCPConnected, servers[1].State)
	assert.NotContains(t, names(s.Declared()), "mcp__reg__echo")

	// Unregistered: gone.
	s.SyncRegistered(nil)
	servers = serversSettled(t, s)
	require.Len(t, servers, 1)
	assert.Equal(t, "c_f_g", servers[0].Name)
	assert.Equal(t, 1, strings.Count(heard.Reports(), `mcp: codemode is off; the tools of "reg" with exposure codemode`), heard.Reports())
}

// Off (--no-mcp) connects no registered server either: as in pi without
// its MCP support, each is an extension error, said once, unless an
// extension handles mcp_servers_change (it may connect them itself). An
// invalid config that reached gopi unchecked is one too.
func TestSyncRegisteredOff(t *testing.T) {
	for _, handled := range []bool{false, true} {
		exts := extensions{}
		if handled {
			exts = extensions{ext.EventMCPServersChange}
		}
		s, heard := newState(t, Config{Off: true, Extensions: exts}, nil)
		regs := []ext.MCPServer{registration("reg", `{"command":"x"}`), registration("bad", `{"url":"ftp://x"}`)}
		s.SyncRegistered(regs)
		s.SyncRegistered(regs)
		assert.Empty(t, s.Servers())
		want := []string{`/exts/mine.ts register_mcp_server: Invalid MCP server registered by extension "/exts/mine.ts": server "bad": url must be an http or https URL`}
		if !handled {
			want = append([]string{`/exts/mine.ts register_mcp_server: MCP server "reg" is registered, but --no-mcp is set, so gopi connects no MCP server`}, want...)
		}
		assert.Equal(t, want, heard.ExtErrors(), "handled: %v", handled)
	}
}
