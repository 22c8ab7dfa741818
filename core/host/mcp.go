package host

import (
	"context"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
)

// mcpState is the session's MCP room (core/host/mcpstate), given what it
// uses: the servers and settings, a way to the client, and the host's
// tool set's apply for a server whose tools changed.
func (h *Host) mcpState() *mcpstate.State {
	return mcpstate.New(h.ctx, mcpstate.Config{
		Servers:    h.opts.MCPServers,
		Off:        h.opts.NoMCP,
		Cwd:        h.opts.Cwd,
		AgentDir:   h.opts.AgentDir,
		Version:    h.opts.Version,
		Selection:  h.opts.ToolSelection,
		Codemode:   h.opts.Codemode != nil && h.opts.Codemode.Active,
		Extensions: h.ext.manager(),
		Report:     h.opts.Report,
		Emit:       h.emit,
		ExtError:   h.ext.reportError,
		Changed:    func() { h.toolset.apply() },
	})
}

// GetMCPServers lists the session's MCP servers, in mcp.json's order and
// then those extensions registered (scope "extension", the extension as
// their source), with where each connection stands and its tools: gopi's
// own command, for the editors (pi shows the same in its /mcp view). It
// answers at once; a server still starting is "connecting".
func (h *Host) GetMCPServers(context.Context) (api.MCPServersResult, error) {
	return api.MCPServersResult{Servers: h.mcp.Servers()}, nil
}

// mcpCommand runs text when it is the built-in /mcp command (mcpstate's
// RunCommand, with the client's dialogs), unless an extension registered
// a command of that name (which then ran instead, as in pi), and reports
// whether it was. It returns once the command is done; the session's end
// ends its dialogs.
func (h *Host) mcpCommand(text string) bool {
	if !h.mcp.HandlesCommand(text) || h.ext.manager().HasCommand(mcpstate.CommandName) {
		return false
	}
	var ui mcpstate.UI
	if c := h.uiClient(); c != nil {
		ui = c
	}
	h.mcp.RunCommand(h.ctx, text, ui)
	return true
}
