package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/tools"
)

// ApprovalMode is which tool calls wait for the user's consent. pi has no
// such gate; gopi asks through a standard extension UI "select", so every
// pi client can answer it.
type ApprovalMode string

const (
	ApprovalOff    ApprovalMode = "off"
	ApprovalWrites ApprovalMode = "writes" // edit, write, bash and MCP tools not marked read-only ask
	ApprovalAll    ApprovalMode = "all"    // every tool asks
)

// approvalMemo is what the approval gate remembers this session.
type approvalMemo struct {
	mu sync.Mutex // guards the fields below
	// mode, when set, replaces the session's --approval (SetApproval).
	mode ApprovalMode
	// allowed are the tools answered "Allow always", denied those
	// answered "Deny always".
	allowed map[string]bool
	denied  map[string]bool
	// settled are the ids of approved calls whose content the user
	// changed, until their results are told so (takeUserVersion).
	settled map[string]bool
	// noDialogsTold: the client heard that it cannot answer approval
	// questions (tellNoDialogs).
	noDialogsTold bool
}

func (m *approvalMemo) allowedAlways(tool string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.allowed[tool]
}

func (m *approvalMemo) allowAlways(tool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.allowed == nil {
		m.allowed = map[string]bool{}
	}
	m.allowed[tool] = true
}

func (m *approvalMemo) deniedAlways(tool string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.denied[tool]
}

func (m *approvalMemo) denyAlways(tool string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.denied == nil {
		m.denied = map[string]bool{}
	}
	m.denied[tool] = true
}

// markSettled records that the user changed call id's content.
func (m *approvalMemo) markSettled(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.settled == nil {
		m.settled = map[string]bool{}
	}
	m.settled[id] = true
}

// takeSettled reports and forgets whether call id's content was changed.
func (m *approvalMemo) takeSettled(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	settled := m.settled[id]
	delete(m.settled, id)
	return settled
}

// firstNoDialogs reports whether the client has not yet been told it
// cannot answer, and marks it told.
func (m *approvalMemo) firstNoDialogs() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	told := m.noDialogsTold
	m.noDialogsTold = true
	return !told
}

// ParseApproval reads an --approval value ("" is off).
func ParseApproval(s string) (ApprovalMode, error) {
	switch m := ApprovalMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", ApprovalOff:
		return ApprovalOff, nil
	case ApprovalWrites, ApprovalAll:
		return m, nil
	}
	return "", fmt.Errorf("invalid approval mode %q: use off, writes or all", api.Clip(s, api.ClipName))
}

// The answers of an approval question (see api.AnswerDenyAlways).
const (
	AnswerAllow       = api.AnswerAllow
	AnswerAllowAlways = api.AnswerAllowAlways
	AnswerDeny        = api.AnswerDeny
	AnswerDenyAlways  = api.AnswerDenyAlways
)

// SetApproval changes which tool calls wait for consent from now on; the
// tools answered "Allow always" or "Deny always" stay so. A call already
// waiting for its answer is not affected.
func (h *Host) SetApproval(mode ApprovalMode) {
	h.approval.mu.Lock()
	defer h.approval.mu.Unlock()
	h.approval.mode = mode
}

// Approval is the approval mode in force: the last SetApproval's, else
// the session's option.
func (h *Host) Approval() ApprovalMode {
	h.approval.mu.Lock()
	defer h.approval.mu.Unlock()
	if h.approval.mode != "" {
		return h.approval.mode
	}
	if h.opts.Approval == "" {
		return ApprovalOff
	}
	return h.opts.Approval
}

// deniedReason is the tool result the model reads when a call was refused.
const deniedReason = "Tool call denied by the user."

// abortedReason is the result of a call an abort stopped before or while
// it was asked about: the file tools' words for an aborted call.
const abortedReason = "Operation aborted"

// noDialogsReason is the result of a gated call whose client cannot show
// the question: nobody was asked, so nobody denied it.
const noDialogsReason = "Tool call not run: approval is required and this client cannot show approval dialogs " +
	"(see \"Approval without dialogs\" in gopi's docs/jsonrpc.md: the client declares window.showMessage " +
	"or experimental.pi.ui, or gopi runs with --approval off)."

// dialogChecker is a client that knows whether it can show a kind of
// dialog: the JSON-RPC bridge shows only the kinds the editor declared.
type dialogChecker interface {
	CanAsk(m api.UIMethod) bool
}

// ApprovalDetails is the extra "details" of an approval request, for
// clients that can show more than a title.
type ApprovalDetails = api.ApprovalDetails

// Bind sets the client that receives the host's UI requests (approval
// questions); nil detaches it, after which questions are answered Deny.
func (h *Host) Bind(c api.Client) {
	h.clientMu.Lock()
	defer h.clientMu.Unlock()
	h.client = c
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
	for _, t := range h.searchableTools() {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func (h *Host) uiClient() api.Client {
	h.clientMu.Lock()
	defer h.clientMu.Unlock()
	return h.client
}

// needsApproval reports whether the gate stops a tool before it runs:
// to ask, or to deny it at once when it was answered "Deny always".
func (h *Host) needsApproval(tool string) bool {
	switch h.Approval() {
	case ApprovalAll:
	case ApprovalWrites:
		if ro, ok := h.findTool(tool).(readOnlyTool); ok {
			if ro.ReadOnly() {
				return false
			}
		} else if tool != tools.NameEdit && tool != tools.NameWrite && tool != tools.NameBash {
			return false
		}
	default:
		return false
	}
	return !h.approval.allowedAlways(tool)
}

// approve is the agent's BeforeToolCall: it asks the client and blocks the
// call unless the answer is Allow or Allow always. Cancel, timeout and a
// missing client count as Deny. Once the run is aborted nothing more is
// asked: the call, and every later one of the run, ends as aborted.
func (h *Host) approve(ctx context.Context, call *agent.Call) (block bool, reason string) {
	if !h.needsApproval(call.Name) {
		return false, ""
	}
	if ctx.Err() != nil {
		return true, abortedReason
	}
	if h.approval.deniedAlways(call.Name) {
		return true, deniedReason
	}
	c := h.uiClient()
	if c == nil {
		return true, deniedReason + " (no client is connected to approve it)"
	}
	if dc, ok := c.(dialogChecker); ok && !dc.CanAsk(api.UISelect) {
		h.tellNoDialogs(c)
		return true, noDialogsReason
	}
	details := ApprovalDetails{ToolName: call.Name, ToolCallID: call.ID, Args: call.Args}
	preview, hasPreview := tools.PreviewChange(ctx, h.opts.Cwd, call.Name, call.Args, h.opts.ToolOptions...)
	if hasPreview {
		details.Diff, details.Problem = preview.Diff, preview.Problem
		if preview.Problem == "" {
			details.Change = &api.ProposedChange{Path: preview.Abs, Before: preview.Before, After: preview.After}
		}
	}
	target, hasTarget := tools.CallTarget(ctx, h.opts.Cwd, call.Name, call.Args)
	if hasTarget {
		details.ResolvedPath, details.OutsideProject = target.Real, target.Real != "" && target.Outside
	}
	resp := c.Ask(ctx, api.UIRequest{
		Method:  api.UISelect,
		Title:   approvalTitle(*call, target),
		Options: []string{AnswerAllow, AnswerAllowAlways, AnswerDeny},
		Timeout: h.opts.Settings.ApprovalTimeoutMs,
		Details: details,
	})
	if ctx.Err() != nil {
		return true, abortedReason
	}
	if resp.Cancelled || resp.Value == nil {
		return true, deniedReason
	}
	switch *resp.Value {
	case AnswerAllow:
	case AnswerAllowAlways:
		h.approval.allowAlways(call.Name)
	case AnswerDenyAlways:
		h.approval.denyAlways(call.Name)
		return true, deniedReason
	default:
		return true, deniedReason
	}
	if resp.Content != nil && hasPreview {
		h.takeUserVersion(call, preview, *resp.Content)
	}
	if hasTarget {
		pinTarget(call, target)
	}
	return false, ""
}

// What the model reads after the result of an edit or write whose
// content the user changed before approving it.
const (
	settledNote = "The user changed your proposed change before approving it: the file now holds the user's " +
		"version, not the one you sent. Read the file before you change it again."
	settledFailedNote = "The user changed your proposed change before approving it, and the user's version " +
		"was not applied either."
)

// takeUserVersion makes an approved edit or write leave the file holding
// content, the user's version of the change p previewed, and marks the
// call so that its result tells the model. Content equal to what the call
// would have written anyway changes nothing; other tools ignore it.
func (h *Host) takeUserVersion(call *agent.Call, p tools.Preview, content string) {
	if p.Problem == "" && content == p.After {
		return
	}
	args, ok := tools.Settle(call.Name, call.Args, content)
	if !ok {
		return
	}
	call.Args = args
	h.approval.markSettled(call.ID)
}

// tellSettled adds to the result of a call the user changed (see
// takeUserVersion) that the file holds the user's version, not the
// model's, or that neither was applied.
func (h *Host) tellSettled(call agent.Call, res agent.Result) agent.Result {
	if !h.approval.takeSettled(call.ID) {
		return res
	}
	note := settledNote
	if res.IsError {
		note = settledFailedNote
	}
	content := slices.Clone(res.Content)
	if n := len(content); n > 0 {
		if t, ok := content[n-1].(llm.TextContent); ok {
			t.Text += "\n\n[" + note + "]"
			content[n-1] = t
			res.Content = content
			return res
		}
	}
	res.Content = append(content, llm.TextContent{Text: "[" + note + "]"})
	return res
}

// pinTarget makes an approved read, edit or write reached through a
// symbolic link work on the file the question named: its path becomes
// the resolved one, so a link changed while the question waited (or
// before the call runs) cannot send it elsewhere. A link made where there
// was none after the question is still followed; see docs/rpc.md.
func pinTarget(call *agent.Call, t tools.Target) {
	switch call.Name {
	case tools.NameRead, tools.NameEdit, tools.NameWrite:
	default:
		return
	}
	if !t.Linked || t.Real == "" {
		return
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(call.Args, &args) != nil {
		return
	}
	path, err := json.Marshal(t.Real)
	if err != nil {
		return
	}
	args["path"] = path
	if pinned, err := json.Marshal(args); err == nil {
		call.Args = pinned
	}
}

// approvalTitle names the tool and its target: "Allow bash: npm test?".
// The target (agent.SummaryTarget) is shown whole, a command with all its
// lines, up to the limits of visible, which say what they leave out. A
// path reached through a symbolic link names the file it really is, and
// one outside the project says so: "Allow write: notes.txt →
// /home/u/.bashrc (outside the project)?".
func approvalTitle(call agent.Call, t tools.Target) string {
	title := "Allow " + visible(call.Name, false)
	key, target := agent.SummaryTarget(call.Args)
	if target == "" {
		return title + "?"
	}
	title += ": " + visible(target, key == "command")
	if key == "path" && t.Real != "" {
		if t.Linked {
			title += " → " + visible(t.Shown(), false)
		}
		if t.Outside {
			title += " (outside the project)"
		}
	}
	return title + "?"
}

// tellNoDialogs tells the client and the log, once per host, that gated
// tool calls are not run because the client cannot show the questions.
func (h *Host) tellNoDialogs(c api.Client) {
	if !h.approval.firstNoDialogs() {
		return
	}
	msg := fmt.Sprintf("tool calls that need approval (--approval %s) are not run: this client cannot show approval dialogs; "+
		"declare window.showMessage or experimental.pi.ui in initialize, or start gopi with --approval off "+
		"(docs/jsonrpc.md, \"Approval without dialogs\")", h.Approval())
	h.opts.Report(errors.New(msg))
	c.Notify(api.UIRequest{Method: api.UINotify, NotifyType: "warning", Message: "gopi: " + msg})
}
