package host

import (
	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host/gate"
)

// ApprovalMode is which tool calls wait for the user's consent (the
// pipeline's approval stage, core/host/gate).
type ApprovalMode = gate.Mode

const (
	ApprovalOff     = gate.ModeOff
	ApprovalEscapes = gate.ModeEscapes
	ApprovalWrites  = gate.ModeWrites
	ApprovalAll     = gate.ModeAll
)

// ParseApproval reads an --approval value ("" is off).
func ParseApproval(s string) (ApprovalMode, error) { return gate.ParseMode(s) }

// The answers of an approval question (see api.AnswerDenyAlways).
const (
	AnswerAllow       = api.AnswerAllow
	AnswerAllowAlways = api.AnswerAllowAlways
	AnswerDeny        = api.AnswerDeny
	AnswerDenyAlways  = api.AnswerDenyAlways
)

// ApprovalDetails is the extra "details" of an approval request, for
// clients that can show more than a title.
type ApprovalDetails = api.ApprovalDetails

// SetApproval changes which tool calls wait for consent from now on; the
// tools answered "Allow always" or "Deny always" stay so. A call already
// waiting for its answer is not affected.
func (h *Host) SetApproval(mode ApprovalMode) { h.approval.SetMode(mode) }

// Approval is the approval mode in force: the last SetApproval's, else
// the session's option.
func (h *Host) Approval() ApprovalMode { return h.approval.Mode() }

// Bind sets the client that receives the host's UI requests (approval
// questions); nil detaches it, after which questions are answered Deny.
func (h *Host) Bind(c api.Client) {
	h.clientMu.Lock()
	defer h.clientMu.Unlock()
	h.client = c
}

func (h *Host) uiClient() api.Client {
	h.clientMu.Lock()
	defer h.clientMu.Unlock()
	return h.client
}

// findTool is the tool the model may call by that name now: one of the
// run's, or an MCP tool that tool_search loads into requests (those are
// not among the run's); nil if none.
func (h *Host) findTool(name string) agent.Tool {
	for _, t := range h.agent.Tools() {
		if t.Spec().Name == name {
			return t
		}
	}
	for _, t := range h.mcp.Searchable() {
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
		Find:        h.findTool,
		Report:      h.opts.Report,
	})
	return gate.New(
		gate.HookStage(h.hooks(), h.extFailed),
		h.approval,
		gate.NewSandbox(gate.SandboxConfig{
			Mode:    h.approval.Mode,
			Timeout: h.opts.Settings.ApprovalTimeoutMs,
			Client:  h.uiClient,
		}),
		gate.JournalStage(h.cp),
	)
}
