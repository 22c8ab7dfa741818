package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/mcp"
)

// GetMCPServers lists the session's MCP servers, in mcp.json's order and
// then those extensions registered (scope "extension", the extension as
// their source), with where each connection stands and its tools: gopi's
// own command, for the editors (pi shows the same in its /mcp view). It
// answers at once; a server still starting is "connecting".
func (h *Host) GetMCPServers(context.Context) (api.MCPServersResult, error) {
	return api.MCPServersResult{Servers: h.mcpServers()}, nil
}

// mcpServers are the servers as get_mcp_servers and mcp_server_state give
// them.
func (h *Host) mcpServers() []api.MCPServer {
	out := []api.MCPServer{}
	statuses := map[string]mcp.Status{}
	for _, st := range h.mcp.Statuses() {
		statuses[st.Name] = st
	}
	tools := map[string][]api.MCPTool{}
	for _, t := range h.mcp.Tools() {
		tools[t.Server()] = append(tools[t.Server()], api.MCPTool{
			Name: t.Spec().Name, RemoteName: t.RemoteName(), Exposure: string(t.Exposure()), ReadOnly: t.ReadOnly(),
		})
	}
	for _, e := range h.mcpEntries() {
		s := api.MCPServer{
			Name: e.Name, Scope: string(e.Scope), Source: e.Source, Override: e.Override,
			Enabled: e.Server.IsEnabled(), Exposure: string(e.Server.ServerExposure()),
			Type: "stdio", Transport: e.Server.Transport(), State: api.MCPDisabled, Tools: tools[e.Name],
		}
		if e.Server.IsHTTP() {
			s.Type = "http"
		}
		if st, ok := statuses[e.Name]; ok {
			s.State, s.Resources = api.MCPState(st.State), st.Resources
			if st.Err != nil && st.State != mcp.StateConnected {
				s.Error = strings.TrimPrefix(st.Err.Error(), fmt.Sprintf("mcp server %q: ", e.Name))
			}
		}
		if s.Tools == nil {
			s.Tools = []api.MCPTool{}
		}
		out = append(out, s)
	}
	return out
}
