// Package mcpstate is the session's MCP room: it owns the connections to
// the MCP servers (a [mcp.Manager]), the servers extensions registered,
// what the client last heard of each (mcp_server_state), and tool_search
// with the tools it loads into a request.
//
// The host builds one [State] with [New], given only what it uses
// ([Config]: never the host), starts it with [State.Start] and ends it
// with [State.Close]. It asks the state for the tools to declare
// ([State.Declared]), the system prompt's server lines
// ([State.ServerLines]), the tools a request adds ([State.RequestTools],
// the agent's hook) and the servers' listing ([State.Servers]); the state
// tells it when a server's tools changed ([Config.Changed]). Start at
// servers.go.
package mcpstate

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/tools"
)

// wait is the longest a prompt waits for servers with direct tools, and
// tool_search or a resource tool for every server (pi's 10 s).
const wait = 10 * time.Second

// Extensions are the session's extensions, as far as MCP needs them: they
// may register servers (pi.registerMcpServer), and one may connect those
// itself.
type Extensions interface {
	// Empty reports whether there is no extension.
	Empty() bool
	// Handles reports whether some extension handles event.
	Handles(event string) bool
}

// Config is what a [State] is given.
type Config struct {
	// Servers are mcp.json's (mcp.Load's, values expanded as each
	// starts); nil means none.
	Servers []mcp.Entry
	// Off connects no server, not even one an extension registers
	// (--no-mcp).
	Off bool
	// Cwd is the project, where stdio servers start.
	Cwd string
	// AgentDir holds mcp.log and the servers' OAuth tokens; "" means
	// neither.
	AgentDir string
	// Version is gopi's, told to the servers.
	Version string
	// Selection says which MCP tools exist and which are declared (pi's
	// --tools allowlist and --exclude-tools).
	Selection tools.Selection
	// Codemode: the codemode tool is active, so scripts reach the tools
	// with codemode exposure (tool_search still loads them for the
	// model, as in pi).
	Codemode bool
	// Extensions are the session's extensions; nil means none.
	Extensions Extensions
	// Report hears problems the session survived.
	Report func(error)
	// Emit sends the client an event (mcp_server_state).
	Emit func(api.Event)
	// ExtError reports a problem of a server an extension registered as
	// that extension's error (extension_error).
	ExtError func(ext.ErrorEvent)
	// Changed is called when a server's state or tools changed: the host
	// declares the tools again ([State.Declared]) and gives the state the
	// extensions' registrations ([State.SyncRegistered]). The client hears
	// of the change after it returns.
	Changed func()
}

// State is the session's MCP servers and what follows from them. Its
// locks are taken in this order: sentMu, then registered.mu, then the
// manager's own; none of them is held while Config's funcs run, except
// sentMu around Emit (mcp_server_state events go out one at a time).
type State struct {
	cfg Config
	// life lives as long as the session: a prompt's wait ends with it.
	life context.Context

	// mgr connects the servers; nil without any, and without extensions
	// that may register some, and under Off. Set by Start, before the
	// state is shared, and not changed after.
	mgr *mcp.Manager
	// registered are the servers extensions registered (registered.go).
	registered registered

	// changing serializes /mcp's changes of a server's configuration
	// (command.go): one file write and manager change at a time.
	changing sync.Mutex

	sentMu sync.Mutex // serializes mcp_server_state events; guards the fields below
	// listening: the client subscribed (Subscribed); nobody heard events
	// before.
	listening bool
	// sent is each server as the client last heard of it (announce).
	sent map[string]api.MCPServer
}

// New is the session's MCP state, not connected yet (see [State.Start]).
// ctx lives as long as the session: a prompt's wait for the servers ends
// with it.
func New(ctx context.Context, cfg Config) *State {
	if cfg.Report == nil {
		cfg.Report = func(error) {}
	}
	if cfg.Changed == nil {
		cfg.Changed = func() {}
	}
	if cfg.Emit == nil {
		cfg.Emit = func(api.Event) {}
	}
	if cfg.ExtError == nil {
		cfg.ExtError = func(ext.ErrorEvent) {}
	}
	s := &State{cfg: cfg, life: ctx}
	s.registered.configured = slices.Clone(cfg.Servers)
	return s
}

// noExtensions reports whether the session has no extension.
func (s *State) noExtensions() bool { return s.cfg.Extensions == nil || s.cfg.Extensions.Empty() }

// WaitFirst waits, at most 10 s, for the servers with direct tools to
// connect (or fail) before a prompt: their tools are declared in its
// request, as are the others' lines of the mcp_servers section once they
// connected. Once they have, it returns at once. Servers that needed an
// OAuth sign-in connect again first when their stored tokens changed (a
// `gopi mcp login` meanwhile), within the same bound.
func (s *State) WaitFirst(ctx context.Context) {
	if s.mgr.Empty() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()
	s.mgr.RetrySignedIn(ctx)
	// A server whose first attempt has ended (a client may have seen it
	// connected) settles once the prompt and the tools follow it, which
	// takes no time: the request then lists it as the client saw it.
	ended := map[string]bool{}
	for _, st := range s.mgr.Statuses() {
		ended[st.Name] = st.State != mcp.StateConnecting
	}
	_ = s.mgr.Wait(ctx, func(name string, srv mcp.Server) bool {
		return srv.MayExpose(mcp.ExposureDirect) || ended[name]
	})
}

// waitAll waits, at most 10 s, until no server is connecting.
func (s *State) waitAll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_ = s.mgr.Wait(ctx, func(string, mcp.Server) bool { return true })
}

// Close stops the servers and waits for them (and for those removed
// already).
func (s *State) Close() {
	if err := s.mgr.Close(); err != nil && !errors.Is(err, context.Canceled) {
		s.cfg.Report(err)
	}
}
