package mcp

import "strings"

// The shapes of pi's mcp.json (pi 1.5.2's mcp.md): one file holds
// "mcpServers", a map from server name to Server. The user's file is
// <agentDir>/mcp.json and the project's .pi/mcp.json (read only in a
// trusted project).

// File is one mcp.json.
type File struct {
	Servers map[string]Server `json:"mcpServers"`
	// AutoEnableCodemode is pi's switch beside mcpServers; gopi has no
	// codemode, so it is read and kept but changes nothing.
	AutoEnableCodemode *bool `json:"autoEnableCodemode,omitempty"`
}

// Exposure says how a server's tools reach the model.
type Exposure string

const (
	// ExposureDirect declares the tools like built-in ones.
	ExposureDirect Exposure = "direct"
	// ExposureDeferred declares them once tool_search loads them.
	ExposureDeferred Exposure = "deferred"
	// ExposureCodemode is pi's default: tools reached from codemode
	// scripts; tool_search loads them too, as deferred ones.
	ExposureCodemode Exposure = "codemode"
	// ExposureCodemodeDeferred is pi's alias of codemode.
	ExposureCodemodeDeferred Exposure = "codemode-deferred"
	// ExposureHidden registers the tools but keeps them unreachable.
	ExposureHidden Exposure = "hidden"
)

// Transport types a Server may name in "type".
const (
	TypeStdio          = "stdio"
	TypeHTTP           = "http"
	TypeStreamableHTTP = "streamable-http"
	// TypeSSE is the legacy transport pi refuses, with a hint.
	TypeSSE = "sse"
)

// Server is one entry of mcpServers, as written: values are expanded
// (${VAR}, !command, ~/) when a connection is made, not when the file is
// read, so `gopi mcp add` writes back exactly what it read.
type Server struct {
	// Type is "stdio", "http" or "streamable-http"; empty means chosen by
	// Command (stdio) or URL (streamable HTTP).
	Type string `json:"type,omitempty"`

	// Stdio: one executable and its arguments (not a shell string), extra
	// environment, and a working directory (relative to the session's).
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`

	// Streamable HTTP: the endpoint, extra headers, and OAuth settings.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	OAuth   *OAuth            `json:"oauth,omitempty"`
	// Auth sends the credential of one of gopi's providers instead of
	// OAuth (pi's "auth": {"provider": ...}); only the user's file may
	// set it, since it decides where a credential goes.
	Auth *ProviderAuth `json:"auth,omitempty"`

	// Timeout is the per-request timeout in seconds (0: pi's 60);
	// progress notifications reset it.
	Timeout float64 `json:"timeout,omitempty"`
	// Enabled false keeps the entry without connecting; nil means true.
	Enabled *bool `json:"enabled,omitempty"`
	// Description says what the server offers, in a sentence.
	Description string `json:"description,omitempty"`
	// Exposure is the server's (empty: codemode, pi's default);
	// ToolExposure overrides it per tool: exact names, or patterns with *.
	Exposure     Exposure            `json:"exposure,omitempty"`
	ToolExposure map[string]Exposure `json:"toolExposure,omitempty"`

	// toolExposureOrder is ToolExposure's keys in the file's order (the
	// first matching pattern wins); set when the entry is decoded from
	// JSON (exposure.go).
	toolExposureOrder []string
}

// ProviderAuth names the provider whose credential an HTTP server gets.
type ProviderAuth struct {
	Provider string `json:"provider"`
}

// OAuth is a remote server's sign-in settings (pi's "oauth" object).
type OAuth struct {
	ClientID              string `json:"clientId,omitempty"`
	ClientSecret          string `json:"clientSecret,omitempty"`
	ClientName            string `json:"clientName,omitempty"`
	CallbackPort          int    `json:"callbackPort,omitempty"`
	CallbackURL           string `json:"callbackUrl,omitempty"`
	Scope                 string `json:"scope,omitempty"`
	ClientRegistration    string `json:"clientRegistration,omitempty"`
	AuthServerMetadataURL string `json:"authServerMetadataUrl,omitempty"`
}

// IsEnabled reports whether the entry should be connected.
func (s Server) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Transport is how the server is reached, as listings show it: the URL
// of an HTTP server, else the command line of a stdio one (as written,
// before expansion).
func (s Server) Transport() string {
	if s.IsHTTP() {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}
