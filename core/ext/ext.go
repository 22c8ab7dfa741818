// Package ext runs pi extensions for gopi: it finds them, starts the Node
// extension host that loads them, calls their hooks and runs their tools and
// commands.
//
// The protocol between gopi and an extension host is the interface: an
// [Extension] answers the host methods gopi calls ([HostToolCall],
// [HostInput], [HostExecuteTool], ...) and calls back the [Peer] methods
// ([PeerUIAsk], [PeerSendMessage], ...), both named and shaped as on the
// Node host's pipe: protocol.go names every method, params.go and
// events.go type what they carry, and core/host serves the Peer side
// through [Routes]. The Node host ([NodeHost]) is one Extension; Go code,
// tests among it, can be another ([Func]).
package ext

import (
	"context"
	"encoding/json"
	"fmt"
)

// Extension is one runner of extensions.
type Extension interface {
	// Start loads the extensions and reports what they registered. peer
	// receives their calls back into gopi for as long as the extension
	// runs.
	Start(ctx context.Context, peer Peer) (Registrations, error)
	// Call invokes a host method and decodes its result into result (nil
	// discards it).
	Call(ctx context.Context, method Method, params, result any) error
	// Notify sends a host method without waiting for it; notifications
	// arrive in the order they are sent, before any later Call.
	Notify(method Method, params any)
	// Close stops the extension; nothing of it outlives Close.
	Close() error
}

// Reloader is an [Extension] that can load its extensions afresh (pi's
// ctx.reload()): what it registered is replaced by what the new load
// registers. Calls already under way finish on the old load.
type Reloader interface {
	Reload(ctx context.Context) (Registrations, error)
}

// Peer is gopi as an extension sees it. Requests (a dialog, a session
// switch) may take long. Notifications arrive in order; sendMessage and
// sendUserMessage may call the extension again, the others must not (they
// may be delivered while the extension waits for gopi).
type Peer interface {
	Request(ctx context.Context, method Method, params json.RawMessage) (any, error)
	Notification(method Method, params json.RawMessage)
}

// Registrations are what extensions registered while loading.
type Registrations struct {
	// Loaded are the paths of the extensions that loaded.
	Loaded    []string    `json:"loaded"`
	Errors    []LoadError `json:"errors"`
	Tools     []ToolDef   `json:"tools"`
	Commands  []Command   `json:"commands"`
	Flags     []Flag      `json:"flags"`
	Shortcuts []Shortcut  `json:"shortcuts"`
	// Handlers are the event types some handler listens to.
	Handlers []string `json:"handlers"`
	// MCPServers are the MCP servers they registered, in order.
	MCPServers []MCPServer `json:"mcpServers,omitempty"`
}

// MCPServer is an MCP server an extension registered
// (pi.registerMcpServer(name, config)), as pi.getMcpServers() lists it:
// Config is the server's mcpServers entry, as in mcp.json.
type MCPServer struct {
	Name          string          `json:"name"`
	Config        json.RawMessage `json:"config"`
	ExtensionPath string          `json:"extensionPath"`
}

// LoadError is an extension that failed to load.
type LoadError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// ToolDef is a tool an extension registered.
type ToolDef struct {
	Name             string          `json:"name"`
	Label            string          `json:"label,omitempty"`
	Description      string          `json:"description"`
	Parameters       json.RawMessage `json:"parameters"`
	PromptSnippet    string          `json:"promptSnippet,omitempty"`
	PromptGuidelines []string        `json:"promptGuidelines,omitempty"`
	ExecutionMode    string          `json:"executionMode,omitempty"`
	Path             string          `json:"path,omitempty"`
	// SourceInfo is pi's description of the extension it came from.
	SourceInfo json.RawMessage `json:"sourceInfo,omitempty"`
}

// Command is a slash command an extension registered.
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path,omitempty"`
	// SourceInfo is pi's description of the extension it came from.
	SourceInfo json.RawMessage `json:"sourceInfo,omitempty"`
}

// Flag is a command-line flag an extension registered.
type Flag struct {
	Name        string `json:"name"`
	Type        string `json:"type"` // "boolean" or "string"
	Default     any    `json:"default,omitempty"`
	Description string `json:"description"`
	Path        string `json:"path,omitempty"`
}

// Shortcut is a key binding an extension registered; gopi has no terminal
// UI, so it is listed only.
type Shortcut struct {
	Shortcut    string `json:"shortcut"`
	Description string `json:"description"`
	Path        string `json:"path,omitempty"`
}

// Func is an [Extension] written in Go: each host method is a function.
// Methods without a function answer "method not found"; notifications
// without one are dropped.
type Func struct {
	Regs    Registrations
	Methods map[Method]func(ctx context.Context, peer Peer, params json.RawMessage) (any, error)
	peer    Peer
}

var _ Extension = (*Func)(nil)

// Start implements [Extension].
func (f *Func) Start(_ context.Context, peer Peer) (Registrations, error) {
	f.peer = peer
	return f.Regs, nil
}

// Call implements [Extension].
func (f *Func) Call(ctx context.Context, method Method, params, result any) error {
	m := f.Methods[method]
	if m == nil {
		return fmt.Errorf("%w: %s", ErrNoMethod, method)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("extension %s: %w", method, err)
	}
	out, err := m(ctx, f.peer, raw)
	if err != nil || result == nil {
		return err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("extension %s: %w", method, err)
	}
	if err := json.Unmarshal(b, result); err != nil {
		return fmt.Errorf("extension %s: reading its answer: %w", method, err)
	}
	return nil
}

// Notify implements [Extension].
func (f *Func) Notify(method Method, params any) {
	if m := f.Methods[method]; m != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return
		}
		_, _ = m(context.Background(), f.peer, raw)
	}
}

// Close implements [Extension].
func (f *Func) Close() error { return nil }
