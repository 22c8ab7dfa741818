package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/mcp"
)

// mcpWait is the longest a prompt waits for servers with direct tools
// (pi's 10 s).
const mcpWait = 10 * time.Second

// readOnlyTool is a tool that says whether it changes anything: an MCP
// tool's readOnlyHint. Under approval "writes" such a tool is asked about
// unless it is read-only; a tool without the method follows the built-in
// rule (edit, write and bash ask).
type readOnlyTool interface {
	ReadOnly() bool
}

var _ readOnlyTool = (*mcp.Tool)(nil)

// startMCP connects the MCP servers in the background. gopi has no
// codemode: tools with that exposure are reached through tool_search,
// as deferred tools are, which it says once. With extensions there is a
// manager even without servers: they may register some.
func (h *Host) startMCP() {
	if h.opts.NoMCP || len(h.opts.MCPServers) == 0 && h.exts().Empty() {
		return
	}
	h.mcp = mcp.NewManager(mcp.Options{
		Servers:     h.opts.MCPServers,
		Cwd:         h.opts.Cwd,
		Version:     h.opts.Version,
		Auth:        h.mcpAuth(),
		Log:         h.mcpLog(),
		Report:      h.opts.Report,
		ToolAllowed: h.opts.ToolSelection.MCPAllowed,
	})
	h.mcpSent = map[string]api.MCPServer{}
	for _, s := range h.mcpServers() {
		h.mcpSent[s.Name] = s
	}
	h.mcp.Subscribe(h.mcpChanged)
	if names := codemodeServers(h.opts.MCPServers); len(names) > 0 {
		h.opts.Report(codemodeNote(names))
	}
	h.mcp.Start()
}

// mcpLog is the servers' log, mcp.log in the agent directory; none
// without one.
func (h *Host) mcpLog() *mcp.ServerLog {
	if h.opts.AgentDir == "" {
		return nil
	}
	return mcp.NewServerLog(filepath.Join(h.opts.AgentDir, mcp.LogFile))
}

// mcpAuth is the store of the servers' OAuth tokens, in the agent
// directory; none without one.
func (h *Host) mcpAuth() *mcp.AuthStore {
	if h.opts.AgentDir == "" {
		return nil
	}
	return mcp.NewAuthStore(h.opts.AgentDir)
}

// codemodeNote says that the servers names (quoted) have codemode tools,
// which gopi reaches through tool_search.
func codemodeNote(names []string) error {
	return fmt.Errorf("mcp: gopi has no codemode; the tools of %s with exposure codemode "+
		"are reached through tool_search, as deferred tools are", strings.Join(names, ", "))
}

// mcpChanged follows a server's change of state or tools (the manager's
// Subscribe): its tools join or leave the model's, the system prompt's
// mcp_servers section follows, and the client hears of it.
func (h *Host) mcpChanged(mcp.Status) {
	h.applyExtensionTools()
	h.announceMCP()
}

// announceMCP sends mcp_server_state for each server that is not as the
// client last heard of it (as it started: connecting, or disabled). Until
// the first Subscribe nobody hears events, so nothing is sent; that
// Subscribe calls it for what happened before. One at a time, each reading
// the servers now: the last event of a server holds its current state.
func (h *Host) announceMCP() {
	if h.mcp.Empty() {
		return
	}
	h.mcpMu.Lock()
	defer h.mcpMu.Unlock()
	select {
	case <-h.subscribed:
	default:
		return
	}
	for _, s := range h.mcpServers() {
		if reflect.DeepEqual(s, h.mcpSent[s.Name]) {
			continue
		}
		h.mcpSent[s.Name] = s
		h.emit(api.MCPServerState{Server: s})
	}
}

// codemodeServers names the enabled servers with codemode exposure in
// their configuration (a server's own, or a toolExposure entry).
func codemodeServers(servers []mcp.Entry) []string {
	var out []string
	for _, e := range servers {
		if e.Server.IsEnabled() && e.Server.MayExpose(mcp.ExposureCodemode) {
			out = append(out, fmt.Sprintf("%q", e.Name))
		}
	}
	return out
}

// mcpFirst waits, at most mcpWait, for the servers with direct tools to
// connect (or fail) before a prompt: their tools are declared in its
// request, as are the others' lines of the mcp_servers section once they
// connected. Once they have, it returns at once. Servers that needed an
// OAuth sign-in connect again first when their stored tokens changed (a
// `gopi mcp login` meanwhile), within the same bound.
func (h *Host) mcpFirst(ctx context.Context) {
	if h.mcp.Empty() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, mcpWait)
	defer cancel()
	defer context.AfterFunc(h.ctx, cancel)()
	h.mcp.RetrySignedIn(ctx)
	// A server whose first attempt has ended (a client may have seen it
	// connected) settles once the prompt and the tools follow it, which
	// takes no time: the request then lists it as the client saw it.
	ended := map[string]bool{}
	for _, st := range h.mcp.Statuses() {
		ended[st.Name] = st.State != mcp.StateConnecting
	}
	_ = h.mcp.Wait(ctx, func(name string, s mcp.Server) bool { return s.MayExpose(mcp.ExposureDirect) || ended[name] })
}

// mcpTools are the connected servers' tools declared to the model, then
// the resource tools: those with direct exposure that the tool selection
// declares (a --tools allowlist must name or match them; it removes the
// others only once one of its entries starts with mcp__, as in pi).
func (h *Host) mcpTools() []agent.Tool {
	var out []agent.Tool
	sel := h.opts.ToolSelection
	for _, t := range h.mcp.Tools() {
		if t.Exposure() == mcp.ExposureDirect && sel.MCPDeclared(t.Spec().Name) {
			out = append(out, t)
		}
	}
	for _, t := range h.resourceTools() {
		if t.Exposure() == mcp.ExposureDirect && sel.MCPDeclared(t.Spec().Name) {
			out = append(out, t)
		}
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
	h *Host
	*mcp.ResourceTool
}

var _ readOnlyTool = resourceTool{}

func (t resourceTool) Run(ctx context.Context, call agent.Call, update func(agent.Result)) (agent.Result, error) {
	t.h.mcpWaitAll(ctx)
	return t.ResourceTool.Run(ctx, call, update)
}

// resourceTools are the resource tools the tool selection leaves (they
// count as MCP tools for it, as in pi), while some server offers
// resources; their exposure is the widest of those servers'.
func (h *Host) resourceTools() []resourceTool {
	var out []resourceTool
	for _, t := range h.mcp.ResourceTools() {
		if h.opts.ToolSelection.MCPAllowed(t.Spec().Name) {
			out = append(out, resourceTool{h: h, ResourceTool: t})
		}
	}
	return out
}

// isMCPTool reports whether t comes from MCP: a server's tool or a
// resource tool.
func isMCPTool(t agent.Tool) bool {
	switch t.(type) {
	case *mcp.Tool, resourceTool:
		return true
	}
	return false
}

// closeMCP stops the servers and waits for them (and for those removed
// already).
func (h *Host) closeMCP() {
	if err := h.mcp.Close(); err != nil && !errors.Is(err, context.Canceled) {
		h.opts.Report(err)
	}
}
