package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/mcp"
)

// The client's MCP servers (the mcpServers of session/new, load and
// resume) become core/mcp entries of that session alone: their tools are
// declared to the model directly (exposure direct), as the user set them
// up in the editor. The host connects them beside pi's own mcp.json
// servers and stops them when the session's runtime closes.

// ScopeClient is the scope of a server an ACP client gave.
const ScopeClient mcp.Scope = "client"

// ClientSource is the Source of such a server's entry.
const ClientSource = "ACP client"

// clientServers reads the mcpServers of a request's params as core/mcp
// entries. A missing or null list is none (the caller's decodeParams
// says when it is required). Bad entries are -32602 naming the field
// (mcpServers[1].url); an sse server is refused as gopi does not
// advertise that transport.
func clientServers(params json.RawMessage) ([]mcp.Entry, error) {
	var probe struct {
		Servers json.RawMessage `json:"mcpServers"`
	}
	if json.Unmarshal(params, &probe) != nil || len(probe.Servers) == 0 || string(probe.Servers) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(probe.Servers, &list) != nil {
		return nil, errorf(codeInvalidParams, "invalid params: \"mcpServers\" must be an array")
	}
	var out []mcp.Entry
	for i, raw := range list {
		e, err := clientServer(fmt.Sprintf("mcpServers[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		for j, o := range out {
			if mcp.Namespace(o.Name) == mcp.Namespace(e.Name) {
				return nil, errorf(codeInvalidParams, "invalid params: \"mcpServers[%d].name\" %q clashes with mcpServers[%d]'s %q (their tools would share a name)", i, e.Name, j, o.Name)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// clientServer reads one McpServer; at names it in errors.
func clientServer(at string, raw json.RawMessage) (mcp.Entry, error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return mcp.Entry{}, errorf(codeInvalidParams, "invalid params: %q must be an object", at)
	}
	str := func(key string, required bool) (string, error) {
		v, ok := fields[key]
		if !ok || string(v) == "null" {
			if required {
				return "", errorf(codeInvalidParams, "invalid params: %s needs %q", at, key)
			}
			return "", nil
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", errorf(codeInvalidParams, "invalid params: \"%s.%s\" must be a string", at, key)
		}
		return s, nil
	}
	typ, err := str("type", false)
	if err != nil {
		return mcp.Entry{}, err
	}
	name, err := str("name", true)
	if err != nil {
		return mcp.Entry{}, err
	}
	if strings.TrimSpace(name) == "" {
		return mcp.Entry{}, errorf(codeInvalidParams, "invalid params: \"%s.name\" must not be empty", at)
	}
	// The entry as mcp.json would hold it, checked by the same rules.
	cfg := map[string]any{"exposure": mcp.ExposureDirect}
	switch typ {
	case "", mcp.TypeStdio:
		command, err := str("command", true)
		if err != nil {
			return mcp.Entry{}, err
		}
		var args []string
		if v, ok := fields["args"]; ok && string(v) != "null" && json.Unmarshal(v, &args) != nil {
			return mcp.Entry{}, errorf(codeInvalidParams, "invalid params: \"%s.args\" must be an array of strings", at)
		}
		env, err := pairs(at+".env", fields["env"])
		if err != nil {
			return mcp.Entry{}, err
		}
		cfg["type"], cfg["command"] = mcp.TypeStdio, command
		if len(args) > 0 {
			cfg["args"] = args
		}
		if len(env) > 0 {
			cfg["env"] = env
		}
	case mcp.TypeHTTP:
		url, err := str("url", true)
		if err != nil {
			return mcp.Entry{}, err
		}
		headers, err := pairs(at+".headers", fields["headers"])
		if err != nil {
			return mcp.Entry{}, err
		}
		cfg["type"], cfg["url"] = mcp.TypeHTTP, url
		if len(headers) > 0 {
			cfg["headers"] = headers
		}
	case mcp.TypeSSE:
		return mcp.Entry{}, errorf(codeInvalidParams, "invalid params: \"%s.type\": gopi does not connect sse MCP servers (mcpCapabilities.sse is false); use http", at)
	default:
		return mcp.Entry{}, errorf(codeInvalidParams, "invalid params: \"%s.type\" must be \"http\", \"sse\" or absent (stdio), not %q", at, typ)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return mcp.Entry{}, fmt.Errorf("encoding MCP server %q: %w", name, err)
	}
	s, err := mcp.ValidateServer(name, b)
	if err != nil {
		return mcp.Entry{}, errorf(codeInvalidParams, "invalid params: %q: %v", at, err)
	}
	return mcp.Entry{Name: name, Server: s, Source: ClientSource, Scope: ScopeClient}, nil
}

// pairs reads an array of {name, value} as a map whose values are taken
// literally: core/mcp expands $VAR and a leading ! in mcp.json's values,
// which a client's values must not be.
func pairs(at string, raw json.RawMessage) (map[string]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, errorf(codeInvalidParams, "invalid params: %q must be an array of {name, value}", at)
	}
	out := make(map[string]string, len(list))
	for i, item := range list {
		var p struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		}
		if json.Unmarshal(item, &p) != nil || p.Name == nil || p.Value == nil {
			return nil, errorf(codeInvalidParams, "invalid params: \"%s[%d]\" must be {\"name\": string, \"value\": string}", at, i)
		}
		if *p.Name == "" {
			return nil, errorf(codeInvalidParams, "invalid params: \"%s[%d].name\" must not be empty", at, i)
		}
		out[*p.Name] = literal(*p.Value)
	}
	return out, nil
}

// literal escapes v so core/mcp's expansion gives v back: "$" is written
// "$$", and a leading "!" (a command in mcp.json) "$!".
func literal(v string) string {
	v = strings.ReplaceAll(v, "$", "$$")
	if strings.HasPrefix(v, "!") {
		v = "$" + v
	}
	return v
}

// clientNotices reports whether initialize's client advertised
// clientCapabilities.session.notices (an object).
func clientNotices(params json.RawMessage) bool { return clientSessionCap(params, "notices") }

// clientSessionCap reports whether initialize's params declare the
// capability clientCapabilities.session.<name> as an object: the session
// capabilities the SDK's ClientCapabilities does not decode.
func clientSessionCap(params json.RawMessage, name string) bool {
	var p struct {
		Caps struct {
			Session map[string]json.RawMessage `json:"session"`
		} `json:"clientCapabilities"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(string(p.Caps.Session[name])), "{")
}

// mcpReports turns MCP servers that fail into notices, for a client that
// takes them: a server that did not start (or needs a sign-in) is said
// once each time it gets there, during a prompt (a notice before the
// answer to session/new could name a session the client does not know
// yet). Without notices the failure goes to stderr, as the host reports
// it, and the server's tools are absent. Guarded by the session's mu.
type mcpReports struct {
	enabled bool
	// last is each server's state as last seen.
	last map[string]api.MCPState
	// pending are the notices not sent yet.
	pending []noticeUpdate
}

// see records a server's new state; a failure becomes a pending notice.
func (r *mcpReports) see(s api.MCPServer) {
	if !r.enabled {
		return
	}
	if r.last == nil {
		r.last = map[string]api.MCPState{}
	}
	if r.last[s.Name] == s.State {
		return
	}
	r.last[s.Name] = s.State
	var title string
	switch s.State {
	case api.MCPFailed:
		title = fmt.Sprintf("MCP server %q did not start", s.Name)
	case api.MCPNeedsAuth:
		title = fmt.Sprintf("MCP server %q needs a sign-in", s.Name)
	default:
		return
	}
	r.pending = append(r.pending, noticeUpdate{SessionUpdate: "notice", Severity: "warning", Title: title, Description: s.Error})
}

// mcpState follows a server's state; s.mu is held by the caller.
func (s *session) mcpState(st api.MCPServerState) {
	s.mcp.see(st.Server)
	if s.sending() {
		s.flushNotices()
	}
}

// flushNotices sends the pending notices; s.mu is held.
func (s *session) flushNotices() {
	for _, n := range s.mcp.pending {
		err := s.w.notify("session/update", sessionNotification{SessionID: sdk.SessionId(s.id), Update: n})
		if err != nil {
			s.report(fmt.Errorf("acp: session/update: %w", err))
		}
	}
	s.mcp.pending = nil
}
