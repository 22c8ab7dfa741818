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
	"sync"

	"github.com/gopi-dev/gopi/core/codemode"
	"github.com/gopi-dev/gopi/core/tools"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/resources"
)

// toolSet is the session's tool set: every tool that exists (the
// built-ins, extension tools replacing those of the same name, the other
// extension tools, then the MCP servers' direct tools), the active ones,
// and how the extension tools describe themselves in the system prompt.
// It is given what it reads and whom it tells; it never sees the Host.
type toolSet struct {
	toolSetConfig
	// passes keeps apply from running twice at once.
	passes passes

	mu sync.Mutex // guards the fields below
	// all is every tool; nil until the extensions' tools are known.
	all []agent.Tool
	// active names the tools the model sees; nil means all of them.
	active []string
	// lines and guidelines describe the extension tools in the system
	// prompt.
	lines      map[string]resources.ToolLine
	guidelines map[string][]string
	// seen are the extension and MCP tools made active once already: one
	// that setActiveTools turned off stays off when others register.
	seen map[string]bool
}

// toolSetConfig is what the tool set is given.
type toolSetConfig struct {
	// builtins are every built-in tool; enabled the ones active at start.
	builtins, enabled []agent.Tool
	// selection is --tools/--exclude-tools for the extensions' tools.
	selection tools.Selection
	// exts runs the extensions' tools; state is what they mirror.
	exts  *ext.Manager
	state func() *ext.State
	mcp   *mcpstate.State
	// setTools gives the agent the active tools; changed follows every
	// change of the active set (the system prompt is rebuilt).
	setTools func([]agent.Tool)
	changed  func()
}

func newToolSet(c toolSetConfig) *toolSet {
	if c.builtins == nil {
		c.builtins = c.enabled
	}
	return &toolSet{toolSetConfig: c}
}

// activeNames are the names of the active tools; t.mu is held.
func (t *toolSet) activeNames() []string {
	if t.active != nil {
		return slices.Clone(t.active)
	}
	names := make([]string, len(t.all))
	for i, tool := range t.all {
		names[i] = tool.Spec().Name
	}
	return names
}

// snapshot is every tool and the active names, as extensions mirror them.
func (t *toolSet) snapshot() (all []agent.Tool, active []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.all, t.activeNames()
}

// apply puts the extensions' tools beside the built-in ones (an
// extension tool named like a built-in replaces it, as in pi), then the
// MCP servers' direct tools, and rebuilds the system prompt; the MCP
// servers extensions registered join the manager, or leave it, first.
// The MCP state calls it too (mcpstate.Config.Changed), whenever a
// server's tools change.
func (t *toolSet) apply() { t.passes.run(t.applyOnce) }

// applyOnce is one pass of apply.
func (t *toolSet) applyOnce() {
	regs := t.exts.Registrations()
	t.mcp.SyncRegistered(regs.MCPServers)
	// A tool --tools or --exclude-tools leaves out is not registered at
	// all, an extension's included (as in pi).
	regTools := slices.DeleteFunc(slices.Clone(regs.Tools), func(d ext.ToolDef) bool { return !t.selection.Allowed(d.Name) })
	byName := map[string]ext.ToolDef{}
	for _, d := range regTools {
		byName[d.Name] = d
	}
	var all []agent.Tool
	lines := map[string]resources.ToolLine{}
	guidelines := map[string][]string{}
	// No MCP tool takes the name of a built-in or an extension's tool
	// (one that would gets pi's hash suffix), so that a name means one
	// tool to the model, tool_search, get_mcp_servers and getAllTools.
	// Every extension tool counts, whatever the tool selection: a tool's
	// name does not depend on the flags of a run.
	var reserved []string
	for _, b := range t.builtins {
		reserved = append(reserved, b.Spec().Name)
	}
	for _, d := range regs.Tools {
		reserved = append(reserved, d.Name)
	}
	renamed := t.mcp.Reserve(reserved)
	for _, b := range t.builtins {
		if d, ok := byName[b.Spec().Name]; ok {
			all = append(all, extTool{m: t.exts, state: t.state, def: d})
			delete(byName, d.Name)
			continue
		}
		all = append(all, b)
	}
	for _, d := range regTools {
		if _, ok := byName[d.Name]; ok {
			all = append(all, extTool{m: t.exts, state: t.state, def: d})
		}
	}
	// The MCP servers' direct tools come last, and tool_search when a
	// server has tools to search; a name taken already keeps its tool.
	var mcpTools []agent.Tool
	for _, m := range t.mcp.Declared() {
		name := m.Spec().Name
		if !slices.ContainsFunc(all, func(o agent.Tool) bool { return o.Spec().Name == name }) {
			all = append(all, m)
			mcpTools = append(mcpTools, m)
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
	t.mu.Lock()
	t.all, t.lines, t.guidelines = all, lines, guidelines
	if t.active == nil {
		// The enabled built-ins and every extension tool (none at all
		// after --no-tools: not nil, which would mean all).
		t.active = []string{}
		for _, e := range t.enabled {
			t.active = append(t.active, e.Spec().Name)
		}
	}
	// A tool registered later is active, as in pi (regTools holds only
	// the tools a --tools allowlist names or matches).
	for _, d := range regTools {
		if !slices.Contains(t.active, d.Name) && !t.seen[d.Name] {
			t.active = append(t.active, d.Name)
		}
	}
	// So is an MCP tool that appears (its server connected, or its list
	// changed).
	for _, m := range mcpTools {
		if name := m.Spec().Name; !slices.Contains(t.active, name) && !t.seen[name] {
			t.active = append(t.active, name)
		}
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	for _, d := range regTools {
		t.seen[d.Name] = true
	}
	for _, m := range mcpTools {
		t.seen[m.Spec().Name] = true
	}
	t.mu.Unlock()
	t.applyActive()
	// Extensions read their copy of the tools (getAllTools,
	// getActiveTools): it changes now, not at their next call, so that a
	// command waiting for an MCP server's tools sees them come.
	if t.exts.Ready() {
		t.exts.Sync(t.state())
	}
	if renamed {
		// Clients hear of the servers whose tools it renamed.
		t.mcp.Announce()
	}
}

// setActive is pi.setActiveTools: the tools known by these names become
// the active ones (unknown names are ignored).
func (t *toolSet) setActive(names []string) {
	t.mu.Lock()
	keep := []string{}
	for _, tool := range t.all {
		if slices.Contains(names, tool.Spec().Name) {
			keep = append(keep, tool.Spec().Name)
		}
	}
	t.active = keep
	t.mu.Unlock()
	t.applyActive()
}

// applyActive gives the agent the active tools and rebuilds the system
// prompt's tool list.
func (t *toolSet) applyActive() {
	t.mu.Lock()
	if t.all == nil {
		// The extensions' tools are not known (yet): the built-ins stay.
		t.mu.Unlock()
		t.changed()
		return
	}
	var ts []agent.Tool
	active := t.activeNames()
	for _, tool := range t.all {
		if slices.Contains(active, tool.Spec().Name) {
			ts = append(ts, tool)
		}
	}
	t.mu.Unlock()
	t.setTools(ts)
	t.changed()
}

// promptTools are the active tools as the system prompt describes them:
// a line each, and each one's guidelines.
func (t *toolSet) promptTools() ([]resources.ToolLine, map[string][]string) {
	guides := map[string][]string{}
	prompter := func(tool agent.Tool) resources.ToolLine {
		line := resources.ToolLine{Name: tool.Spec().Name}
		if p, ok := tool.(tools.Prompter); ok {
			line.Summary = p.PromptSnippet()
			if g := p.PromptGuidelines(); len(g) > 0 {
				guides[line.Name] = g
			}
		}
		return line
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exts.Empty() || t.all == nil {
		var lines []resources.ToolLine
		for _, e := range t.enabled {
			lines = append(lines, prompter(e))
		}
		return lines, guides
	}
	active := t.activeNames()
	var lines []resources.ToolLine
	for _, tool := range t.all {
		name := tool.Spec().Name
		if mcpstate.IsMCPTool(tool) || !slices.Contains(active, name) {
			// MCP tools are declared, not described in the prompt.
			continue
		}
		if l, ok := t.lines[name]; ok {
			lines = append(lines, l)
			if g := t.guidelines[name]; len(g) > 0 {
				guides[name] = g
			}
			continue
		}
		lines = append(lines, prompter(tool))
	}
	return lines, guides
}

// allToolInfos are pi.getAllTools()'s answer, as pi 1.6.0 gives it: the
// tools of all (the built-ins and extension tools that exist), then every
// MCP tool gopi has, whatever its exposure (the tool selection keeps),
// unless a tool of all has its name. A tool says where it comes from
// (sourceInfo) and how the model reaches it (exposure); an MCP tool also
// its server (namespace) and the server's hints (annotations).
func (t *toolSet) allToolInfos(all []agent.Tool) []ext.ToolInfo {
	infos := make([]ext.ToolInfo, 0, len(all))
	taken := map[string]bool{}
	for _, tool := range all {
		if mcpstate.IsMCPTool(tool) {
			continue // below, with the others
		}
		s := tool.Spec()
		taken[s.Name] = true
		info := ext.ToolInfo{Name: s.Name, Description: s.Description, Parameters: s.Parameters,
			Exposure: "direct", SourceInfo: builtinSource(s.Name)}
		if et, ok := tool.(extTool); ok {
			info.SourceInfo = et.def.SourceInfo
		} else if mcpstate.IsToolSearch(tool) {
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
	return append(infos, t.mcp.ToolInfos(taken, builtinSource("mcp"))...)
}

// builtinSource is pi 1.5's sourceInfo of a tool it ships, as
// pi.getAllTools() reports it: the path is builtin:<name> (builtin:mcp for
// every MCP tool, of pi's built-in MCP extension).
func builtinSource(name string) api.SourceInfo {
	return api.SourceInfo{Path: "builtin:" + name, Source: "builtin", Scope: "temporary", Origin: "top-level"}
}

// extTool is an extension's tool as the agent runs it.
type extTool struct {
	m     *ext.Manager
	state func() *ext.State // what extensions mirror, sent with the call
	def   ext.ToolDef
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
	out, err := t.m.ExecuteTool(ctx, t.def.Name, call.ID, call.Args, func(partial json.RawMessage) {
		if r, err := toolOutput(partial); err == nil {
			update(r)
		}
	}, t.state())
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

// outputOf is toolOutput's inverse: a result as pi's tool result
// ({content, details, structuredContent, isError, terminate}), for an
// extension's tool that called another (ctx.executeTool()).
func outputOf(res agent.Result) (ext.ToolOutput, error) {
	content := res.Content
	if content == nil {
		content = llm.Contents{}
	}
	out := ext.ToolOutput{IsError: res.IsError, Terminate: res.Terminate}
	var err error
	if out.Content, err = ext.Marshal(content); err != nil {
		return ext.ToolOutput{}, fmt.Errorf("the result's content: %w", err)
	}
	if res.Details != nil {
		if out.Details, err = ext.Marshal(res.Details); err != nil {
			return ext.ToolOutput{}, fmt.Errorf("the result's details: %w", err)
		}
	}
	if res.StructuredContent != nil {
		if out.StructuredContent, err = ext.Marshal(res.StructuredContent); err != nil {
			return ext.ToolOutput{}, fmt.Errorf("the result's structured content: %w", err)
		}
	}
	return out, nil
}
