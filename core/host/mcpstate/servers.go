package mcpstate

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/mcp"
)

// Start connects the MCP servers in the background. gopi has no
// codemode: tools with that exposure are reached through tool_search,
// as deferred tools are, which it says once. With extensions there is a
// manager even without servers: they may register some.
func (s *State) Start() {
	if s.cfg.Off || len(s.cfg.Servers) == 0 && s.noExtensions() {
		return
	}
	s.mgr = mcp.NewManager(mcp.Options{
		Servers:     s.cfg.Servers,
		Cwd:         s.cfg.Cwd,
		Version:     s.cfg.Version,
		Auth:        s.auth(),
		Log:         s.log(),
		Report:      s.cfg.Report,
		ToolAllowed: s.cfg.Selection.MCPAllowed,
	})
	s.sent = map[string]api.MCPServer{}
	for _, srv := range s.Servers() {
		s.sent[srv.Name] = srv
	}
	s.mgr.Subscribe(s.changed)
	if names := codemodeServers(s.cfg.Servers); len(names) > 0 && !s.cfg.Codemode {
		s.cfg.Report(codemodeNote(names))
	}
	s.mgr.Start()
}

// log is the servers' log, mcp.log in the agent directory; none without
// one.
func (s *State) log() *mcp.ServerLog {
	if s.cfg.AgentDir == "" {
		return nil
	}
	return mcp.NewServerLog(filepath.Join(s.cfg.AgentDir, mcp.LogFile))
}

// auth is the store of the servers' OAuth tokens, in the agent
// directory; none without one.
func (s *State) auth() *mcp.AuthStore {
	if s.cfg.AgentDir == "" {
		return nil
	}
	return mcp.NewAuthStore(s.cfg.AgentDir)
}

// codemodeNote says that the servers names (quoted) have codemode tools
// while the codemode tool is off: the model reaches them through
// tool_search only.
func codemodeNote(names []string) error {
	return fmt.Errorf("mcp: codemode is off; the tools of %s with exposure codemode "+
		"are reached through tool_search, as deferred tools are (--tools +codemode turns it on)", strings.Join(names, ", "))
}

// codemodeServers names the enabled servers with codemode exposure in
// their configuration (a server's own, or a toolExposure entry).
func codemodeServers(servers []mcp.Entry) []string {
	var out []string
	for _, e := range servers {
		if e.Server.IsEnabled() && e.Server.MayExpose(mcp.ExposureCodemode) {
			out = append(out, fmt.Sprintf("%q", e.Name))
		}
	}
	return out
}

// changed follows a server's change of state or tools (the manager's
// Subscribe): the host declares the tools again (its tools join or leave
// the model's, the system prompt's mcp_servers section follows), and the
// client hears of it.
func (s *State) changed(mcp.Status) {
	s.cfg.Changed()
	s.Announce()
}

// Subscribed says that the client listens now: it hears at once of each
// server whose state changed since the session started, and of every
// change from now on.
func (s *State) Subscribed() {
	s.sentMu.Lock()
	s.listening = true
	s.sentMu.Unlock()
	s.Announce()
}

// Announce sends mcp_server_state for each server that is not as the
// client last heard of it (as it started: connecting, or disabled). Until
// the client subscribes nobody hears events, so nothing is sent;
// [State.Subscribed] sends what happened before. One at a time, each
// reading the servers now: the last event of a server holds its current
// state.
func (s *State) Announce() {
	if s.mgr.Empty() {
		return
	}
	s.sentMu.Lock()
	defer s.sentMu.Unlock()
	if !s.listening {
		return
	}
	for _, srv := range s.Servers() {
		if reflect.DeepEqual(srv, s.sent[srv.Name]) {
			continue
		}
		s.sent[srv.Name] = srv
		s.cfg.Emit(api.MCPServerState{Server: srv})
	}
}

// Servers lists the session's MCP servers, in mcp.json's order and then
// those extensions registered (scope "extension", the extension as their
// source), with where each connection stands and its tools: as
// get_mcp_servers and mcp_server_state give them. A server still
// starting is "connecting".
func (s *State) Servers() []api.MCPServer {
	out := []api.MCPServer{}
	statuses := map[string]mcp.Status{}
	for _, st := range s.mgr.Statuses() {
		statuses[st.Name] = st
	}
	tools := map[string][]api.MCPTool{}
	for _, t := range s.mgr.Tools() {
		tools[t.Server()] = append(tools[t.Server()], api.MCPTool{
			Name: t.Spec().Name, RemoteName: t.RemoteName(), Exposure: string(t.Exposure()), ReadOnly: t.ReadOnly(),
		})
	}
	for _, e := range s.entries() {
		srv := api.MCPServer{
			Name: e.Name, Scope: string(e.Scope), Source: e.Source, Override: e.Override,
			Enabled: e.Server.IsEnabled(), Exposure: string(e.Server.ServerExposure()),
			Type: "stdio", Transport: e.Server.Transport(), State: api.MCPDisabled, Tools: tools[e.Name],
		}
		if e.Server.IsHTTP() {
			srv.Type = "http"
		}
		if st, ok := statuses[e.Name]; ok {
			srv.State, srv.Resources = api.MCPState(st.State), st.Resources
			if st.Err != nil && st.State != mcp.StateConnected {
				srv.Error = strings.TrimPrefix(st.Err.Error(), fmt.Sprintf("mcp server %q: ", e.Name))
			}
		}
		if srv.Tools == nil {
			srv.Tools = []api.MCPTool{}
		}
		out = append(out, srv)
	}
	return out
}

// entries are the session's MCP servers as the manager has them:
// mcp.json's, then those extensions registered.
func (s *State) entries() []mcp.Entry {
	s.registered.mu.Lock()
	defer s.registered.mu.Unlock()
	// A copy: /mcp's changes write configured in place under the lock.
	return slices.Concat(s.registered.configured, s.registered.entries)
}
