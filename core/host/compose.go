package host

// This file composes the host: New wires the agent, the run, the tool
// pipeline and the rooms to one another; Close takes them down; the
// adapters are what the run and the agent call back.

import (
	"context"
	"errors"
	"fmt"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/resources"
	"github.com/gopi-dev/gopi/core/session"
)

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
	h := &Host{opts: opts}
	h.diagnostics.report = opts.Report
	h.log = &transcript{report: opts.Report, emit: h.emit, store: opts.Store}
	h.roots.set(opts.AdditionalDirs)
	if opts.Sandbox != nil && len(opts.AdditionalDirs) > 0 {
		opts.Sandbox.SetRoots(opts.AdditionalDirs)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.subscribed = make(chan struct{})
	h.ext = &extRoom{h: h, m: opts.Extensions, stopped: make(chan struct{}), loaded: make(chan struct{})}
	h.startContinue = func(ctx context.Context) (func(), error) { return h.agent.StartContinue(ctx) }
	if !opts.Extensions.Empty() {
		h.toExtensions = h.ext.notify
	}
	h.cp = h.checkpointState()
	h.tools = h.toolPipeline()
	h.mcp = h.mcpState()
	h.addCodemode()
	h.prompts = newPromptRoom(promptConfig{
		cwd: opts.Cwd, agentDir: opts.AgentDir, custom: opts.SystemPrompt, appended: opts.AppendSystemPrompt,
		contextFiles: opts.ContextFiles, untrusted: opts.UntrustedProject,
		noSkills: opts.NoSkills, noTemplates: opts.NoPromptTemplates, keepInputs: !opts.Extensions.Empty(),
		tools:   func() ([]resources.ToolLine, map[string][]string) { return h.toolset.promptTools() },
		servers: h.mcp.ServerLines, roots: h.roots.get,
		setPrompt: func(s string) { h.agent.SetSystemPrompt(s) },
		report:    opts.Report, emit: h.emit,
	}, opts.SkillPaths, opts.TemplatePaths)
	h.toolset = newToolSet(toolSetConfig{
		builtins: h.opts.AllTools, enabled: h.opts.Tools, selection: h.opts.ToolSelection,
		exts: h.opts.Extensions, state: h.ext.snapshot, mcp: h.mcp,
		setTools: func(ts []agent.Tool) { h.agent.SetTools(ts) },
		changed:  func() { h.prompts.refresh() },
	})
	opts = h.opts
	reg := opts.Registry
	h.agent = agent.New(agent.Config{
		BeforeToolCall: h.tools.Admit,
		ToolStarting:   h.opts.toolStarting,
		AfterToolCall:  h.afterToolCall,
		// The run's hooks are the run's (core/host/run), built below.
		TransformContext: func(ctx context.Context, msgs []llm.Message) []llm.Message {
			return h.run.TransformContext(ctx, msgs)
		},
		FinishMessage: func(ctx context.Context, msg llm.Message) llm.Message { return h.run.FinishMessage(ctx, msg) },
		TurnBoundary:  h.ext.turnBoundary,
		AfterTurnEnd:  func(ctx context.Context) []llm.Message { return h.run.AfterTurnEnd(ctx) },
		RequestTools:  h.codemode.requestTools,
		ToolSpec:      h.codemode.toolSpec,
		OnQueueChange: func(steering, followUp []llm.Message) { h.emit(queueUpdate(steering, followUp)) },
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
	h.tells = runHost{emit: h.emit, report: opts.Report, hookFailed: h.ext.failed}
	h.run = run.New(run.Config{
		Ctx: h.ctx, Agent: h.agent, Host: h.tells, Session: runSession{h}, Hooks: h.ext.hooks(),
		Restart:    func(ctx context.Context) (func(), error) { return h.startContinue(ctx) },
		Retry:      opts.Settings.retrySettings(),
		Compaction: opts.Settings.compactionSettings(),
	})
	h.log.agent, h.log.run = h.agent, h.run
	h.models = &modelRoom{agent: h.agent, log: h.log, opts: &h.opts, emit: h.emit, event: h.ext.event}
	h.system = &systemRecord{prompts: h.prompts, codemode: h.codemode, mcp: h.mcp, agent: h.agent, log: h.log}
	h.starter = &starter{
		ctx: h.ctx, runs: &h.runs, agent: h.agent, run: h.run, registry: opts.Registry, mcp: h.mcp, cp: h.cp,
		ext: h.ext, prompts: h.prompts, system: h.system, log: h.log, runHost: h.tells, report: opts.Report,
	}
	h.shell = &shell{ctx: h.ctx, dir: opts.Cwd, settings: opts.Settings, emit: h.emit, userBash: h.ext.userBash, log: h.log}
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
		m, l, err := h.opts.freshChoice(opts.Settings, len(ctx.Messages) == 0)
		if err != nil {
			return nil, err
		}
		model = m
		if thinking == "" {
			thinking = l
		}
	}
	if thinking == "" {
		thinking = h.opts.defaultThinkingFor(model)
	}
	if unrestored {
		h.diagnostics.add(errCouldNotRestore(ctx.Model.Provider, ctx.Model.ModelID, model))
	}
	if err := h.models.set(model, thinking); err != nil {
		return nil, err
	}
	h.agent.SetTools(opts.Tools)
	h.prompts.load()
	h.prompts.refresh()
	// The manager is there before the extensions, which may add servers.
	h.mcp.Start()
	h.ext.start()
	return h, nil
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
		store, id := h.log.finished(ev.Message)
		if _, ok := ev.Message.(*llm.UserMessage); ok && id != "" {
			h.cp.UserMessage(store, id)
		}
	}
	h.emit(ev)
}

// Close aborts any run and bash command and waits for them to finish;
// the session file is complete when it returns.
func (h *Host) Close(ctx context.Context) error {
	h.ext.stop()
	h.cancel()
	h.agent.Abort()
	h.shell.abort()
	h.run.CancelPauses()
	done := make(chan struct{})
	go func() {
		h.runs.Wait()
		close(done)
	}()
	// The MCP servers stop however the wait ends: none outlives the host.
	defer h.mcp.Close()
	defer h.codemode.close()
	select {
	case <-done:
		h.cp.Close()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("closing the session: %w", ctx.Err())
	}
}

// runSession is the session's side of the run (run.Session).
type runSession struct{ h *Host }

func (r runSession) Compact(ctx context.Context, reason, instructions string) (*api.CompactionResult, error) {
	return r.h.compactNow(ctx, reason, instructions)
}

func (r runSession) LastCompaction() (int64, bool) { return latestCompaction(r.h.Store().Path()) }

func (r runSession) CompactFailed(reason string, aborted, willRetry bool, errorMessage *string) {
	r.h.ext.event(ext.SessionCompactFailedEvent{Reason: reason, Aborted: aborted, WillRetry: willRetry, ErrorMessage: errorMessage})
}

func (r runSession) AppendCustom(msg *llm.CustomMessage) { r.h.log.addCustom(msg) }

func (r runSession) BeforeSettle() func() { return r.h.ext.beforeSettle() }

func (r runSession) Ending() {
	h := r.h
	// A bash command the user ran during the run joins the transcript
	// now, so it is saved even if no prompt follows (pi holds it for the
	// next prompt and loses it when none comes).
	h.log.flushBash()
	h.run.FlushCustom()
	// Extensions' handlers of the run's events finish first (a dialog an
	// agent_end handler opened is answered), as pi awaits them.
	h.ext.drain()
}

// afterToolCall is the agent's AfterToolCall: the pipeline's stages, then
// the record of the call's nested calls goes on its result.
func (h *Host) afterToolCall(ctx context.Context, call agent.Call, res agent.Result) agent.Result {
	res = h.tools.Finish(ctx, call, res)
	res.NestedCalls = h.nested.take(call.ID)
	return res
}
