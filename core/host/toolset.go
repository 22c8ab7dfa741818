package host

// This file owns the tool set: built-in, extension and MCP tools merged into
// what the model gets, the active tools, the tool list extensions see, and
// extension tools run as agent tools.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/codemode"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/resources"
)

// activeToolNames: h.ext.mu is held.
func (h *Host) activeToolNames() []string {
	if h.ext.active != nil {
		return slices.Clone(h.ext.active)
	}
	names := make([]string, len(h.ext.all))
	for i, t := range h.ext.all {
		names[i] = t.Spec().Name
	}
	return names
}

// applyExtensionTools puts the extensions' tools beside the built-in ones
// (an extension tool named like a built-in replaces it, as in pi), then
// the MCP servers' direct tools, and rebuilds the system prompt; the MCP
// servers extensions registered join the manager, or leave it, first.
// The MCP state calls it too (mcpstate.Config.Changed), whenever a
// server's tools change.
func (h *Host) applyExtensionTools() { h.toolPasses.run(h.applyTools) }

// applyTools is one pass of applyExtensionTools.
func (h *Host) applyTools() {
	regs := h.exts().Registrations()
	h.mcp.SyncRegistered(regs.MCPServers)
	sel := h.opts.ToolSelection
	// A tool --tools or --exclude-tools leaves out is not registered at
	// all, an extension's included (as in pi).
	regTools := slices.DeleteFunc(slices.Clone(regs.Tools), func(d ext.ToolDef) bool { return !sel.Allowed(d.Name) })
	byName := map[string]ext.ToolDef{}
	for _, d := range regTools {
		byName[d.Name] = d
	}
	var all []agent.Tool
	lines := map[string]resources.ToolLine{}
	guidelines := map[string][]string{}
	builtins := h.opts.AllTools
	if builtins == nil {
		builtins = h.opts.Tools
	}
	// No MCP tool takes the name of a built-in or an extension's tool
	// (one that would gets pi's hash suffix), so that a name means one
	// tool to the model, tool_search, get_mcp_servers and getAllTools.
	// Every extension tool counts, whatever the tool selection: a tool's
	// name does not depend on the flags of a run.
	var reserved []string
	for _, t := range builtins {
		reserved = append(reserved, t.Spec().Name)
	}
	for _, d := range regs.Tools {
		reserved = append(reserved, d.Name)
	}
	renamed := h.mcp.Reserve(reserved)
	for _, t := range builtins {
		if d, ok := byName[t.Spec().Name]; ok {
			all = append(all, extTool{h: h, def: d})
			delete(byName, d.Name)
			continue
		}
		all = append(all, t)
	}
	for _, d := range regTools {
		if _, ok := byName[d.Name]; ok {
			all = append(all, extTool{h: h, def: d})
		}
	}
	// The MCP servers' direct tools come last, and tool_search when a
	// server has tools to search; a name taken already keeps its tool.
	var mcpTools []agent.Tool
	for _, t := range h.mcp.Declared() {
		name := t.Spec().Name
		if !slices.ContainsFunc(all, func(o agent.Tool) bool { return o.Spec().Name == name }) {
			all = append(all, t)
			mcpTools = append(mcpTools, t)
		}
	}
	for _, d := range regTools {
		summary := d.PromptSnippet
		if summary == "" {
			summary, _, _ = strings.Cut(d.Description, "\n")
		}
		lines[d.Name] = resources.ToolLine{Name: d.Name, Summary: summary}
		guidelines[d.Name] = d.PromptGuidelines
	}
	h.ext.mu.Lock()
	h.ext.all, h.ext.lines, h.ext.guidelines = all, lines, guidelines
	if h.ext.active == nil {
		// The enabled built-ins and every extension tool (none at all
		// after --no-tools: not nil, which would mean all).
		h.ext.active = []string{}
		for _, t := range h.opts.Tools {
			h.ext.active = append(h.ext.active, t.Spec().Name)
		}
	}
	// A tool registered later is active, as in pi (regTools holds only
	// the tools a --tools allowlist names or matches).
	for _, d := range regTools {
		if !slices.Contains(h.ext.active, d.Name) && !h.ext.seen[d.Name] {
			h.ext.active = append(h.ext.active, d.Name)
		}
	}
	// So is an MCP tool that appears (its server connected, or its list
	// changed).
	for _, t := range mcpTools {
		if name := t.Spec().Name; !slices.Contains(h.ext.active, name) && !h.ext.seen[name] {
			h.ext.active = append(h.ext.active, name)
		}
	}
	if h.ext.seen == nil {
		h.ext.seen = map[string]bool{}
	}
	for _, d := range regTools {
		h.ext.seen[d.Name] = true
	}
	for _, t := range mcpTools {
		h.ext.seen[t.Spec().Name] = true
	}
	h.ext.mu.Unlock()
	h.applyActiveTools()
	// Extensions read their copy of the tools (getAllTools,
	// getActiveTools): it changes now, not at their next call, so that a
	// command waiting for an MCP server's tools sees them come.
	if m := h.exts(); m.Ready() {
		m.Sync(h.extSnapshot())
	}
	if renamed {
		// Clients hear of the servers whose tools it renamed.
		h.mcp.Announce()
	}
}

// setActiveTools is pi.setActiveTools: the tools known by these names
// become the active ones (unknown names are ignored).
func (h *Host) setActiveTools(names []string) {
	h.ext.mu.Lock()
	keep := []string{}
	for _, t := range h.ext.all {
		if slices.Contains(names, t.Spec().Name) {
			keep = append(keep, t.Spec().Name)
		}
	}
	h.ext.active = keep
	h.ext.mu.Unlock()
	h.applyActiveTools()
}

// applyActiveTools gives the agent the active tools and rebuilds the
// system prompt's tool list.
func (h *Host) applyActiveTools() {
	h.ext.mu.Lock()
	if h.ext.all == nil {
		// The extensions' tools are not known (yet): the built-ins stay.
		h.ext.mu.Unlock()
		h.refreshSystemPrompt()
		return
	}
	var ts []agent.Tool
	active := h.activeToolNames()
	for _, t := range h.ext.all {
		if slices.Contains(active, t.Spec().Name) {
			ts = append(ts, t)
		}
	}
	h.ext.mu.Unlock()
	h.agent.SetTools(ts)
	h.refreshSystemPrompt()
}

// allToolInfos are pi.getAllTools()'s answer, as pi 1.6.0 gives it: the
// tools of all (the built-ins and extension tools that exist), then every
// MCP tool gopi has, whatever its exposure (the tool selection keeps),
// unless a tool of all has its name. A tool says where it comes from
// (sourceInfo) and how the model reaches it (exposure); an MCP tool also
// its server (namespace) and the server's hints (annotations).
func (h *Host) allToolInfos(all []agent.Tool) []ext.ToolInfo {
	infos := make([]ext.ToolInfo, 0, len(all))
	taken := map[string]bool{}
	for _, t := range all {
		if mcpstate.IsMCPTool(t) {
			continue // below, with the others
		}
		s := t.Spec()
		taken[s.Name] = true
		info := ext.ToolInfo{Name: s.Name, Description: s.Description, Parameters: s.Parameters,
			Exposure: "direct", SourceInfo: builtinSource(s.Name)}
		if et, ok := t.(extTool); ok {
			info.SourceInfo = et.def.SourceInfo
		} else if mcpstate.IsToolSearch(t) {
			// pi's tool_search comes with its built-in extension
			// tool-search, declared but not callable by other tools.
			info.Exposure, info.SourceInfo = "model-only", builtinSource("tool-search")
		} else if s.Name == codemode.Name {
			// So does codemode (builtin:codemode): scripts do not start
			// other scripts.
			info.Exposure = "model-only"
		}
		infos = append(infos, info)
	}
	return append(infos, h.mcp.ToolInfos(taken, builtinSource("mcp"))...)
}

// builtinSource is pi 1.5's sourceInfo of a tool it ships, as
// pi.getAllTools() reports it: the path is builtin:<name> (builtin:mcp for
// every MCP tool, of pi's built-in MCP extension).
func builtinSource(name string) api.SourceInfo {
	return api.SourceInfo{Path: "builtin:" + name, Source: "builtin", Scope: "temporary", Origin: "top-level"}
}

// extTool is an extension's tool as the agent runs it.
type extTool struct {
	h   *Host
	def ext.ToolDef
}

func (t extTool) Spec() llm.ToolSpec {
	params := t.def.Parameters
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return llm.ToolSpec{Name: t.def.Name, Description: t.def.Description, Parameters: params}
}

// Sequential keeps a tool pi runs one at a time from running beside
// others.
func (t extTool) Sequential() bool { return t.def.ExecutionMode == "sequential" }

func (t extTool) Run(ctx context.Context, call agent.Call, update func(agent.Result)) (agent.Result, error) {
	out, err := t.h.exts().ExecuteTool(ctx, t.def.Name, call.ID, call.Args, func(partial json.RawMessage) {
		if r, err := toolOutput(partial); err == nil {
			update(r)
		}
	}, t.h.extSnapshot())
	if err != nil {
		return agent.Result{}, err
	}
	b, _ := json.Marshal(out)
	return toolOutput(b)
}

// toolOutput reads a pi tool result ({content, details,
// structuredContent, isError, terminate}).
func toolOutput(raw json.RawMessage) (agent.Result, error) {
	var o struct {
		Content           llm.Contents    `json:"content"`
		Details           json.RawMessage `json:"details"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Terminate         bool            `json:"terminate"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return agent.Result{}, fmt.Errorf("reading the extension tool's result: %w", err)
	}
	r := agent.Result{Content: o.Content, IsError: o.IsError, Terminate: o.Terminate}
	if len(o.Details) > 0 && string(o.Details) != "null" {
		r.Details = o.Details
	}
	if len(o.StructuredContent) > 0 && string(o.StructuredContent) != "null" {
		r.StructuredContent = o.StructuredContent
	}
	return r, nil
}
