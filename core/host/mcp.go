package host

import (
	"context"
	"errors"
	"fmt"
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
// as deferred tools are, which it says once.
func (h *Host) startMCP() {
	if len(h.opts.MCPServers) == 0 {
		return
	}
	h.mcp = mcp.NewManager(mcp.Options{
		Servers: h.opts.MCPServers,
		Cwd:     h.opts.Cwd,
		Version: h.opts.Version,
		Report:  h.opts.Report,
	})
	h.mcpSent = map[string]api.MCPServer{}
	for _, s := range h.mcpServers() {
		h.mcpSent[s.Name] = s
	}
	h.mcp.Subscribe(h.mcpChanged)
	if names := codemodeServers(h.opts.MCPServers); len(names) > 0 {
		h.opts.Report(fmt.Errorf("mcp: gopi has no codemode; the tools of %s with exposure codemode "+
			"are reached through tool_search, as deferred tools are", strings.Join(names, ", ")))
	}
	h.mcp.Start()
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
// request. Once they have, it returns at once.
func (h *Host) mcpFirst(ctx context.Context) {
	if h.mcp.Empty() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, mcpWait)
	defer cancel()
	defer context.AfterFunc(h.ctx, cancel)()
	_ = h.mcp.Wait(ctx, func(_ string, s mcp.Server) bool { return s.MayExpose(mcp.ExposureDirect) })
}

// mcpTools are the connected servers' tools declared to the model: those
// with direct exposure that the tool selection leaves (--tools filters
// them only once one of its entries starts with mcp__, as in pi).
func (h *Host) mcpTools() []agent.Tool {
	var out []agent.Tool
	sel := h.opts.ToolSelection
	for _, t := range h.mcp.Tools() {
		if t.Exposure() != mcp.ExposureDirect {
			continue
		}
		if !sel.MCPAllowed(t.Spec().Name) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// closeMCP stops the servers and waits for them.
func (h *Host) closeMCP() {
	if h.mcp.Empty() {
		return
	}
	if err := h.mcp.Close(); err != nil && !errors.Is(err, context.Canceled) {
		h.opts.Report(err)
	}
}
