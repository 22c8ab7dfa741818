package host

// This file holds the Host's own state, the accessors every room uses
// (the session, the events, the client, the extensions' readiness), and
// the API calls that are no more than those.

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gopi-dev/gopi/core/host/checkpoints"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/host/gate"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/session"
	"github.com/gopi-dev/gopi/internal/fanout"
)

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
	// toExtensions hears every event after the subscribers: the
	// extensions' share (extRoom.notify); nil without extensions.
	toExtensions func(api.Event)
	// run is the prompt in progress: its run plus the retries and
	// compactions that follow it, and the messages held for a point of it
	// (core/host/run).
	run *run.Run

	// log is the session being written (transcript.go); shell runs the
	// user's own commands (bash.go).
	log   *transcript
	shell *shell
	// system records the system prompt and tools in it (system.go).
	system *systemRecord
	// starter starts prompts' runs (start.go).
	starter *starter
	// models sets the model and thinking level (model.go).
	models *modelRoom

	// prompts are the system prompt, its options, the skills and the
	// prompt templates (promptoptions.go).
	prompts *promptRoom

	// client receives the host's UI requests (Bind); nil: none.
	client atomic.Pointer[boundClient]

	// tools is the pipeline every tool call goes through (gate); approval
	// is its approval stage.
	tools    *gate.Pipeline
	approval *gate.Approval
	roots    projectRoots // the project's directories besides Cwd (roots.go)

	// ext is the extensions' room: their life, their hooks and the
	// state they mirror (ext*.go).
	ext *extRoom
	// toolset is every tool, the active ones and their prompt lines
	// (toolset.go).
	toolset *toolSet
	// subscribed closes at the first Subscribe: extension errors from
	// loading wait for someone to hear them.
	subscribed     chan struct{}
	subscribedOnce sync.Once

	// mcp is the MCP room: the servers' connections and registrations,
	// what the client heard of them, tool_search (core/host/mcpstate).
	mcp *mcpstate.State
	// codemode is pi's codemode tool and how the tools are declared
	// beside it (codemode.go).
	codemode *codemodeRoom
	// nested records the nested calls of the calls in progress.
	nested nestedCalls

	// tells is how the run and the rooms' goroutines tell of events and
	// of problems they survived.
	tells runHost
	// diagnostics reports each problem found setting a session up once.
	diagnostics reportOnce
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
func (h *Host) Store() *session.Store { return h.log.current() }

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

func (h *Host) emit(ev api.Event) {
	h.subs.Emit(ev)
	if h.toExtensions != nil {
		h.toExtensions(ev)
	}
}

// busy reports whether a prompt is in progress, as a prompt sees it: the
// moment after agent_end while the run winds down is waited out, not
// counted (a client that saw agent_end may go on at once), and a run
// outside a prompt's drive counts too. Not for what extensions call: their
// handlers run inside that moment, which would wait for them.
func (h *Host) busy(ctx context.Context) bool {
	return h.run.Settle(ctx) || h.agent.IsStreaming()
}

// Bind sets the client that receives the host's UI requests (approval
// questions); nil detaches it, after which questions are answered Deny.
func (h *Host) Bind(c api.Client) {
	if c == nil {
		h.client.Store(nil)
		return
	}
	h.client.Store(&boundClient{c})
}

// boundClient holds the client Bind was given (an interface cannot be
// stored in an atomic.Pointer itself).
type boundClient struct{ api.Client }

// uiClient is the client Bind gave, or nil.
func (h *Host) uiClient() api.Client {
	if b := h.client.Load(); b != nil {
		return b.Client
	}
	return nil
}

// projectRoots are the project's directories besides Cwd: an ACP
// session's additionalDirectories. The approval gate counts files in them
// as the project's, the sandbox lets commands write in them in
// workspace-write, the system prompt names them, and checkpoints record
// them as they record Cwd (see checkpointRoots); relative paths stay
// Cwd's.
type projectRoots struct {
	mu   sync.Mutex // guards dirs
	dirs []string
}

func (r *projectRoots) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.dirs)
}

func (r *projectRoots) set(dirs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dirs = slices.Clone(dirs)
}

// SaveSession writes what the session file still lacks after a failed
// write; a mode calls it before exiting so it can exit non-zero when the
// disk is still full.
func (h *Host) SaveSession() error { return h.log.save() }

// reportOnce reports a problem found while a session is set up (at
// startup, new_session, switch_session, fork, clone) once: the same one
// found again by a later replacement is not repeated, as pi 1.6 reports
// them.
type reportOnce struct {
	report func(error)
	seen   sync.Map // of the problems' texts
}

func (r *reportOnce) add(err error) {
	if _, seen := r.seen.LoadOrStore(err.Error(), true); !seen {
		r.report(err)
	}
}
