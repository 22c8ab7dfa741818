package gate

import (
	"context"
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

// Mode is which tool calls wait for the user's consent. pi has no such
// gate; gopi asks through a standard extension UI "select", so every pi
// client can answer it.
type Mode string

const (
	ModeOff Mode = "off"
	// ModeEscapes asks nothing before a call runs; only a command gopi's
	// sandbox stopped is put to the user, to run once outside ([Sandbox]).
	ModeEscapes Mode = "escapes"
	ModeWrites  Mode = "writes" // edit, write, bash and MCP tools not marked read-only ask
	ModeAll     Mode = "all"    // every tool asks
)

// ParseMode reads an --approval value ("" is off).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", ModeOff:
		return ModeOff, nil
	case ModeEscapes, ModeWrites, ModeAll:
		return m, nil
	}
	return "", fmt.Errorf("invalid approval mode %q: use off, escapes, writes or all", api.Clip(s, api.ClipName))
}

// The answers of an approval question (see api.AnswerDenyAlways).
const (
	AnswerAllow       = api.AnswerAllow
	AnswerAllowAlways = api.AnswerAllowAlways
	AnswerDeny        = api.AnswerDeny
	AnswerDenyAlways  = api.AnswerDenyAlways
)

// What the model reads when the gate stopped a call.
const (
	// DeniedReason: the user refused it.
	DeniedReason = "Tool call denied by the user."
	// AbortedReason: an abort stopped it before or while it was asked
	// about (the file tools' words for an aborted call).
	AbortedReason = "Operation aborted"
	// NoDialogsReason: the client cannot show the question, so nobody
	// was asked and nobody denied it.
	NoDialogsReason = "Tool call not run: approval is required and this client cannot show approval dialogs " +
		"(see \"Approval without dialogs\" in gopi's docs/jsonrpc.md: the client declares window.showMessage " +
		"or experimental.pi.ui, or gopi runs with --approval off)."
)

// What the model reads after the result of an edit or write whose
// content the user changed before approving it.
const (
	settledNote = "The user changed your proposed change before approving it: the file now holds the user's " +
		"version, not the one you sent. Read the file before you change it again."
	settledFailedNote = "The user changed your proposed change before approving it, and the user's version " +
		"was not applied either."
)

// ReadOnly is a tool that says whether it changes anything: an MCP tool's
// readOnlyHint. Under [ModeWrites] such a tool is asked about unless it
// is read-only; a tool without the method follows the built-in rule (edit,
// write and bash ask).
type ReadOnly interface {
	ReadOnly() bool
}

// dialogChecker is a client that knows whether it can show a kind of
// dialog: the JSON-RPC bridge shows only the kinds the editor declared.
type dialogChecker interface {
	CanAsk(m api.UIMethod) bool
}

// ApprovalConfig is what the approval stage uses.
type ApprovalConfig struct {
	// Mode is the session's mode until [Approval.SetMode].
	Mode Mode
	// Cwd is the project: targets outside it are named so.
	Cwd string
	// Roots, when set, are the project's directories besides Cwd now
	// (an ACP client's additionalDirectories): files in them are the
	// project's too.
	Roots func() []string
	// ToolOptions are the built-in tools' options (their file system): a
	// question previews a change as the tool will make it.
	ToolOptions []tools.Option
	// Timeout is how long a question waits, in milliseconds (0: for ever).
	Timeout int64
	// Client is who answers questions now; nil, or a nil result, when
	// nobody can.
	Client func() api.Client
	// Find is the tool a call names (nil when none): whether it reads
	// only.
	Find func(name string) agent.Tool
	// Report hears what the user should know once (a client that cannot
	// answer).
	Report func(error)
}

// Approval is the stage that asks the user before a gated call runs, and
// remembers the answers that last ("Allow always", "Deny always").
type Approval struct {
	cfg ApprovalConfig

	mu sync.Mutex // guards the fields below
	// mode, when set, replaces the configured one (SetMode).
	mode Mode
	// allowed are the tools answered "Allow always", denied those
	// answered "Deny always".
	allowed map[string]bool
	denied  map[string]bool
	// noDialogsTold: the client heard that it cannot answer approval
	// questions (tellNoDialogs).
	noDialogsTold bool
}

var _ Stage = (*Approval)(nil)

// NewApproval is the approval stage.
func NewApproval(cfg ApprovalConfig) *Approval {
	if cfg.Report == nil {
		cfg.Report = func(error) {}
	}
	if cfg.Client == nil {
		cfg.Client = func() api.Client { return nil }
	}
	if cfg.Find == nil {
		cfg.Find = func(string) agent.Tool { return nil }
	}
	return &Approval{cfg: cfg}
}

// SetMode changes which calls wait for consent from now on; the tools
// answered "Allow always" or "Deny always" stay so. A call already waiting
// for its answer is not affected.
func (a *Approval) SetMode(m Mode) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mode = m
}

// Mode is the mode in force: the last SetMode's, else the configured one.
func (a *Approval) Mode() Mode {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mode != "" {
		return a.mode
	}
	if a.cfg.Mode == "" {
		return ModeOff
	}
	return a.cfg.Mode
}

func (a *Approval) remember(set *map[string]bool, tool string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[tool] = true
}

func (a *Approval) remembered(set *map[string]bool, tool string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return (*set)[tool]
}

// Needs reports whether the gate stops a tool before it runs: to ask, or
// to deny it at once when it was answered "Deny always".
func (a *Approval) Needs(tool string) bool {
	switch a.Mode() {
	case ModeAll:
	case ModeWrites:
		if ro, ok := a.cfg.Find(tool).(ReadOnly); ok {
			if ro.ReadOnly() {
				return false
			}
		} else if tool != tools.NameEdit && tool != tools.NameWrite && tool != tools.NameBash {
			return false
		}
	default:
		return false
	}
	return !a.remembered(&a.allowed, tool)
}

// Before asks the client and blocks the call unless the answer is Allow or
// Allow always. Cancel, timeout and a missing client count as Deny. Once
// the run is aborted nothing more is asked: the call, and every later one
// of the run, ends as aborted. An approved call is held to what the
// question showed: a path reached through a link becomes the file it
// reached, and an edit or write must find that same file when it writes
// (see tools.Pin).
func (a *Approval) Before(ctx context.Context, c *Call) (bool, string) {
	if !a.Needs(c.Name) {
		return false, ""
	}
	if ctx.Err() != nil {
		return true, AbortedReason
	}
	if a.remembered(&a.denied, c.Name) {
		return true, DeniedReason
	}
	client := a.cfg.Client()
	if client == nil {
		return true, DeniedReason + " (no client is connected to approve it)"
	}
	if dc, ok := client.(dialogChecker); ok && !dc.CanAsk(api.UISelect) {
		a.tellNoDialogs(client)
		return true, NoDialogsReason
	}
	details := api.ApprovalDetails{ToolName: c.Name, ToolCallID: c.ID, Args: c.Args}
	preview, hasPreview := tools.PreviewChange(ctx, a.cfg.Cwd, c.Name, c.Args, a.cfg.ToolOptions...)
	if hasPreview {
		details.Diff, details.Problem = preview.Diff, preview.Problem
		if preview.Problem == "" {
			details.Change = &api.ProposedChange{Path: preview.Abs, Before: preview.Before, After: preview.After}
		}
	}
	var roots []string
	if a.cfg.Roots != nil {
		roots = a.cfg.Roots()
	}
	target, hasTarget := tools.CallTarget(ctx, a.cfg.Cwd, c.Name, c.Args, roots...)
	if hasTarget {
		details.ResolvedPath, details.OutsideProject = target.Real, target.Real != "" && target.Outside
	}
	resp := client.Ask(ctx, api.UIRequest{
		Method:  api.UISelect,
		Title:   approvalTitle(c.Call, target),
		Options: []string{AnswerAllow, AnswerAllowAlways, AnswerDeny},
		Timeout: a.cfg.Timeout,
		Details: details,
	})
	if ctx.Err() != nil {
		return true, AbortedReason
	}
	if resp.Cancelled || resp.Value == nil {
		return true, DeniedReason
	}
	switch *resp.Value {
	case AnswerAllow:
	case AnswerAllowAlways:
		a.remember(&a.allowed, c.Name)
	case AnswerDenyAlways:
		a.remember(&a.denied, c.Name)
		return true, DeniedReason
	default:
		return true, DeniedReason
	}
	if resp.Content != nil && hasPreview {
		takeUserVersion(c, preview, *resp.Content)
	}
	if hasTarget {
		pinCall(c, target)
	}
	return false, ""
}

// After tells the model when the user changed the call's content before
// approving it.
func (a *Approval) After(_ context.Context, c *Call, res agent.Result) agent.Result {
	if !c.userVersion {
		return res
	}
	return tellUserVersion(res)
}

// takeUserVersion makes an approved edit or write leave the file holding
// content, the user's version of the change p previewed, and marks the
// call so that its result tells the model. Content equal to what the call
// would have written anyway changes nothing; other tools ignore it.
func takeUserVersion(c *Call, p tools.Preview, content string) {
	if p.Problem == "" && content == p.After {
		return
	}
	args, ok := tools.Settle(c.Name, c.Args, content)
	if !ok {
		return
	}
	c.Args = args
	c.userVersion = true
}

// tellUserVersion adds to the result of a call the user changed (see
// takeUserVersion) that the file holds the user's version, not the
// model's, or that neither was applied.
func tellUserVersion(res agent.Result) agent.Result {
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

// pinCall makes an approved read, edit or write work on the file its
// question named, target (tools.PinCall): a path reached through a link
// becomes the file's own, and the tool runs holding the pin of the file as
// the question found it, so a link changed or put in its place while the
// question waited (or before the call runs) makes the call fail saying
// so, instead of sending it elsewhere.
func pinCall(c *Call, target tools.Target) {
	args, pin, ok := tools.PinCall(c.Name, c.Args, target)
	if !ok {
		return
	}
	c.Args = args
	c.Bind(func(ctx context.Context) context.Context { return tools.WithPin(ctx, pin) })
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

// tellNoDialogs tells the client and the log, once, that gated tool calls
// are not run because the client cannot show the questions.
func (a *Approval) tellNoDialogs(c api.Client) {
	a.mu.Lock()
	told := a.noDialogsTold
	a.noDialogsTold = true
	a.mu.Unlock()
	if told {
		return
	}
	msg := fmt.Sprintf("tool calls that need approval (--approval %s) are not run: this client cannot show approval dialogs; "+
		"declare window.showMessage or experimental.pi.ui in initialize, or start gopi with --approval off "+
		"(docs/jsonrpc.md, \"Approval without dialogs\")", a.Mode())
	a.cfg.Report(errors.New(msg))
	c.Notify(api.UIRequest{Method: api.UINotify, NotifyType: "warning", Message: "gopi: " + msg})
}
