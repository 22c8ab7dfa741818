package mcpstate

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/mcp"
)

// The MCP servers extensions register (pi.registerMcpServer). The
// extension host keeps them as pi's runtime does (who registered which,
// what pi.getMcpServers() lists, the mcp_servers_change event), checking
// each config with gopi's validation first (validateMcpServer, so the
// call throws gopi's message: [Validate]); the extensions' registrations
// list them, and the state serves them as pi's MCP extension does: beside
// the mcp.json servers, which take precedence over one of the same name.

// registered is what the manager has of the servers extensions
// registered.
type registered struct {
	mu sync.Mutex // guards the fields below
	// configured are mcp.json's servers as the session has them now:
	// Config.Servers, with the changes /mcp made (command.go).
	configured []mcp.Entry
	// entries are the servers added to the manager, in registration
	// order: Scope extension, Source the extension's path.
	entries []mcp.Entry
	// configs are the configs they were added with, by name: a server
	// registered again with another config starts again.
	configs map[string]string
	// said are the problems reported already, each once.
	said map[string]bool
}

// Validate is pi.registerMcpServer's check of its config: core/mcp's,
// whose message the call throws; a valid config comes back as pi's
// validation leaves it.
func Validate(a ext.MCPServer) ext.ValidateMCPServerResult {
	if _, err := mcp.ValidateServer(a.Name, a.Config); err != nil {
		return ext.ValidateMCPServerResult{Error: invalidRegistration(a, err)}
	}
	return ext.ValidateMCPServerResult{Config: mcp.ResolveAliases(a.Config)}
}

// invalidRegistration is pi's message for an invalid config.
func invalidRegistration(a ext.MCPServer, err error) string {
	return fmt.Sprintf("Invalid MCP server registered by extension %q: %v", a.ExtensionPath, err)
}

// SyncRegistered gives the manager the servers regs (the extensions'
// registrations now) name: a server that is new, or registered again with
// another config, starts; one no longer registered stops. One that
// mcp.json defines already (a name that differs at most in "-" and "_")
// is left to mcp.json's, as in pi. Each problem is reported once.
func (s *State) SyncRegistered(regs []ext.MCPServer) {
	var problems []func()
	s.registered.mu.Lock()
	var next []mcp.Entry
	configs := map[string]string{}
	for _, r := range regs {
		e, problem := s.registeredEntry(r)
		if problem != nil {
			if key := r.ExtensionPath + "\x00" + r.Name + "\x00" + problem.key; !s.registered.said[key] {
				if s.registered.said == nil {
					s.registered.said = map[string]bool{}
				}
				s.registered.said[key] = true
				if problem.report != nil {
					problems = append(problems, problem.report)
				}
			}
			continue
		}
		next = append(next, e)
		configs[e.Name] = string(r.Config)
	}
	for _, e := range s.registered.entries {
		if configs[e.Name] != s.registered.configs[e.Name] {
			s.mgr.Remove(e.Name)
		}
	}
	for _, e := range next {
		if old, ok := s.registered.configs[e.Name]; ok && old == configs[e.Name] {
			continue
		}
		if err := s.mgr.Add(e); err != nil {
			if !errors.Is(err, mcp.ErrClosed) {
				problems = append(problems, func() { s.cfg.Report(err) })
			}
			continue
		}
		if names := codemodeServers([]mcp.Entry{e}); len(names) > 0 && !s.cfg.Codemode {
			problems = append(problems, func() { s.cfg.Report(codemodeNote(names)) })
		}
	}
	s.registered.entries, s.registered.configs = next, configs
	s.registered.mu.Unlock()
	for _, report := range problems {
		report()
	}
}

// registrationProblem is why a registered server is not served, and how
// to report it (nil: it goes unsaid); key tells one kind from another, so
// that each is reported once.
type registrationProblem struct {
	key    string
	report func()
}

// registeredEntry is r as the manager serves it, or why it does not.
func (s *State) registeredEntry(r ext.MCPServer) (mcp.Entry, *registrationProblem) {
	srv, err := mcp.ValidateServer(r.Name, r.Config)
	if err != nil {
		// validateMcpServer could not answer (the host registered it
		// before gopi was there to ask): reported instead of thrown.
		return mcp.Entry{}, &registrationProblem{"invalid", func() {
			s.cfg.ExtError(ext.ErrorEvent{ExtensionPath: r.ExtensionPath, Event: registerEvent, Error: invalidRegistration(r, err)})
		}}
	}
	if i := slices.IndexFunc(s.cfg.Servers, func(c mcp.Entry) bool { return mcp.Namespace(c.Name) == mcp.Namespace(r.Name) }); i >= 0 {
		c := s.cfg.Servers[i]
		return mcp.Entry{}, &registrationProblem{"overridden", func() {
			s.cfg.Report(fmt.Errorf("mcp: %q registered by %s is overridden by %q in %s", r.Name, r.ExtensionPath, c.Name, c.Source))
		}}
	}
	if s.mgr == nil {
		// --no-mcp. As in pi, unless an extension says it connects
		// registered servers itself (it handles mcp_servers_change).
		if !s.noExtensions() && s.cfg.Extensions.Handles(ext.EventMCPServersChange) {
			return mcp.Entry{}, &registrationProblem{key: "off"}
		}
		return mcp.Entry{}, &registrationProblem{"off", func() {
			s.cfg.ExtError(ext.ErrorEvent{ExtensionPath: r.ExtensionPath, Event: registerEvent,
				Error: fmt.Sprintf("MCP server %q is registered, but --no-mcp is set, so gopi connects no MCP server", r.Name)})
		}}
	}
	return mcp.Entry{Name: r.Name, Server: srv, Source: r.ExtensionPath, Scope: mcp.ScopeExtension}, nil
}

// registerEvent is the event of an extension_error about a registered
// server (pi's).
const registerEvent = "register_mcp_server"
