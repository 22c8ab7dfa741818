package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/internal/testenv"
)

// registeringExt is an extension, in Go, that registered servers; its
// command "set" replaces them with those in its args (JSON), and "stop"
// says what a host that crashed for good says.
func registeringExt(servers ...ext.MCPServer) *ext.Func {
	commands := []ext.Command{{Name: "set"}, {Name: "stop"}}
	return &ext.Func{
		Regs: ext.Registrations{MCPServers: servers, Commands: commands},
		Methods: map[ext.Method]func(context.Context, ext.Peer, json.RawMessage) (any, error){
			ext.HostCommand: func(_ context.Context, peer ext.Peer, raw json.RawMessage) (any, error) {
				var p ext.CommandParams
				if err := json.Unmarshal(raw, &p); err != nil {
					return nil, err
				}
				if p.Name == "stop" {
					peer.Notification(ext.PeerStopped, nil)
					return ext.Empty{}, nil
				}
				var regs ext.Registrations
				if err := json.Unmarshal([]byte(p.Args), &regs.MCPServers); err != nil {
					return nil, err
				}
				regs.Commands = commands
				b, err := json.Marshal(regs)
				if err != nil {
					return nil, err
				}
				peer.Notification(ext.PeerRegistrations, b)
				return ext.Empty{}, nil
			},
		},
	}
}

func registered(name, config string) ext.MCPServer {
	return ext.MCPServer{Name: name, Config: json.RawMessage(config), ExtensionPath: "/exts/mine.ts"}
}

// extensionErrors are the extension_error events recorded.
func (r *recorder) extensionErrors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		if x, ok := ev.(api.ExtensionError); ok {
			out = append(out, x.ExtensionPath+" "+x.Event+": "+x.Error)
		}
	}
	return out
}

// mcpHost is a host on the faux model with exts and the configured
// servers, its extensions loaded; reports collects what it reports.
func mcpHost(t *testing.T, exts *ext.Manager, o Options) (*Host, *recorder, func() string) {
	t.Helper()
	reg, model := fauxFast(t)
	var mu sync.Mutex
	var reports []string
	o.Cwd, o.Registry, o.Model, o.Thinking, o.Extensions = t.TempDir(), reg, model, llm.ThinkingOff, exts
	o.Report = func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, err.Error())
	}
	h, err := New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	evs := &recorder{}
	t.Cleanup(h.Subscribe(evs.add))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, h.ext.waitLoaded(ctx))
	return h, evs, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(reports, "\n")
	}
}

// mcpServerStates are get_mcp_servers' servers once none is connecting.
func mcpServerStates(t *testing.T, h *Host) []api.MCPServer {
	t.Helper()
	var out []api.MCPServer
	require.Eventually(t, func() bool {
		r, err := h.GetMCPServers(context.Background())
		require.NoError(t, err)
		out = r.Servers
		return !slices.ContainsFunc(out, func(s api.MCPServer) bool { return s.State == api.MCPConnecting })
	}, 20*time.Second, 10*time.Millisecond)
	return out
}

// Issue 29 (extensions): a server an extension registered is served like
// a configured one: it connects, its direct tools are declared, and
// get_mcp_servers lists it after mcp.json's with scope "extension" and
// the extension as its source; one mcp.json defines already is left to
// mcp.json's and said so. Registered again with another config it starts
// again; no longer registered it stops, its tools gone; a host that
// stopped for good takes its servers with it. gopi says once that a
// server's codemode tools are reached through tool_search.
func TestMCPServersRegisteredByExtensions(t *testing.T) {
	bin := buildMCPServer(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	quoted, _ := json.Marshal(bin)
	withPID, _ := json.Marshal([]string{"-pidfile", pidFile})
	exts := ext.NewManager(registeringExt(
		registered("reg", `{"command":`+string(quoted)+`,"args":`+string(withPID)+`,"exposure":"direct","toolExposure":{"slow":"codemode-deferred"}}`),
		registered("c-f-g", `{"command":"never-started"}`),
	))
	h, _, reports := mcpHost(t, exts, Options{MCPServers: []mcp.Entry{
		{Name: "c_f_g", Server: mcp.Server{Command: bin, Exposure: mcp.ExposureDeferred}, Source: "/agent/mcp.json", Scope: mcp.ScopeGlobal},
	}})

	servers := mcpServerStates(t, h)
	require.Len(t, servers, 2)
	assert.Equal(t, "c_f_g", servers[0].Name)
	reg := servers[1]
	assert.Equal(t, "reg", reg.Name)
	assert.Equal(t, "extension", reg.Scope)
	assert.Equal(t, "/exts/mine.ts", reg.Source)
	assert.Equal(t, api.MCPConnected, reg.State)
	assert.Equal(t, "stdio", reg.Type)
	assert.Contains(t, reports(), `mcp: "c-f-g" registered by /exts/mine.ts is overridden by "c_f_g" in /agent/mcp.json`)
	require.Eventually(t, func() bool { return slices.Contains(toolNamesOf(h), "mcp__reg__echo") }, 10*time.Second, 10*time.Millisecond)
	assert.NotContains(t, toolNamesOf(h), "mcp__reg__slow", "codemode: reached through tool_search")
	pid := testenv.ReadPID(t, pidFile)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set := func(servers ...ext.MCPServer) {
		t.Helper()
		args, err := json.Marshal(append([]ext.MCPServer{}, servers...))
		require.NoError(t, err)
		require.NoError(t, h.ext.manager().RunCommand(ctx, "set", string(args), nil))
	}
	// Another config: the server starts again, with it.
	set(registered("reg", `{"command":`+string(quoted)+`,"exposure":"deferred"}`))
	assert.Eventually(t, func() bool { return !testenv.Alive(pid) }, 10*time.Second, 10*time.Millisecond, "the old server stops")
	servers = mcpServerStates(t, h)
	require.Len(t, servers, 2)
	assert.Equal(t, "deferred", servers[1].Exposure)
	assert.Equal(t, api.MCPConnected, servers[1].State)
	assert.NotContains(t, toolNamesOf(h), "mcp__reg__echo")

	// Unregistered: gone.
	set()
	servers = mcpServerStates(t, h)
	require.Len(t, servers, 1)
	assert.Equal(t, "c_f_g", servers[0].Name)

	// The host stops for good: its servers go with it.
	set(registered("again", `{"command":`+string(quoted)+`,"exposure":"direct"}`))
	require.Len(t, mcpServerStates(t, h), 2)
	require.NoError(t, h.ext.manager().RunCommand(ctx, "stop", "", nil))
	assert.Len(t, mcpServerStates(t, h), 1)
	assert.Equal(t, 1, strings.Count(reports(), `mcp: codemode is off; the tools of "reg" with exposure codemode`), reports())
}

func toolNamesOf(h *Host) []string {
	var out []string
	for _, tl := range h.agent.Tools() {
		out = append(out, tl.Spec().Name)
	}
	return out
}

// pi.getAllTools() reports every MCP tool gopi has, whatever its
// exposure (codemode as deferred, as pi registers it), with its server's
// namespace, its annotations and pi's builtin:mcp source, and the
// resource tools as read-only; the other tools say they are direct,
// tool_search that it is model-only.
func TestAllToolsReportMCPTools(t *testing.T) {
	bin := buildMCPServer(t)
	h, _, _ := mcpHost(t, ext.NewManager(&ext.Func{}), Options{MCPServers: []mcp.Entry{
		{Name: "s", Server: mcp.Server{Command: bin, Args: []string{"-resources"}, Exposure: mcp.ExposureDirect, Description: "Tests.",
			ToolExposure: map[string]mcp.Exposure{"slow": mcp.ExposureCodemode, "fail": mcp.ExposureHidden, "big": mcp.ExposureDeferred}}},
	}})
	mcpServerStates(t, h)
	byName := map[string]map[string]any{}
	require.Eventually(t, func() bool {
		raw, err := json.Marshal(h.ext.snapshot().Snapshot.AllTools)
		require.NoError(t, err)
		var infos []map[string]any
		require.NoError(t, json.Unmarshal(raw, &infos))
		for _, info := range infos {
			byName[info["name"].(string)] = info
		}
		return byName["tool_search"] != nil
	}, 10*time.Second, 10*time.Millisecond)

	echo := byName["mcp__s__echo"]
	require.NotNil(t, echo)
	assert.Equal(t, "direct", echo["exposure"])
	assert.Equal(t, map[string]any{"readOnlyHint": true, "idempotentHint": true}, echo["annotations"])
	assert.Equal(t, map[string]any{"name": "mcp__s", "aliases": []any{"s"}, "description": "Tests.",
		"instructions": "A server for gopi's tests.\nSecond line."}, echo["namespace"])
	assert.Equal(t, map[string]any{"path": "builtin:mcp", "source": "builtin", "scope": "temporary", "origin": "top-level"}, echo["sourceInfo"])
	assert.Equal(t, "Sends the text back.", echo["description"])
	assert.NotNil(t, echo["parameters"])
	assert.NotContains(t, byName["mcp__s__slow"], "annotations", "none declared")
	assert.Equal(t, "deferred", byName["mcp__s__slow"]["exposure"], "codemode")
	assert.Equal(t, "deferred", byName["mcp__s__big"]["exposure"])
	assert.Equal(t, "hidden", byName["mcp__s__fail"]["exposure"])
	assert.Equal(t, "model-only", byName["tool_search"]["exposure"])
	assert.Equal(t, "builtin:tool-search", byName["tool_search"]["sourceInfo"].(map[string]any)["path"])
	for _, n := range mcp.ResourceToolNames {
		r := byName[n]
		require.NotNil(t, r, n)
		assert.Equal(t, "direct", r["exposure"], n)
		assert.Equal(t, map[string]any{"readOnlyHint": true}, r["annotations"], n)
		assert.Equal(t, "builtin:mcp", r["sourceInfo"].(map[string]any)["path"], n)
	}
}

// pi.registerMcpServer checks its config with core/mcp's validation: a
// bad one gets pi's message, naming the extension; a good one comes back
// with its aliases resolved and its other fields as they were.
func TestValidateRegisteredMCPServer(t *testing.T) {
	h := &Host{}
	ctx := context.Background()
	r, err := extPeer{h}.extValidateMCPServer(ctx, registered("docs", `{"url":"ftp://x"}`))
	require.NoError(t, err)
	assert.Equal(t, ext.ValidateMCPServerResult{Error: `Invalid MCP server registered by extension "/exts/mine.ts": server "docs": url must be an http or https URL`}, r)
	r, err = extPeer{h}.extValidateMCPServer(ctx, registered("bad name", `{"command":"x"}`))
	require.NoError(t, err)
	assert.Contains(t, r.Error, `invalid server name "bad name"`)
	r, err = extPeer{h}.extValidateMCPServer(ctx, registered("docs", `{"command":"x","exposure":"codemode-deferred","mine":1}`))
	require.NoError(t, err)
	assert.Empty(t, r.Error)
	assert.JSONEq(t, `{"command":"x","exposure":"codemode","mine":1}`, string(r.Config))
}

// --no-mcp connects no registered server either: as in pi without its
// MCP support, each is an extension error, unless an extension handles
// mcp_servers_change (it may connect them itself). An invalid config that
// reached gopi unchecked is one too.
func TestRegisteredMCPServersUnderNoMCP(t *testing.T) {
	for _, handled := range []bool{false, true} {
		f := registeringExt(registered("reg", `{"command":"x"}`), registered("bad", `{"url":"ftp://x"}`))
		if handled {
			f.Regs.Handlers = []string{ext.EventMCPServersChange}
		}
		h, evs, _ := mcpHost(t, ext.NewManager(f), Options{NoMCP: true})
		r, err := h.GetMCPServers(context.Background())
		require.NoError(t, err)
		assert.Empty(t, r.Servers)
		want := []string{`/exts/mine.ts register_mcp_server: Invalid MCP server registered by extension "/exts/mine.ts": server "bad": url must be an http or https URL`}
		if !handled {
			want = append([]string{`/exts/mine.ts register_mcp_server: MCP server "reg" is registered, but --no-mcp is set, so gopi connects no MCP server`}, want...)
		}
		assert.Eventually(t, func() bool { return len(evs.extensionErrors()) >= len(want) }, 5*time.Second, 10*time.Millisecond)
		assert.ElementsMatch(t, want, evs.extensionErrors(), "handled: %v", handled)
	}
}
