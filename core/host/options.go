package host

// This file holds what a host is built from: Options and the types they
// name (the approval mode, the sandbox, codemode's settings).

import (
	"context"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/gate"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/core/sandbox"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/core/tools"
)

// Options configure a [Host].
type Options struct {
	Cwd      string
	AgentDir string
	Registry *models.Registry
	// Providers defaults to [DefaultProviders].
	Providers Providers
	// Tools are the enabled tools, already bound to Cwd.
	Tools []agent.Tool
	// ToolOptions are the options the built-in tools were built with
	// (their file system and shell): an approval question previews a
	// change through the same file system the tool will use.
	ToolOptions []tools.Option
	// AllTools are every built-in tool, the enabled ones among them
	// (extensions may enable others with setActiveTools, as in pi); nil
	// means Tools.
	AllTools []agent.Tool
	// Codemode, when set, offers pi's codemode tool (it exists: the
	// tool selection allows it); nil: no codemode.
	Codemode *CodemodeOptions
	// ToolSelection says which of the extensions' tools exist and are
	// active (pi's --tools allowlist and --exclude-tools); Tools and
	// AllTools must already follow it. The zero value keeps every
	// extension tool, active once registered.
	ToolSelection tools.Selection
	// Model is the command line's model (--model): every session starts
	// with it, as in pi. nil means the session's last model, else the
	// startup default (see [Host.freshChoice]).
	Model *llm.Model
	// Thinking is the command line's level (--thinking or a :level
	// suffix): "" means the session's, else the startup default;
	// clamped to the model.
	Thinking llm.ThinkingLevel
	// Store is the session; nil means an in-memory one.
	Store *session.Store
	// Prompt inputs (see resources.PromptOptions).
	SystemPrompt       string
	AppendSystemPrompt string
	ContextFiles       []resources.ContextFile
	// Settings are the merged settings.json values, typed by
	// [LoadSettings] (retry and compaction over pi's defaults, shellPath
	// expanded): the host takes them as they are.
	Settings Settings
	// Scope is the --models list cycle_model moves through; empty means
	// every available model.
	Scope []models.ScopedModel
	// TemplatePaths and SkillPaths are files or directories named on the
	// command line (--prompt-template, --skill), loaded besides the user
	// and project folders.
	TemplatePaths []string
	SkillPaths    []string
	// NoSkills and NoPromptTemplates leave out the skills and prompt
	// templates found in the user's and the project's folders (pi's
	// --no-skills, --no-prompt-templates): only the explicit paths
	// above, and those extensions offer, load.
	NoSkills          bool
	NoPromptTemplates bool
	// UntrustedProject leaves the project's own skills and prompt
	// templates (.pi, .agents/skills) out: it is not trusted (pi 1.5's
	// project trust, decided by the caller).
	UntrustedProject bool
	// Approval is the tool approval gate ("" means off).
	Approval ApprovalMode
	// AdditionalDirs are directories of the project besides Cwd, as
	// absolute paths (ACP's additionalDirectories): files in them are not
	// "outside the project" to the approval gate, and the system prompt
	// names them. Relative paths stay Cwd's; checkpoints record Cwd's
	// tree alone.
	AdditionalDirs []string
	// ToolStarting, when set, is told the id of each tool call as its
	// tool starts running: after the extensions' tool_call handlers and
	// the approval gate let it through (ACP's in_progress).
	ToolStarting func(toolCallID string)
	// Sandbox is the sandbox the tools were built with
	// (tools.WithSandboxOf its Current): get_state reports it,
	// SetSandbox changes its mode and AdditionalDirs are writable in
	// workspace-write. nil: none, and get_state reports none.
	Sandbox Sandbox
	// Report receives problems the runtime survived (written to stderr by
	// cmd/gopi).
	Report func(error)
	// Extensions are the pi extensions to run; nil means none. The host
	// starts them in the background and stops them on Close.
	Extensions *ext.Manager
	// Shutdown is called when an extension asks gopi to exit
	// (ctx.shutdown()); nil ignores it.
	Shutdown func()
	// MCPServers are the MCP servers to connect (mcp.Load's, values
	// expanded as each starts); nil means none. The host connects them in
	// the background when it starts and stops them on Close, with those
	// extensions register.
	MCPServers []mcp.Entry
	// NoMCP connects no MCP server, not even one an extension registers
	// (--no-mcp).
	NoMCP bool
	// Version is gopi's, told to MCP servers.
	Version string
}

// CodemodeOptions configure the codemode tool.
type CodemodeOptions struct {
	// Active: the tool is enabled from the start (--tools +codemode,
	// defaultTools: ["+codemode"]).
	Active bool
	// Mode is codemode.mode: "on" (the default) keeps the other tools
	// declared to the model; "only" hides the tools scripts can call,
	// so the model reaches them through codemode.
	Mode string
	// InlineBudget is codemode.inlineBudget (nil: pi's 3000).
	InlineBudget *int
	// CacheDir keeps the compiled QuickJS between processes ("": none).
	CacheDir string
}

// CodemodeModeOnly is codemode.mode's "only".
const CodemodeModeOnly = "only"

// Sandbox is the sandbox the model's commands run in, as the host reports
// and changes it: core/sandbox's Switch, which the tools confine
// themselves with (tools.WithSandboxOf).
type Sandbox interface {
	// State is the sandbox in force.
	State() sandbox.State
	// Chosen is the mode last asked for; the one in force may be
	// stricter (a project's settings).
	Chosen() sandbox.Mode
	// Set makes mode the one asked for from now on; the notes say what a
	// project's settings kept stricter.
	Set(mode sandbox.Mode) (notes []string, err error)
	// SetRoots makes dirs the further directories workspace-write lets
	// commands write in (the project's additional directories).
	SetRoots(dirs []string)
}

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

// toolStarting passes a call about to run on to ToolStarting.
func (o *Options) toolStarting(_ context.Context, call agent.Call) {
	if f := o.ToolStarting; f != nil {
		f(call.ID)
	}
}
