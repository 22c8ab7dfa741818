package main

import (
	"github.com/gopi-dev/gopi/core/host"
	"github.com/gopi-dev/gopi/core/mcp"
	"slices"
)

// mcpServers are the MCP servers for a session in cwd: the user's
// <agentDir>/mcp.json and, in a trusted project, .pi/mcp.json over it
// (mcp.Load). Each problem is a warning; the servers it spares still
// connect.
func (ap *app) mcpServers(cwd string, trusted bool) mcp.Config {
	cfg, errs := mcp.Load(ap.agentDir, cwd, trusted)
	for _, err := range errs {
		ap.warn(err)
	}
	return cfg
}

// autoEnableCodemode activates the codemode tool, as pi's MCP extension
// does, when an enabled server of mcp.json exposes tools to codemode
// (pi's default exposure) and autoEnableCodemode is not false; the tool
// selection must let codemode exist.
func autoEnableCodemode(o *host.CodemodeOptions, cfg mcp.Config) {
	if o == nil || o.Active || cfg.AutoEnableCodemode != nil && !*cfg.AutoEnableCodemode {
		return
	}
	o.Active = slices.ContainsFunc(cfg.Servers, func(e mcp.Entry) bool {
		return e.Server.IsEnabled() && e.Server.MayExpose(mcp.ExposureCodemode)
	})
}
