package mcpstate

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/core/tools"
)

// ToolSearchName is the tool that loads deferred MCP tools (pi's name).
const ToolSearchName = "tool_search"

// toolSearchLimit is how many tools one search loads unless told.
const toolSearchLimit = 5

//go:embed prompts/tool_search.md
var toolSearchDescription string

// toolSearchDetails are a tool_search result's details. Loaded names the
// tools it declared: the host reads them back from the transcript before
// each model request, so that the tools stay declared on that branch
// (after a resume, a fork or a move in the tree too).
type toolSearchDetails struct {
	Query  string   `json:"query"`
	Loaded []string `json:"loadedTools"`
}

// exposedTool is an MCP tool as the tool selection and tool_search see
// it: a server's tool or a resource tool, with its exposure.
type exposedTool interface {
	agent.Tool
	Exposure() mcp.Exposure
}

// searchable reports whether an MCP tool is reached through tool_search:
// exposure deferred, or codemode (scripts call those too), or direct but
// left undeclared by a --tools allowlist that names tool_search (pi's
// rule: only tool_search, if listed, loads such a tool). Hidden tools
// are never reachable, nor tools the selection removes.
func searchable(t exposedTool, sel tools.Selection) bool {
	name := t.Spec().Name
	if !sel.MCPAllowed(name) {
		return false
	}
	switch t.Exposure() {
	case mcp.ExposureDeferred, mcp.ExposureCodemode:
		return true
	case mcp.ExposureDirect:
		return !sel.MCPDeclared(name) && sel.Allowed(ToolSearchName)
	}
	return false
}

// Searchable are the tools tool_search can load: the connected servers'
// tools and the resource tools that are reached through it. The model may
// call them once a search loaded them, though they are not among the
// run's tools.
func (s *State) Searchable() []agent.Tool {
	var out []agent.Tool
	sel := s.cfg.Selection
	for _, t := range s.mgr.Tools() {
		if searchable(t, sel) {
			out = append(out, t)
		}
	}
	for _, t := range s.resourceTools() {
		if searchable(t, sel) {
			out = append(out, t)
		}
	}
	return out
}

// toolSearchWanted reports whether tool_search is declared: some
// connected server has tools it can load, and --exclude-tools leaves it.
// While codemode is active, tools with codemode exposure do not count:
// scripts reach them (pi activates tool_search for deferred ones only).
func (s *State) toolSearchWanted() bool {
	if ex := s.cfg.Selection.Exclude; ex != nil && ex(ToolSearchName) {
		return false
	}
	return slices.ContainsFunc(s.Searchable(), s.forToolSearch)
}

// forToolSearch reports whether tool_search is there for a searchable
// tool: always, unless codemode is active and the tool's exposure is
// codemode.
func (s *State) forToolSearch(t agent.Tool) bool {
	if !s.cfg.Codemode {
		return true
	}
	et, ok := t.(exposedTool)
	return !ok || et.Exposure() != mcp.ExposureCodemode
}

// ServerLines are the servers the system prompt's mcp_servers section
// lists: those with tools that tool_search loads (connected), or that may
// have some (still connecting, by their configuration), each with its
// summary. None when tool_search is excluded.
func (s *State) ServerLines() []resources.MCPServerLine {
	if s.mgr.Empty() {
		return nil
	}
	if ex := s.cfg.Selection.Exclude; ex != nil && ex(ToolSearchName) {
		return nil
	}
	has := map[string]bool{}
	for _, t := range s.Searchable() {
		if !s.forToolSearch(t) {
			continue
		}
		for _, server := range toolServers(t) {
			has[server] = true
		}
	}
	config := map[string]mcp.Server{}
	for _, e := range s.entries() {
		config[e.Name] = e.Server
	}
	var out []resources.MCPServerLine
	for _, st := range s.mgr.Statuses() {
		listed := has[st.Name]
		if st.State == mcp.StateConnecting {
			listed = config[st.Name].MayExpose(mcp.ExposureDeferred) ||
				!s.cfg.Codemode && config[st.Name].MayExpose(mcp.ExposureCodemode)
		}
		if listed {
			out = append(out, resources.MCPServerLine{Name: st.Name, Summary: st.Summary})
		}
	}
	return out
}

// RequestTools is the agent's RequestTools: the run's tools, and the MCP
// tools the transcript msgs loaded.
func (s *State) RequestTools(ctx context.Context, msgs []llm.Message, tools []agent.Tool) []agent.Tool {
	loaded := loadedTools(msgs)
	if len(loaded) == 0 {
		return tools
	}
	found := pickLoaded(s.Searchable(), loaded)
	if len(found) < len(loaded) {
		// A server whose tools the branch loaded may still be
		// connecting (a resumed session's first prompt does not wait
		// for it): wait for the servers as tool_search does.
		s.waitAll(ctx)
		found = pickLoaded(s.Searchable(), loaded)
	}
	for _, t := range found {
		name := t.Spec().Name
		if slices.ContainsFunc(tools, func(o agent.Tool) bool { return o.Spec().Name == name }) {
			continue
		}
		tools = append(tools, t)
	}
	return tools
}

// Loaded are the searchable tools the transcript msgs loaded: the host
// records them with the run's tools, so that a compaction that summarizes
// the searches keeps them.
func (s *State) Loaded(msgs []llm.Message) []agent.Tool {
	if s.mgr.Empty() {
		return nil
	}
	loaded := loadedTools(msgs)
	if len(loaded) == 0 {
		return nil
	}
	return pickLoaded(s.Searchable(), loaded)
}

// pickLoaded are the tools of searchable that loaded names.
func pickLoaded(searchable []agent.Tool, loaded map[string]bool) []agent.Tool {
	var out []agent.Tool
	for _, t := range searchable {
		if loaded[t.Spec().Name] {
			out = append(out, t)
		}
	}
	return out
}

// loadedTools are the tools that tool_search results in msgs loaded, and
// the MCP tools their system messages declare: the record of earlier
// loads, which a compaction's checkpoint keeps after the results are
// summarized (and which pi's sessions carry too).
func loadedTools(msgs []llm.Message) map[string]bool {
	var out map[string]bool
	add := func(n string) {
		if out == nil {
			out = map[string]bool{}
		}
		out[n] = true
	}
	if st, ok := llm.ReplaySystem(msgs); ok {
		for _, t := range st.Tools {
			if isMCPToolName(t.Name) {
				add(t.Name)
			}
		}
	}
	for _, m := range msgs {
		tr, ok := m.(*llm.ToolResultMessage)
		if !ok || tr.ToolName != ToolSearchName || tr.IsError {
			continue
		}
		var d toolSearchDetails
		if json.Unmarshal(tr.Details, &d) != nil {
			continue
		}
		for _, n := range d.Loaded {
			add(n)
		}
	}
	return out
}

// isMCPToolName reports whether a tool of that name comes from MCP: a
// server's tool or a resource tool.
func isMCPToolName(name string) bool {
	return strings.HasPrefix(name, tools.MCPPrefix) || slices.Contains(mcp.ResourceToolNames, name)
}

// toolSearch is the built-in tool_search: it ranks the searchable MCP
// tools against a query and loads the best for the next model request.
type toolSearch struct{ s *State }

var _ agent.Tool = toolSearch{}

func (toolSearch) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        ToolSearchName,
		Description: strings.TrimSpace(toolSearchDescription),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"The capability you need, or a tool's name"},` +
			`"limit":{"type":"integer","minimum":1,"description":"How many tools to load at most (default 5)"}},` +
			`"required":["query"],"additionalProperties":false}`),
	}
}

// ReadOnly: a search changes nothing (no approval under "writes").
func (toolSearch) ReadOnly() bool { return true }

func (t toolSearch) Run(ctx context.Context, call agent.Call, _ func(agent.Result)) (agent.Result, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(call.Args, &in); err != nil {
		return agent.Result{}, fmt.Errorf("tool_search: reading its arguments: %w", err)
	}
	if in.Limit <= 0 {
		in.Limit = toolSearchLimit
	}
	// Like pi, a search waits for every server, bounded as a prompt's
	// wait for direct servers is.
	t.s.waitAll(ctx)
	summaries := map[string]string{}
	for _, st := range t.s.mgr.Statuses() {
		summaries[st.Name] = st.Summary
	}
	found := rankTools(in.Query, t.s.Searchable(), summaries)
	if len(found) > in.Limit {
		found = found[:in.Limit]
	}
	d := toolSearchDetails{Query: in.Query, Loaded: []string{}}
	var b strings.Builder
	if len(found) == 0 {
		fmt.Fprintf(&b, "No tool matches %q. Try other words, or a server's name.", in.Query)
	} else {
		fmt.Fprintf(&b, "Loaded %d tool(s); call them directly from your next step:\n", len(found))
	}
	for _, f := range found {
		spec := f.Spec()
		d.Loaded = append(d.Loaded, spec.Name)
		line, _, _ := strings.Cut(strings.TrimSpace(spec.Description), "\n")
		if line == "" {
			fmt.Fprintf(&b, "- %s\n", spec.Name)
		} else {
			fmt.Fprintf(&b, "- %s: %s\n", spec.Name, line)
		}
	}
	return agent.Result{Content: llm.Contents{llm.TextContent{Text: strings.TrimRight(b.String(), "\n")}}, Details: d}, nil
}

// toolServers are the servers whose capabilities a tool_search tool
// offers: an MCP tool's server, or the servers a resource tool reaches.
func toolServers(t agent.Tool) []string {
	switch t := t.(type) {
	case *mcp.Tool:
		return []string{t.Server()}
	case resourceTool:
		return t.Servers()
	}
	return nil
}

// remoteName is an MCP tool's name on its server; a resource tool's is
// its own.
func remoteName(t agent.Tool) string {
	if t, ok := t.(*mcp.Tool); ok {
		return t.RemoteName()
	}
	return t.Spec().Name
}

// rankTools orders the tools that match some word of query, best first:
// a word in the tool's name counts most, then in its description, then
// in its servers' names or summaries; the whole query as the tool's name
// (or its server name) wins outright. Ties keep the servers' order.
func rankTools(query string, tools []agent.Tool, summaries map[string]string) []agent.Tool {
	q := strings.ToLower(strings.TrimSpace(query))
	words := strings.FieldsFunc(q, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	type scored struct {
		t     agent.Tool
		score int
	}
	var out []scored
	for _, t := range tools {
		name := strings.ToLower(t.Spec().Name)
		remote := strings.ToLower(remoteName(t))
		desc := strings.ToLower(t.Spec().Description)
		var servers []string
		for _, s := range toolServers(t) {
			servers = append(servers, s, summaries[s])
		}
		server := strings.ToLower(strings.Join(servers, " "))
		score := 0
		if q != "" && (q == name || q == remote) {
			score += 100
		}
		for _, w := range words {
			switch {
			case strings.Contains(remote, w):
				score += 5
			case strings.Contains(desc, w):
				score += 3
			case strings.Contains(server, w):
				score++
			}
		}
		if score > 0 {
			out = append(out, scored{t, score})
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	ts := make([]agent.Tool, len(out))
	for i, s := range out {
		ts[i] = s.t
	}
	return ts
}
