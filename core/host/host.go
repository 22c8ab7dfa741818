package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gopi-dev/gopi/core/codemode"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gopi-dev/gopi/core/host/checkpoints"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/gate"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/mcp"
	"github.com/gopi-dev/gopi/core/models"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/core/tools"
	"github.com/gopi-dev/gopi/internal/fanout"
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

// Host is one session runtime: pi's AgentSession. It implements
// [api.Server]; the wire dialects call it and receive its events through
// [Host.Subscribe] and its questions through the client given to
// [Host.Bind].
type Host struct {
	opts  Options
	agent *agent.Agent
	// cp are the session's checkpoints of the project's files.
	cp *checkpoints.State
	// startContinue restarts the agent after a retry's wait: the agent's
	// StartContinue, replaced by tests that make the restart fail.
	startContinue func(context.Context) (func(), error)

	ctx    context.Context // lives until Close; runs derive from it
	cancel context.CancelFunc
	runs   sync.WaitGroup // prompt runs started by Prompt

	subs fanout.Fanout[api.Event] // the event subscribers (Subscribe)
	// run is the prompt in progress: its run plus the retries and
	// compactions that follow it, and the messages held for a point of it
	// (core/host/run).
	run *run.Run

	mu    sync.Mutex // guards the fields below, through skills
	store *session.Store
	// sections are the system prompt's named parts, which system
	// messages record (see withSystem).
	sections llm.Sections
	// promptInputs are the options gopi's own prompt is built from (not
	// what a run's before_agent_start made of them), as JSON, for
	// extensions' ctx.getSystemPromptOptions(); nil without extensions.
	promptInputs json.RawMessage
	// saveFailing: a session write failed and none has worked since.
	saveFailing bool
	bashCancel  context.CancelFunc // the running bash command's, or nil

	templates []resources.Template
	skills    []resources.Skill

	clientMu sync.Mutex // guards client
	client   api.Client // receives the host's UI requests (Bind)

	// tools is the pipeline every tool call goes through (gate); approval
	// is its approval stage.
	tools    *gate.Pipeline
	approval *gate.Approval
	roots    projectRoots // the project's directories besides Cwd (roots.go)

	ext extState // the extensions' tools and dialogs (extensions.go)
	// toolPasses keeps applyExtensionTools from running twice at once.
	toolPasses passes
	extWG      sync.WaitGroup // extension work the host started
	// subscribed closes at the first Subscribe: extension errors from
	// loading wait for someone to hear them.
	subscribed     chan struct{}
	subscribedOnce sync.Once
	extStop        chan struct{} // closes when the extensions stop
	extReady       chan struct{} // closes once they loaded and saw session_start

	// mcp is the MCP room: the servers' connections and registrations,
	// what the client heard of them, tool_search (core/host/mcpstate).
	mcp *mcpstate.State
	// codemode is pi's codemode tool (nil without Options.Codemode).
	codemode *codemode.Codemode
	// nested records the nested calls of the calls in progress.
	nested nestedCalls
	// notes: the next request's declared tools get codemode's note
	// (requestTools decides, toolSpec reads).
	notes atomic.Bool

	diagMu sync.Mutex // guards diagnosed
	// diagnosed holds the diagnostics already reported (see diagnose).
	diagnosed map[string]bool
}

// New builds a host and restores the session's conversation, model and
// thinking level.
func New(opts Options) (*Host, error) {
	if opts.Registry == nil {
		return nil, errors.New("host: a model registry is required")
	}
	if opts.Providers == nil {
		opts.Providers = DefaultProviders()
	}
	if opts.Store == nil {
		opts.Store = session.InMemory(opts.Cwd)
	}
	if opts.Report == nil {
		opts.Report = func(error) {}
	}
	h := &Host{opts: opts, store: opts.Store}
	h.roots.set(opts.AdditionalDirs)
	if opts.Sandbox != nil && len(opts.AdditionalDirs) > 0 {
		opts.Sandbox.SetRoots(opts.AdditionalDirs)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.subscribed, h.extStop, h.extReady = make(chan struct{}), make(chan struct{}), make(chan struct{})
	h.startContinue = func(ctx context.Context) (func(), error) { return h.agent.StartContinue(ctx) }
	h.cp = h.checkpointState()
	h.tools = h.toolPipeline()
	h.mcp = h.mcpState()
	h.addCodemode()
	opts = h.opts
	reg := opts.Registry
	h.agent = agent.New(agent.Config{
		BeforeToolCall: h.tools.Admit,
		ToolStarting:   h.toolStarting,
		AfterToolCall:  h.afterToolCall,
		// The run's hooks are the run's (core/host/run), built below.
		TransformContext: func(ctx context.Context, msgs []llm.Message) []llm.Message {
			return h.run.TransformContext(ctx, msgs)
		},
		FinishMessage: func(ctx context.Context, msg llm.Message) llm.Message { return h.run.FinishMessage(ctx, msg) },
		TurnBoundary:  h.turnBoundary,
		AfterTurnEnd:  func(ctx context.Context) []llm.Message { return h.run.AfterTurnEnd(ctx) },
		RequestTools:  h.requestTools,
		ToolSpec:      h.toolSpec,
		OnQueueChange: h.queueChanged,
		SteeringMode:  queueMode(opts.Settings.SteeringMode),
		FollowUpMode:  queueMode(opts.Settings.FollowUpMode),
		Providers:     opts.Providers.Lookup,
		GetAuth: func(ctx context.Context, m *llm.Model) (llm.Auth, error) {
			if m.API == llm.APIFaux {
				return llm.Auth{}, nil
			}
			return reg.RequestAuth(ctx, m)
		},
		ConvertToLLM: session.ConvertToLLM,
		// pi 0.73.1 lets the current message's tool calls finish before a
		// steering message is delivered; gopi does the same.
		SteerKeepsTools: true,
		Report:          opts.Report,
	})
	h.run = run.New(run.Config{
		Ctx: h.ctx, Agent: h.agent, Host: runHost{h}, Session: runSession{h}, Hooks: h.hooks(),
		Restart:    func(ctx context.Context) (func(), error) { return h.startContinue(ctx) },
		Retry:      opts.Settings.retrySettings(),
		Compaction: opts.Settings.compactionSettings(),
	})
	h.agent.Subscribe(h.onAgentEvent)

	ctx := opts.Store.Context()
	h.agent.ReplaceMessages(ctx.Messages)
	model := opts.Model
	unrestored := false
	if model == nil && ctx.Model != nil {
		// A resumed conversation goes on with its model, when it is known
		// and has credentials; else the startup default, said once.
		if m, ok := reg.Find(ctx.Model.Provider, ctx.Model.ModelID); ok && reg.HasAuth(&m) {
			model = &m
		} else {
			unrestored = len(ctx.Messages) > 0
		}
	}
	thinking := opts.Thinking
	if thinking == "" && ctx.ThinkingLevelSet {
		thinking = ctx.ThinkingLevel
	}
	if model == nil {
		// The --models scope only chooses for a new conversation, as in
		// pi.
		m, l, err := h.freshChoice(opts.Settings, len(ctx.Messages) == 0)
		if err != nil {
			return nil, err
		}
		model = m
		if thinking == "" {
			thinking = l
		}
	}
	if thinking == "" {
		thinking = h.defaultThinkingFor(model)
	}
	if unrestored {
		h.diagnose(errCouldNotRestore(ctx.Model.Provider, ctx.Model.ModelID, model))
	}
	if err := h.setModel(model, thinking); err != nil {
		return nil, err
	}
	h.agent.SetTools(opts.Tools)
	h.loadResources()
	h.refreshSystemPrompt()
	// The manager is there before the extensions, which may add servers.
	h.mcp.Start()
	h.startExtensions()
	return h, nil
}

// setModel switches model and level and records both in the session when
// they change.
func (h *Host) setModel(m *llm.Model, level llm.ThinkingLevel) error {
	level = llm.ClampThinking(m, level)
	prev := h.agent.ThinkingLevel()
	h.agent.SetModel(m)
	h.agent.SetThinkingLevel(level)
	store := h.Store()
	ctx := store.Context()
	fresh := store.Len() == 0
	if !fresh && prev != level {
		h.emit(api.ThinkingLevelChanged{Level: string(level)})
	}
	if prev != level {
		h.extEvent(ext.ThinkingLevelSelectEvent{Level: level, PreviousLevel: prev})
	}
	if fresh {
		// A fresh session starts with both, as pi's files do.
		if _, err := store.AppendModelChange(m.Provider, m.ID); err != nil {
			return h.saved(store, "the model", err)
		}
		if _, err := store.AppendThinkingLevelChange(level); err != nil {
			return h.saved(store, "the thinking level", err)
		}
		return nil
	}
	if ctx.Model == nil || ctx.Model.Provider != m.Provider || ctx.Model.ModelID != m.ID {
		if _, err := store.AppendModelChange(m.Provider, m.ID); err != nil {
			return h.saved(store, "the model change", err)
		}
	}
	if ctx.ThinkingLevel != level {
		if _, err := store.AppendThinkingLevelChange(level); err != nil {
			return h.saved(store, "the thinking level", err)
		}
	}
	return nil
}

// refreshSystemPrompt builds gopi's own system prompt and returns what it
// was built from, as a value and, with extensions, as the JSON they are
// shown (nil without).
func (h *Host) refreshSystemPrompt() (promptOptions, json.RawMessage) {
	o := h.promptOptions()
	h.applyPromptOptions(o)
	if h.exts().Empty() {
		return o, nil
	}
	inputs, _ := json.Marshal(o)
	h.mu.Lock()
	h.promptInputs = inputs
	h.mu.Unlock()
	return o, inputs
}

// onAgentEvent persists finished messages and forwards every event.
func (h *Host) onAgentEvent(ev agent.Event) {
	switch ev.Type {
	case agent.EventAgentStart, agent.EventAgentEnd:
		// The agent still counts as streaming for a moment after it
		// delivered agent_end; a client that saw agent_end must be able
		// to prompt at once, so the prompt settles (see settle).
		h.run.AgentEvent(ev.Type == agent.EventAgentEnd)
	}
	if ev.Type == agent.EventAgentEnd {
		ev.WillRetry = h.run.WillContinue(ev.Messages)
	}
	if ev.Type == agent.EventMessageEnd && ev.Message != nil {
		h.mu.Lock()
		store := h.store
		h.mu.Unlock()
		id, err := store.AppendMessage(ev.Message)
		if h.saved(store, "a message", err) == nil {
			if _, ok := ev.Message.(*llm.UserMessage); ok {
				h.cp.UserMessage(store, id)
			}
		}
	}
	h.emit(ev)
}

// toolStarting passes a call about to run on to Options.ToolStarting.
func (h *Host) toolStarting(_ context.Context, call agent.Call) {
	if f := h.opts.ToolStarting; f != nil {
		f(call.ID)
	}
}

func (h *Host) emit(ev api.Event) {
	h.subs.Emit(ev)
	h.notifyExtensions(ev)
}

// Subscribe registers f for every event; the returned func removes it.
// The first subscriber also hears, at once, of each MCP server whose
// state changed since the session started (mcp_server_state).
func (h *Host) Subscribe(f func(api.Event)) func() {
	unsubscribe := h.subs.Subscribe(f)
	h.subscribedOnce.Do(func() {
		close(h.subscribed)
		// What the MCP servers did before anyone listened.
		h.mcp.Subscribed()
	})
	return unsubscribe
}

// Agent exposes the agent (for modes that drive it directly).
func (h *Host) Agent() *agent.Agent { return h.agent }

// Store returns the current session.
func (h *Host) Store() *session.Store {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.store
}

// Run sends one user message and waits for the run to end, without the
// retries and compactions a prompt's drive adds.
func (h *Host) Run(ctx context.Context, text string, images []llm.ImageContent) error {
	runIt, err := h.run.BeginDrive(func() (func(), error) {
		return h.agent.StartPrompt(ctx, llm.UserText(text, images...))
	})
	if err != nil {
		return err
	}
	defer func() { close(h.run.EndDrive()) }()
	runIt()
	return nil
}

// LastAssistantText is the text of the latest assistant message that has
// some, trimmed, and whether there is one. Aborted and failed replies are
// skipped, as pi 1.6 skips them (pi 1.5 only an aborted one that had no
// content).
func (h *Host) LastAssistantText() (string, bool) {
	msgs := h.agent.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		a, ok := msgs[i].(*llm.AssistantMessage)
		if !ok || a.StopReason == llm.StopAborted || a.StopReason == llm.StopError {
			continue
		}
		if text := strings.TrimSpace(a.Content.Text()); text != "" {
			return text, true
		}
	}
	return "", false
}

// LastAssistant is the latest assistant message, or nil.
func (h *Host) LastAssistant() *llm.AssistantMessage { return run.LastAssistant(h.agent.Messages()) }

// Close aborts any run and bash command and waits for them to finish;
// the session file is complete when it returns.
func (h *Host) Close(ctx context.Context) error {
	h.stopExtensions()
	h.cancel()
	h.agent.Abort()
	h.mu.Lock()
	if h.bashCancel != nil {
		h.bashCancel()
	}
	h.mu.Unlock()
	h.run.CancelPauses()
	done := make(chan struct{})
	go func() {
		h.runs.Wait()
		close(done)
	}()
	// The MCP servers stop however the wait ends: none outlives the host.
	defer h.mcp.Close()
	if h.codemode != nil {
		defer func() { _ = h.codemode.Close() }()
	}
	select {
	case <-done:
		h.cp.Close()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("closing the session: %w", ctx.Err())
	}
}

// defaultThinking is the startup level for the current model.
func (h *Host) defaultThinking() llm.ThinkingLevel { return h.defaultThinkingFor(h.agent.Model()) }

// defaultThinkingFor is the startup level for model m (see thinkingFor).
func (h *Host) defaultThinkingFor(m *llm.Model) llm.ThinkingLevel {
	return thinkingFor(h.opts.Settings, m)
}

// thinkingFor is the startup level for model m under settings s:
// settings.json's modelThinkingLevels entry for it, else
// defaultThinkingLevel, else medium.
func thinkingFor(s Settings, m *llm.Model) llm.ThinkingLevel {
	if m != nil {
		if l, err := llm.ParseThinkingLevel(s.ModelThinkingLevels[m.Provider+"/"+m.ID]); err == nil && l != "" {
			return l
		}
	}
	if l, err := llm.ParseThinkingLevel(s.DefaultThinkingLevel); err == nil && l != "" {
		return l
	}
	return models.DefaultThinking
}

// runHost is what the run tells the host: the events, and the problems
// it survived.
type runHost struct{ h *Host }

func (r runHost) Emit(ev api.Event) { r.h.emit(ev) }
func (r runHost) Report(err error)  { r.h.opts.Report(err) }

func (r runHost) HookFailed(event string, err error) { r.h.extFailed(event, err) }

// runSession is the session's side of the run (run.Session).
type runSession struct{ h *Host }

func (r runSession) Compact(ctx context.Context, reason, instructions string) (*api.CompactionResult, error) {
	return r.h.compactNow(ctx, reason, instructions)
}

func (r runSession) LastCompaction() (int64, bool) { return latestCompaction(r.h.Store().Path()) }

func (r runSession) CompactFailed(reason string, aborted, willRetry bool, errorMessage *string) {
	r.h.extEvent(ext.SessionCompactFailedEvent{Reason: reason, Aborted: aborted, WillRetry: willRetry, ErrorMessage: errorMessage})
}

func (r runSession) AppendCustom(msg *llm.CustomMessage) { r.h.appendCustom(msg) }

func (r runSession) BeforeSettle() func() { return r.h.beforeSettle() }

func (r runSession) Ending() {
	h := r.h
	// A bash command the user ran during the run joins the transcript
	// now, so it is saved even if no prompt follows (pi holds it for the
	// next prompt and loses it when none comes).
	h.flushPendingBash()
	h.run.FlushCustom()
	// Extensions' handlers of the run's events finish first (a dialog an
	// agent_end handler opened is answered), as pi awaits them.
	h.drainExtensions()
}
