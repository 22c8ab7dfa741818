package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/internal/fanout"
)

// QueueMode says how many queued messages one interruption point delivers
// (the wire values of set_steering_mode and set_follow_up_mode).
type QueueMode string

const (
	QueueAll        QueueMode = "all"
	QueueOneAtATime QueueMode = "one-at-a-time"
)

// ToolExecution says how the tool calls of one assistant message run.
type ToolExecution string

const (
	// ToolsParallel prepares the calls in order, then runs the allowed ones
	// at once; tool_execution_end follows completion order, the toolResult
	// messages follow call order.
	ToolsParallel ToolExecution = "parallel"
	// ToolsSequential prepares, runs and finishes each call before the next.
	ToolsSequential ToolExecution = "sequential"
)

// Config wires an [Agent] to providers, credentials and hooks. Only
// Providers is required.
type Config struct {
	// Providers returns the provider for a model's API family.
	Providers func(api string) (llm.Provider, error)
	// GetAuth resolves the key and extra headers for each model call
	// (keys may expire during a long tool phase). Nil means none; an error
	// fails the turn with an error assistant message.
	GetAuth func(ctx context.Context, model *llm.Model) (llm.Auth, error)

	// ConvertToLLM turns the transcript into what a model understands.
	// Nil keeps user, assistant and toolResult messages and drops the rest.
	ConvertToLLM func([]llm.Message) []llm.Message
	// TransformContext, if set, rewrites the transcript before ConvertToLLM
	// on every model call (extensions, pruning). It must not modify its
	// argument in place.
	TransformContext func(ctx context.Context, msgs []llm.Message) []llm.Message

	// BeforeToolCall runs after a call's arguments passed the schema check
	// and before the tool runs; call.Args are the checked arguments, and
	// the tool runs with whatever the hook leaves there (extensions may
	// rewrite a call). Blocking turns the call into an error result
	// carrying reason. It is the extensions' tool_call and the approval
	// gate; it must return when ctx is cancelled.
	BeforeToolCall func(ctx context.Context, call *Call) (block bool, reason string)
	// ToolStarting, if set, is told as each call's tool is about to run:
	// after BeforeToolCall let the call through (so after any approval
	// question), on the goroutine that runs it, before its first update.
	// A call that is blocked, skipped or fails its checks never gets here:
	// tool_execution_start comes before all of that.
	ToolStarting func(ctx context.Context, call Call)
	// AfterToolCall may replace a finished call's result (content, details,
	// structured content, error flag) before it is reported.
	AfterToolCall func(ctx context.Context, call Call, res Result) Result

	// FinishMessage, if set, sees each message of a run as it ends, before
	// message_end is reported and the message joins the transcript; a
	// returned message of the same type takes its place (extensions'
	// message_end). It runs on the run goroutine.
	FinishMessage func(ctx context.Context, msg llm.Message) llm.Message

	// TurnBoundary, if set, runs when a turn's assistant message and tool
	// results have joined the transcript, before turn_end is reported
	// (extensions' actionable turn_end). A non-nil context replaces the
	// run's transcript (entries were added to the session); more asks for
	// one more model request, which tool results, steering or a follow-up
	// satisfy when they already cause one. It runs on the run goroutine.
	TurnBoundary func(ctx context.Context, msg *llm.AssistantMessage, results []*llm.ToolResultMessage) (context []llm.Message, more bool)

	// AfterTurnEnd, if set, runs after turn_end has been reported, on the
	// run goroutine; a non-nil context replaces the run's transcript
	// (messages held during the turn were added to the session).
	AfterTurnEnd func(ctx context.Context) (context []llm.Message)

	// RequestTools, if set, gives the tools of each model request from
	// the run's tools and the transcript the request is built from, so
	// that a tool call can declare more tools for the next request (MCP's
	// tool_search). The tools it returns can also be called. It runs on
	// the run goroutine and must not keep or change its arguments.
	RequestTools func(ctx context.Context, msgs []llm.Message, tools []Tool) []Tool
	// ToolSpec, if set, is the declaration a request sends for a tool of
	// RequestTools' (the host's notes in a description); nil sends the
	// tool's Spec. It runs on the run goroutine.
	ToolSpec func(Tool) llm.ToolSpec

	// Options is the template of every model call; the agent fills in the
	// API key and the thinking level.
	Options llm.Options

	// SteeringMode and FollowUpMode default to one-at-a-time.
	SteeringMode QueueMode
	FollowUpMode QueueMode
	// ToolExecution defaults to parallel.
	ToolExecution ToolExecution
	// SteerKeepsTools makes a queued steering message wait until every tool
	// call of the current assistant message has run, as pi 0.73.1 does. By
	// default, as the RPC protocol describes steer, calls not yet started
	// when a steering message is queued are skipped with an error result.
	SteerKeepsTools bool

	// OnQueueChange, if set, is called with copies of both queues after
	// either changed (a message queued, delivered or cleared). It runs
	// outside the agent's locks.
	OnQueueChange func(steering, followUp []llm.Message)

	// Report receives broken invariants the loop survived: a subscriber,
	// hook, tool or provider that panicked. It may be called from any
	// goroutine. Nil drops them.
	Report func(error)
}

// Agent runs the agent loop over a transcript it owns. It is safe for
// concurrent use: Abort, Steer, FollowUp and the getters may be called from
// any goroutine while a run streams.
type Agent struct {
	cfg       Config
	validator validator

	mu sync.Mutex // guards the fields below
	// settings read at the start of each run
	systemPrompt string
	model        *llm.Model
	thinking     llm.ThinkingLevel
	tools        []Tool
	options      llm.Options
	toolExec     ToolExecution
	// transcript and run state
	messages     []llm.Message
	running      bool
	streamingMsg llm.Message
	pendingTools []string
	errorMessage string
	cancel       context.CancelCauseFunc // cancels the active run
	idle         chan struct{}           // closed when the active run ends

	queueMu      sync.Mutex // guards the queues and their modes
	steerQ       []llm.Message
	followUpQ    []llm.Message
	steerMode    QueueMode
	followUpMode QueueMode

	subs fanout.Fanout[Event] // the sinks, in subscription order
}

// New returns an idle agent with an empty transcript and thinking off.
func New(cfg Config) *Agent {
	if cfg.ConvertToLLM == nil {
		cfg.ConvertToLLM = DefaultConvertToLLM
	}
	a := &Agent{
		cfg:          cfg,
		thinking:     llm.ThinkingOff,
		options:      cfg.Options,
		toolExec:     cfg.ToolExecution,
		steerMode:    cfg.SteeringMode,
		followUpMode: cfg.FollowUpMode,
	}
	if a.toolExec == "" {
		a.toolExec = ToolsParallel
	}
	if a.steerMode == "" {
		a.steerMode = QueueOneAtATime
	}
	if a.followUpMode == "" {
		a.followUpMode = QueueOneAtATime
	}
	return a
}

// DefaultConvertToLLM keeps the messages a model understands: user,
// assistant and toolResult.
func DefaultConvertToLLM(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.MessageRole() {
		case llm.RoleUser, llm.RoleAssistant, llm.RoleToolResult:
			out = append(out, m)
		}
	}
	return out
}

// Subscribe adds a sink for every event of every run, called after the
// agent's own state reflects the event. Events carry shared messages:
// sinks must not modify them. The returned func removes the sink.
func (a *Agent) Subscribe(s Sink) (unsubscribe func()) {
	return a.subs.Subscribe(func(ev Event) { a.deliver(s, ev) })
}

func (a *Agent) report(format string, args ...any) {
	if a.cfg.Report != nil {
		a.cfg.Report(fmt.Errorf(format, args...))
	}
}

// emit updates the agent's state for ev, then hands ev to every sink in
// subscription order. Only the run goroutine calls it.
func (a *Agent) emit(ev Event) {
	a.mu.Lock()
	switch ev.Type {
	case EventMessageStart, EventMessageUpdate:
		a.streamingMsg = ev.Message
	case EventMessageEnd:
		a.streamingMsg = nil
		a.messages = append(a.messages, ev.Message)
	case EventToolExecutionStart:
		a.pendingTools = append(a.pendingTools, ev.ToolCallID)
	case EventToolExecutionEnd:
		a.pendingTools = slices.DeleteFunc(a.pendingTools, func(id string) bool { return id == ev.ToolCallID })
	case EventTurnEnd:
		if am, ok := ev.Message.(*llm.AssistantMessage); ok && am.ErrorMessage != "" {
			a.errorMessage = am.ErrorMessage
		}
	case EventAgentEnd:
		a.streamingMsg = nil
	}
	a.mu.Unlock()
	a.subs.Emit(ev)
}

func (a *Agent) deliver(s Sink, ev Event) {
	defer func() {
		if v := recover(); v != nil {
			a.reportPanic("agent: subscriber panicked on %s: %v", ev.Type, v)
		}
	}()
	s(ev)
}

// --- settings ---

// SetSystemPrompt sets the system prompt of future model calls.
func (a *Agent) SetSystemPrompt(p string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.systemPrompt = p
}

// SystemPrompt returns the current system prompt.
func (a *Agent) SystemPrompt() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.systemPrompt
}

// SetModel sets the model of future runs.
func (a *Agent) SetModel(m *llm.Model) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.model = m
}

// Model returns the current model, nil if none was set.
func (a *Agent) Model() *llm.Model {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.model
}

// SetThinkingLevel sets the requested reasoning level; each model call
// clamps it to what the model supports.
func (a *Agent) SetThinkingLevel(l llm.ThinkingLevel) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.thinking = l
}

// ThinkingLevel returns the requested reasoning level.
func (a *Agent) ThinkingLevel() llm.ThinkingLevel {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.thinking
}

// SetTools replaces the tools of future runs.
func (a *Agent) SetTools(tools []Tool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tools = slices.Clone(tools)
}

// Tools returns the current tools.
func (a *Agent) Tools() []Tool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.tools)
}

// SetOptions replaces the template of future model calls (session id,
// headers, max tokens, cache retention).
func (a *Agent) SetOptions(o llm.Options) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.options = o
}

// Options returns the template of model calls.
func (a *Agent) Options() llm.Options {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.options
}

// SetToolExecution sets how future tool batches run.
func (a *Agent) SetToolExecution(m ToolExecution) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.toolExec = m
}

// --- transcript ---

// Messages returns a copy of the transcript.
func (a *Agent) Messages() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.messages)
}

// MessageCount is how many messages the transcript holds, without
// copying it.
func (a *Agent) MessageCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.messages)
}

// ReplaceMessages replaces the transcript (session load, compaction, fork).
func (a *Agent) ReplaceMessages(msgs []llm.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.messages = slices.Clone(msgs)
}

// AppendMessage adds a message to the transcript without a run (a user's
// bash execution). A run in progress does not see it.
func (a *Agent) AppendMessage(m llm.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.messages = append(a.messages, m)
}

// Reset clears the transcript, the run state and both queues.
func (a *Agent) Reset() {
	a.mu.Lock()
	a.messages = nil
	a.errorMessage = ""
	a.mu.Unlock()
	a.ClearQueues()
}

// --- run state ---

// IsStreaming reports whether a run is active (until its agent_end has
// been delivered).
func (a *Agent) IsStreaming() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

// StreamingMessage returns the message being streamed, nil between
// messages.
func (a *Agent) StreamingMessage() llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streamingMsg
}

// PendingToolCalls returns the ids of the tool calls that started and have
// not ended.
func (a *Agent) PendingToolCalls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.pendingTools)
}

// ErrorMessage returns the error of the latest failed or aborted assistant
// turn, "" if the latest run had none.
func (a *Agent) ErrorMessage() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.errorMessage
}

// Abort cancels the active run with cause [ErrAborted]: the model stream
// and running tools stop, and the run still ends with message_end,
// turn_end and agent_end, the assistant message "aborted". No-op when idle.
func (a *Agent) Abort() {
	a.mu.Lock()
	cancel := a.cancel
	a.mu.Unlock()
	if cancel != nil {
		cancel(ErrAborted)
	}
}

// WaitForIdle blocks until no run is active or ctx is done.
func (a *Agent) WaitForIdle(ctx context.Context) error {
	a.mu.Lock()
	idle := a.idle
	a.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// --- queues ---

// Steer queues a message for the next interruption point of the active
// run: after the current tool calls (see [Config.SteerKeepsTools]), before
// the next model call.
func (a *Agent) Steer(m llm.Message) {
	a.queueMu.Lock()
	a.steerQ = append(a.steerQ, m)
	a.queueMu.Unlock()
	a.queueChanged()
}

// FollowUp queues a message to run when the agent would otherwise stop.
func (a *Agent) FollowUp(m llm.Message) {
	a.queueMu.Lock()
	a.followUpQ = append(a.followUpQ, m)
	a.queueMu.Unlock()
	a.queueChanged()
}

// ClearQueues drops every queued steering and follow-up message and
// returns them.
func (a *Agent) ClearQueues() (steering, followUp []llm.Message) {
	a.queueMu.Lock()
	steering, followUp = a.steerQ, a.followUpQ
	a.steerQ, a.followUpQ = nil, nil
	a.queueMu.Unlock()
	if len(steering)+len(followUp) > 0 {
		a.queueChanged()
	}
	return steering, followUp
}

// queueChanged tells Config.OnQueueChange about the queues now.
func (a *Agent) queueChanged() {
	if a.cfg.OnQueueChange == nil {
		return
	}
	steering, followUp := a.Queued()
	a.cfg.OnQueueChange(steering, followUp)
}

// Queued returns copies of the queued steering and follow-up messages.
func (a *Agent) Queued() (steering, followUp []llm.Message) {
	a.queueMu.Lock()
	defer a.queueMu.Unlock()
	return slices.Clone(a.steerQ), slices.Clone(a.followUpQ)
}

// QueueCounts returns how many steering and follow-up messages wait.
func (a *Agent) QueueCounts() (steering, followUp int) {
	a.queueMu.Lock()
	defer a.queueMu.Unlock()
	return len(a.steerQ), len(a.followUpQ)
}

// SetSteeringMode sets how many steering messages one interruption
// delivers.
func (a *Agent) SetSteeringMode(m QueueMode) {
	a.queueMu.Lock()
	defer a.queueMu.Unlock()
	a.steerMode = m
}

// SteeringMode returns the steering queue's mode.
func (a *Agent) SteeringMode() QueueMode {
	a.queueMu.Lock()
	defer a.queueMu.Unlock()
	return a.steerMode
}

// SetFollowUpMode sets how many follow-up messages one stop delivers.
func (a *Agent) SetFollowUpMode(m QueueMode) {
	a.queueMu.Lock()
	defer a.queueMu.Unlock()
	a.followUpMode = m
}

// FollowUpMode returns the follow-up queue's mode.
func (a *Agent) FollowUpMode() QueueMode {
	a.queueMu.Lock()
	defer a.queueMu.Unlock()
	return a.followUpMode
}

func drain(q *[]llm.Message, mode QueueMode) []llm.Message {
	if len(*q) == 0 {
		return nil
	}
	if mode == QueueAll {
		out := *q
		*q = nil
		return out
	}
	out := []llm.Message{(*q)[0]}
	*q = slices.Clone((*q)[1:])
	return out
}

func (a *Agent) drainSteering() []llm.Message {
	a.queueMu.Lock()
	out := drain(&a.steerQ, a.steerMode)
	a.queueMu.Unlock()
	if len(out) > 0 {
		a.queueChanged()
	}
	return out
}

func (a *Agent) drainFollowUp() []llm.Message {
	a.queueMu.Lock()
	out := drain(&a.followUpQ, a.followUpMode)
	a.queueMu.Unlock()
	if len(out) > 0 {
		a.queueChanged()
	}
	return out
}

func (a *Agent) hasSteering() bool {
	a.queueMu.Lock()
	defer a.queueMu.Unlock()
	return len(a.steerQ) > 0
}

// --- starting runs ---

// Prompt runs the agent on msgs (usually one user message) and returns
// once agent_end has been delivered. Model and tool failures end up in the
// transcript as messages; the error is only for misuse ([ErrBusy]).
func (a *Agent) Prompt(ctx context.Context, msgs ...llm.Message) error {
	run, err := a.StartPrompt(ctx, msgs...)
	if err != nil {
		return err
	}
	run()
	return nil
}

// Continue runs the agent from the current transcript without a new
// message (retries). When the transcript ends with an assistant message,
// a queued steering or else follow-up message is prompted instead; with
// none it fails with [ErrContinueFromAssistant].
func (a *Agent) Continue(ctx context.Context) error {
	run, err := a.StartContinue(ctx)
	if err != nil {
		return err
	}
	run()
	return nil
}

// StartPrompt claims the agent for a prompt run and returns the function
// that performs it, so a caller can answer "started" before streaming and
// run it in a goroutine it owns. From StartPrompt's return IsStreaming
// reports true and other runs fail with [ErrBusy]; run must be called
// exactly once.
func (a *Agent) StartPrompt(ctx context.Context, msgs ...llm.Message) (run func(), err error) {
	if len(msgs) == 0 {
		return nil, ErrEmptyPrompt
	}
	r, err := a.claim(ctx)
	if err != nil {
		return nil, err
	}
	return func() { r.execute(slices.Clone(msgs), false) }, nil
}

// StartContinue is [Agent.Continue] split like [Agent.StartPrompt].
func (a *Agent) StartContinue(ctx context.Context) (run func(), err error) {
	r, err := a.claim(ctx)
	if err != nil {
		return nil, err
	}
	if len(r.context) == 0 {
		a.finish(r)
		return nil, ErrNoMessages
	}
	if r.context[len(r.context)-1].MessageRole() != llm.RoleAssistant {
		return func() { r.execute(nil, false) }, nil
	}
	if queued := a.drainSteering(); len(queued) > 0 {
		return func() { r.execute(queued, true) }, nil
	}
	if queued := a.drainFollowUp(); len(queued) > 0 {
		return func() { r.execute(queued, false) }, nil
	}
	a.finish(r)
	return nil, ErrContinueFromAssistant
}

// claim marks the agent busy and snapshots what the run works with.
func (a *Agent) claim(ctx context.Context) (*run, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running {
		return nil, ErrBusy
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	a.running = true
	a.cancel = cancel
	a.idle = make(chan struct{})
	a.streamingMsg = nil
	a.errorMessage = ""
	return &run{
		a:            a,
		ctx:          runCtx,
		cancel:       cancel,
		systemPrompt: a.systemPrompt,
		model:        a.model,
		thinking:     a.thinking,
		baseTools:    slices.Clone(a.tools),
		options:      a.options,
		toolExec:     a.toolExec,
		context:      slices.Clone(a.messages),
	}, nil
}

// finish releases the agent after a run.
func (a *Agent) finish(r *run) {
	r.cancel(context.Canceled)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.running = false
	a.cancel = nil
	a.streamingMsg = nil
	a.pendingTools = nil
	close(a.idle)
	a.idle = nil
}
