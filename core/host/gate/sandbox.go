package gate

import (
	"context"
	"encoding/json"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/tools"
)

// SandboxConfig is what the sandbox stage uses.
type SandboxConfig struct {
	// Mode is the approval mode in force (the approval stage's): with
	// the gate off nobody is asked, and a command the sandbox stopped
	// stays stopped.
	Mode func() Mode
	// Timeout is how long a question waits, in milliseconds (0: for ever).
	Timeout int64
	// Client is who answers questions now; nil, or a nil result, when
	// nobody can.
	Client func() api.Client
}

// Sandbox is the stage of gopi's sandbox: the bash tool runs its command
// confined (tools.WithSandbox) and, when the sandbox stopped it, asks
// the tools.Escape this stage hands it (Call.Bind) whether to run it once
// more outside. The stage puts that question to the user when the
// approval gate is on, "Allow once" or "Deny", as the approval stage asks
// its own; Deny, a timeout, an abort or a client that cannot answer keep
// the sandboxed result.
type Sandbox struct {
	BeforeOnly
	cfg SandboxConfig
}

var _ Stage = (*Sandbox)(nil)

// NewSandbox is the sandbox stage.
func NewSandbox(cfg SandboxConfig) *Sandbox {
	if cfg.Mode == nil {
		cfg.Mode = func() Mode { return ModeOff }
	}
	if cfg.Client == nil {
		cfg.Client = func() api.Client { return nil }
	}
	return &Sandbox{cfg: cfg}
}

// Before hands the call the escape question; a call that does not run
// in the sandbox never asks it.
func (s *Sandbox) Before(_ context.Context, c *Call) (bool, string) {
	q := escapeQuestion{s: s, tool: c.Name, id: c.ID}
	c.Bind(func(ctx context.Context) context.Context { return tools.WithEscape(ctx, q) })
	return false, ""
}

// escapeQuestion asks about one call's command.
type escapeQuestion struct {
	s        *Sandbox
	tool, id string
}

// Escape implements tools.Escape: true only when the user answered
// "Allow once" (or a client's own "Allow", which dialects with fixed
// buttons send).
func (q escapeQuestion) Escape(ctx context.Context, d tools.Denial) bool {
	if q.s.cfg.Mode() == ModeOff || ctx.Err() != nil {
		return false
	}
	client := q.s.cfg.Client()
	if client == nil {
		return false
	}
	if dc, ok := client.(dialogChecker); ok && !dc.CanAsk(api.UISelect) {
		return false
	}
	args, _ := json.Marshal(map[string]string{"command": d.Command})
	resp := client.Ask(ctx, api.UIRequest{
		Method:  api.UISelect,
		Title:   escapeTitle(q.tool, d.Command),
		Message: d.Confinement,
		Options: []string{api.AnswerAllowOnce, api.AnswerDeny},
		Timeout: q.s.cfg.Timeout,
		Details: api.ApprovalDetails{ToolName: q.tool, ToolCallID: q.id, Args: args, SandboxEscape: true},
	})
	if ctx.Err() != nil || resp.Cancelled || resp.Value == nil {
		return false
	}
	return *resp.Value == api.AnswerAllowOnce || *resp.Value == api.AnswerAllow
}

// escapeTitle is the escape question, "gopi's sandbox stopped bash:
// <command>" and, on a line of its own, "Run it once outside the
// sandbox?", the command shown as an approval question shows it
// (visible): every line, control characters escaped.
func escapeTitle(tool, command string) string {
	return "gopi's sandbox stopped " + visible(tool, false) + ": " + visible(command, true) + "\nRun it once outside the sandbox?"
}
