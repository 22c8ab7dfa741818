package api

import "encoding/json"

// The answers of an approval question: the Options of the UISelect the
// approval gate asks with, and AnswerDenyAlways, which the gate takes
// too though it does not offer it (pi's clients show the options they
// are given; a dialect with its own "reject always", as ACP has, answers
// it).
const (
	AnswerAllow       = "Allow"
	AnswerAllowAlways = "Allow always"
	AnswerDeny        = "Deny"
	AnswerDenyAlways  = "Deny always"
	// AnswerAllowOnce allows a command gopi's sandbox stopped to run
	// once more outside it: the escape question's options are it and
	// AnswerDeny (ApprovalDetails.SandboxEscape).
	AnswerAllowOnce = "Allow once"
)

// ApprovalDetails is the extra "details" of an approval request, for
// clients that can show more than a title. A UIRequest whose Details
// hold them asks whether a tool call may run: dialects that show such a
// question their own way (ACP's session/request_permission) recognise it
// by this type.
type ApprovalDetails struct {
	ToolName string `json:"toolName"`
	// ToolCallID is the call's id, as in its tool_execution_* events, so
	// a client can show the question on the call's own card.
	ToolCallID string          `json:"toolCallId,omitempty"`
	Args       json.RawMessage `json:"args"`
	// Diff is a unified diff of the change an edit or write would make.
	Diff string `json:"diff,omitempty"`
	// Problem says why an edit would not apply as asked.
	Problem string `json:"problem,omitempty"`
	// ResolvedPath is the file a file tool's call really works on: its
	// path made absolute with every symbolic link followed.
	ResolvedPath string `json:"resolvedPath,omitempty"`
	// OutsideProject: ResolvedPath is outside the project directory.
	OutsideProject bool `json:"outsideProject,omitempty"`
	// SandboxEscape: the call ran in gopi's sandbox, which stopped it,
	// and the question is whether it runs once more outside the sandbox
	// (answers AnswerAllowOnce or AnswerDeny), not whether it runs.
	SandboxEscape bool `json:"sandboxEscape,omitempty"`

	// Change is the whole change an edit or write would make, for
	// dialects that show old and new text rather than a diff; nil when
	// there is none to show. Not sent: Diff says the same on the wire.
	Change *ProposedChange `json:"-"`
}

// ProposedChange is the text of a file before and after a change.
type ProposedChange struct {
	// Path is the file's absolute path.
	Path string
	// Before is the file's text now; nil when the file does not exist.
	Before *string
	// After is the text the file would hold.
	After string
}
