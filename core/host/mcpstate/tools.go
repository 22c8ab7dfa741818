package mcpstate

import (
	"context"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/mcp"
)

// readOnly is a tool that says whether it changes anything: an MCP
// tool's readOnlyHint (the approval gate's gate.ReadOnly). Under approval
// "writes" such a tool is asked about unless it is read-only.
type readOnly interface {
	ReadOnly() bool
}

var (
	_ readOnly = (*mcp.Tool)(nil)
	_ readOnly = resourceTool{}
	_ readOnly = toolSearch{}
)

// Reserve gives the names of the tools that are not MCP's (built-ins,
// extensions' tools) and tool_search's: no MCP tool is named so; one
// whose name would be gets a hash suffix, so that a name means one tool
// to the model, tool_search, get_mcp_servers and getAllTools. It reports
// whether the names changed, and with them, perhaps, some tools' names:
// then the client should hear of the servers again ([State.Announce]).
func (s *State) Reserve(names []string) (renamed bool) {
	return s.mgr.Reserve(append([]string{ToolSearchName}, names...))
}

// Declared are the MCP tools declared to the model: the connected
// servers' tools and the resource tools with direct exposure that the
// tool selection declares (a --tools allowlist must name or match them;
// it removes the others only once one of its entries starts with mcp__,
// as in pi), then tool_search when some server has tools it loads and
// --exclude-tools leaves it.
func (s *State) Declared() []agent.Tool {
	var out []agent.Tool
	sel := s.cfg.Selection
	for _, t := range s.mgr.Tools() {
		if t.Exposure() == mcp.ExposureDirect && sel.MCPDeclared(t.Spec().Name) {
			out = append(out, t)
		}
	}
	for _, t := range s.resourceTools() {
		if t.Exposure() == mcp.ExposureDirect && sel.MCPDeclared(t.Spec().Name) {
			out = append(out, t)
		}
	}
	if s.toolSearchWanted() {
		out = append(out, toolSearch{s})
	}
	return out
}

// resourceTool is a resource tool (list_mcp_resources,
// list_mcp_resource_templates, read_mcp_resource) as the model calls it:
// it reaches every server with resources, so it first waits for the
// servers still connecting, bounded as tool_search's wait is (pi waits for
// them too). It only reads: the approval gate does not ask about it under
// "writes".
type resourceTool struct {
	s *State
	*mcp.ResourceTool
}

func (t resourceTool) Run(ctx context.Context, call agent.Call, update func(agent.Result)) (agent.Result, error) {
	t.s.waitAll(ctx)
	return t.ResourceTool.Run(ctx, call, update)
}

// resourceTools are the resource tools the tool selection leaves (they
// count as MCP tools for it, as in pi), while some server offers
// resources; their exposure is the widest of those servers'.
func (s *State) resourceTools() []resourceTool {
	var out []resourceTool
	for _, t := range s.mgr.ResourceTools() {
		if s.cfg.Selection.MCPAllowed(t.Spec().Name) {
			out = append(out, resourceTool{s: s, ResourceTool: t})
		}
	}
	return out
}

// IsMCPTool reports whether t comes from MCP: a server's tool or a
// resource tool. MCP tools are declared to the model, not described in
// the system prompt.
func IsMCPTool(t agent.Tool) bool {
	switch t.(type) {
	case *mcp.Tool, resourceTool:
		return true
	}
	return false
}

// IsToolSearch reports whether t is the state's tool_search.
func IsToolSearch(t agent.Tool) bool {
	_, ok := t.(toolSearch)
	return ok
}

// ToolInfos are pi.getAllTools()'s entries of the MCP tools, as pi 1.6.0
// gives them: every MCP tool gopi has, whatever its exposure (the tool
// selection keeps), unless taken holds its name (a tool that is not
// MCP's), with its server (namespace) and the server's hints
// (annotations); then the resource tools, as pi's MCP extension registers
// them: read-only. source is the sourceInfo of pi's built-in MCP
// extension.
func (s *State) ToolInfos(taken map[string]bool, source api.SourceInfo) []ext.ToolInfo {
	var infos []ext.ToolInfo
	sel := s.cfg.Selection
	for _, t := range s.mgr.Tools() {
		spec := t.Spec()
		if taken[spec.Name] || !sel.MCPAllowed(spec.Name) {
			continue
		}
		info := ext.ToolInfo{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters,
			Exposure: string(reported(t.Exposure())), Namespace: t.Namespace(), SourceInfo: source}
		if a := t.Annotations(); a != (mcp.Annotations{}) {
			info.Annotations = a
		}
		infos = append(infos, info)
	}
	for _, t := range s.resourceTools() {
		spec := t.Spec()
		if taken[spec.Name] {
			continue
		}
		infos = append(infos, ext.ToolInfo{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters,
			Exposure: string(reported(t.Exposure())), SourceInfo: source, Annotations: mcp.Annotations{ReadOnlyHint: true}})
	}
	return infos
}

// reported is an exposure as getAllTools reports it: pi registers
// codemode tools as deferred ones; gopi reaches them through tool_search
// alike.
func reported(e mcp.Exposure) mcp.Exposure {
	if e == mcp.ExposureCodemode {
		return mcp.ExposureDeferred
	}
	return e
}
