package main

import (
	"github.com/gopi-dev/gopi/core/mcp"
)

// mcpServers are the MCP servers for a session in cwd: the user's
// <agentDir>/mcp.json and, in a trusted project, .pi/mcp.json over it
// (mcp.Load). Each problem is a warning; the servers it spares still
// connect.
func (ap *app) mcpServers(cwd string, trusted bool) []mcp.Entry {
	cfg, errs := mcp.Load(ap.agentDir, cwd, trusted)
	for _, err := range errs {
		ap.warn(err)
	}
	return cfg.Servers
}
