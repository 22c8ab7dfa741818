package host

// This file builds the tool pipeline (core/host/gate) and answers the
// approval mode's commands.

import (
	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/host/gate"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
)

// SetApproval changes which tool calls wait for consent from now on; the
// tools answered "Allow always" or "Deny always" stay so. A call already
// waiting for its answer is not affected.
func (h *Host) SetApproval(mode ApprovalMode) { h.approval.SetMode(mode) }

// Approval is the approval mode in force: the last SetApproval's, else
// the session's option.
func (h *Host) Approval() ApprovalMode { return h.approval.Mode() }

// findTool is the tool the model may call by that name now: one of the
// run's, or an MCP tool that tool_search loads into requests (those are
// not among the run's); nil if none.
func findTool(a *agent.Agent, mcp *mcpstate.State, name string) agent.Tool {
	for _, t := range a.Tools() {
		if t.Spec().Name == name {
			return t
		}
	}
	for _, t := range mcp.Searchable() {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

// toolPipeline is every tool call's way through the host: the
// extensions' hooks, the approval gate, the sandbox's escape question,
// the edit journal (gate.New has the order and why).
func (h *Host) toolPipeline() *gate.Pipeline {
	h.approval = gate.NewApproval(gate.ApprovalConfig{
		Mode:        h.opts.Approval,
		Cwd:         h.opts.Cwd,
		Roots:       h.roots.get,
		ToolOptions: h.opts.ToolOptions,
		Timeout:     h.opts.Settings.ApprovalTimeoutMs,
		Client:      h.uiClient,
		Find:        func(name string) agent.Tool { return findTool(h.agent, h.mcp, name) },
		Report:      h.opts.Report,
	})
	return gate.New(
		gate.HookStage(h.ext.hooks(), h.ext.failed),
		h.approval,
		gate.NewSandbox(gate.SandboxConfig{
			Mode:    h.approval.Mode,
			Timeout: h.opts.Settings.ApprovalTimeoutMs,
			Client:  h.uiClient,
		}),
		gate.JournalStage(h.cp),
	)
}
