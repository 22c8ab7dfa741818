package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/tools"
)

// The runtime's questions. A session's runtime is bound (Runtime.Bind) to
// the session's asker, which puts them to the client: an approval
// question as session/request_permission, an extension's dialog as
// elicitation/create when the client declared form elicitation.
//
// An approval question is told from other dialogs by its Details: the
// host's approval gate always sends api.ApprovalDetails there, a type of
// core/api so that dialects can recognise it without knowing the host.
// Its answers are api's Answer* strings.

// clientCaps is what the client declared in initialize.
type clientCaps struct {
	mu sync.Mutex // guards c
	c  sdk.ClientCapabilities
}

func (c *clientCaps) set(v sdk.ClientCapabilities) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.c = v
}

// get is what the client declared.
func (c *clientCaps) get() sdk.ClientCapabilities {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c
}

// formElicitation reports whether the client takes elicitation/create in
// form mode.
func (c *clientCaps) formElicitation() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c.Elicitation != nil && c.c.Elicitation.Form != nil
}

// asker is a session's api.Client. Events reach the client through the
// runtime's Subscribe, so Emit has nothing to do; Notify's messages have
// no place in ACP and go to the report.
type asker struct {
	a *conn
	s *session
}

var _ api.Client = asker{}

func (q asker) Emit(api.Event) {}

func (q asker) Notify(req api.UIRequest) {
	if req.Method == api.UINotify && req.Message != "" {
		q.a.opts.Report(fmt.Errorf("acp: session %s: %s", q.s.id, req.Message))
	}
}

// CanShowDialog reports whether the client shows an extension dialog of
// kind m: only through form elicitation, which it declares. (Approval
// questions go as session/request_permission to every client.)
func (q asker) CanShowDialog(m api.UIMethod) bool {
	return m.IsDialog() && q.a.caps.formElicitation()
}

// Ask puts a question to the client and waits for its answer. ctx's end
// (the run aborted: session/cancel) and the question's timeout withdraw
// it ($/cancel_request) and answer it cancelled, as does a client that
// fails the request or goes away.
func (q asker) Ask(ctx context.Context, req api.UIRequest) api.UIResponse {
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.Timeout)*time.Millisecond)
		defer cancel()
	}
	if d, ok := req.Details.(api.ApprovalDetails); ok {
		return q.permission(ctx, req, d)
	}
	switch req.Method {
	case api.UISelect, api.UIConfirm, api.UIInput, api.UIEditor:
		if q.a.caps.formElicitation() {
			return q.elicit(ctx, req)
		}
	}
	// Nobody to ask: the extension hears that nobody answered.
	return api.Cancelled(req.ID)
}

// failed reports a question that could not be put, unless the run's end
// withdrew it (that is no failure).
func (q asker) failed(ctx context.Context, method string, err error) {
	if ctx.Err() == nil && !errors.Is(err, errConnectionEnded) {
		q.a.opts.Report(fmt.Errorf("acp: session %s: %s: %w", q.s.id, method, err))
	}
}

// The options of a permission request; their ids are their kinds.
var permissionOptions = []sdk.PermissionOption{
	{OptionId: sdk.PermissionOptionId(sdk.PermissionOptionKindAllowOnce), Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
	{OptionId: sdk.PermissionOptionId(sdk.PermissionOptionKindAllowAlways), Name: "Always allow", Kind: sdk.PermissionOptionKindAllowAlways},
	{OptionId: sdk.PermissionOptionId(sdk.PermissionOptionKindRejectOnce), Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
	{OptionId: sdk.PermissionOptionId(sdk.PermissionOptionKindRejectAlways), Name: "Always reject", Kind: sdk.PermissionOptionKindRejectAlways},
}

// escapeOptions are the options of the sandbox's escape question
// (api.ApprovalDetails.SandboxEscape): run the command once more outside
// the sandbox, or not; nothing is remembered.
var escapeOptions = []sdk.PermissionOption{
	{OptionId: sdk.PermissionOptionId(sdk.PermissionOptionKindAllowOnce), Name: api.AnswerAllowOnce, Kind: sdk.PermissionOptionKindAllowOnce},
	{OptionId: sdk.PermissionOptionId(sdk.PermissionOptionKindRejectOnce), Name: api.AnswerDeny, Kind: sdk.PermissionOptionKindRejectOnce},
}

// permissionAnswers map the options onto the approval gate's answers:
// "always" is remembered per tool for the session by the gate.
var permissionAnswers = map[sdk.PermissionOptionId]string{
	sdk.PermissionOptionId(sdk.PermissionOptionKindAllowOnce):    api.AnswerAllow,
	sdk.PermissionOptionId(sdk.PermissionOptionKindAllowAlways):  api.AnswerAllowAlways,
	sdk.PermissionOptionId(sdk.PermissionOptionKindRejectOnce):   api.AnswerDeny,
	sdk.PermissionOptionId(sdk.PermissionOptionKindRejectAlways): api.AnswerDenyAlways,
}

// permission asks session/request_permission about a tool call. A
// cancelled outcome, or anything but one of the options, rejects it.
func (q asker) permission(ctx context.Context, req api.UIRequest, d api.ApprovalDetails) api.UIResponse {
	options := permissionOptions
	if d.SandboxEscape {
		options = escapeOptions
	}
	params := sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(q.s.id),
		ToolCall:  permissionToolCall(q.s.cwd, d),
		Options:   options,
	}
	var res sdk.RequestPermissionResponse
	if err := q.a.call(ctx, sdk.ClientMethodSessionRequestPermission, params, &res); err != nil {
		q.failed(ctx, sdk.ClientMethodSessionRequestPermission, err)
		return api.Cancelled(req.ID)
	}
	if res.Outcome.Selected == nil {
		return api.Cancelled(req.ID)
	}
	answer, ok := permissionAnswers[res.Outcome.Selected.OptionId]
	if ok && !slices.ContainsFunc(options, func(o sdk.PermissionOption) bool { return o.OptionId == res.Outcome.Selected.OptionId }) {
		ok = false
	}
	if !ok {
		q.a.opts.Report(fmt.Errorf("acp: session %s: session/request_permission: the client chose %q, which gopi did not offer: the call is rejected", q.s.id, api.Clip(string(res.Outcome.Selected.OptionId), api.ClipName)))
		return api.Cancelled(req.ID)
	}
	return api.UIResponse{ID: req.ID, Value: &answer}
}

// permissionToolCall is the tool call a permission request is about, as
// its tool_call showed it, with a bash command's title whole (the
// tool_call's is cut at its first line) and, for an edit or write, the
// change it would make as a diff.
func permissionToolCall(cwd string, d api.ApprovalDetails) sdk.ToolCallUpdate {
	t := describeTool(cwd, d.ToolName, d.Args)
	if d.ToolName == tools.NameBash {
		var a struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(d.Args, &a) == nil && a.Command != "" {
			t.title = a.Command
		}
	}
	if d.SandboxEscape {
		// The call ran, and gopi's sandbox stopped it: the question is
		// whether it runs once more outside.
		t.title = "Run outside gopi's sandbox: " + t.title
	}
	if d.OutsideProject {
		// The file is in neither the session's directory nor one of its
		// additionalDirectories (the resolved path, links followed).
		t.title += " (outside the project: " + d.ResolvedPath + ")"
	}
	u := sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(d.ToolCallID),
		Title:      sdk.Ptr(t.title),
		Kind:       sdk.Ptr(t.kind),
		Locations:  t.locations,
		RawInput:   rawInput(d.Args),
	}
	if c := d.Change; c != nil {
		diff := sdk.ToolCallContentDiff{Type: "diff", Path: c.Path, OldText: c.Before, NewText: c.After}
		u.Content = []sdk.ToolCallContent{{Diff: &diff}}
	}
	return u
}

// The field of a dialog's form: "confirmed" for a confirm, "value" else.
const (
	fieldValue     = "value"
	fieldConfirmed = "confirmed"
)

// elicit shows an extension's dialog as a one-field form: a select's
// options as an enum, a confirm as a boolean, an input or editor as a
// string (an editor's prefill its default). Declining a confirm answers
// it "no"; declining anything else, or cancelling, cancels it.
func (q asker) elicit(ctx context.Context, req api.UIRequest) api.UIResponse {
	prop := elicitationProperty{Type: "string", Title: req.Title}
	field := fieldValue
	message := req.Title
	switch req.Method {
	case api.UISelect:
		prop.Enum = req.Options
	case api.UIConfirm:
		field, prop.Type = fieldConfirmed, "boolean"
		if req.Message != "" {
			message = req.Title + "\n\n" + req.Message
		}
	case api.UIInput:
		prop.Description = req.Placeholder
	case api.UIEditor:
		if req.Prefill != "" {
			prop.Default = sdk.Ptr(req.Prefill)
		}
	}
	params := elicitationForm{
		Mode:      "form",
		Message:   message,
		SessionID: sdk.SessionId(q.s.id),
		RequestedSchema: elicitationSchema{
			Type:       "object",
			Properties: map[string]elicitationProperty{field: prop},
			Required:   []string{field},
		},
	}
	var res sdk.UnstableCreateElicitationResponse
	if err := q.a.call(ctx, sdk.ClientMethodElicitationCreate, params, &res); err != nil {
		q.failed(ctx, sdk.ClientMethodElicitationCreate, err)
		return api.Cancelled(req.ID)
	}
	switch {
	case res.Accept != nil:
		v := res.Accept.Content[field]
		if req.Method == api.UIConfirm {
			if b, ok := v.(bool); ok {
				return api.UIResponse{ID: req.ID, Confirmed: &b}
			}
		} else if s, ok := v.(string); ok {
			return api.UIResponse{ID: req.ID, Value: &s}
		}
		q.a.opts.Report(fmt.Errorf("acp: session %s: elicitation/create: the client accepted without a %s %q: the dialog is cancelled", q.s.id, prop.Type, field))
	case res.Decline != nil && req.Method == api.UIConfirm:
		return api.UIResponse{ID: req.ID, Confirmed: sdk.Ptr(false)}
	}
	return api.Cancelled(req.ID)
}
