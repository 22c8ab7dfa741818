// Package run is the prompt's life: from the run a prompt starts, through
// the retries of transient failures and the compactions around it, to
// agent_settled. It owns the run's phase ([State]), the messages that
// wait for a point of the run ([Held]), the retry and compaction settings
// and counters, and the compact command's steps. The host builds one [Run]
// with [New], giving it only what it uses as the small interfaces below,
// never the host itself, and keeps thin methods of the [api.Server]
// surface that delegate here.
package run

import (
	"context"
	"fmt"
	"sync"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/compaction"
	"github.com/gopi-dev/gopi/core/llm"
)

// Agent is what the run drives: the agent's transcript, model and queues.
type Agent interface {
	Messages() []llm.Message
	ReplaceMessages([]llm.Message)
	Model() *llm.Model
	QueueCounts() (steer, followUp int)
	// StartContinue claims the agent for a run that continues the
	// transcript; the returned func runs it.
	StartContinue(ctx context.Context) (func(), error)
}

// Host is what the run tells the session runtime around it.
type Host interface {
	// Emit sends an event to the client and the extensions.
	Emit(api.Event)
	// Report hands over a problem the run survived.
	Report(error)
	// HookFailed reports an extension hook call that failed (an
	// extension_error).
	HookFailed(event string, err error)
}

// Session is the session's side of a run: its compaction, and what it
// does at a run's points that the run does not own.
type Session interface {
	// Compact summarises the older part of the branch now and makes the
	// agent's transcript the compacted context. It fails with
	// [ErrNothingToCompact], [ErrCompactionRunning] or
	// [ErrCompactionAborted] as their names say.
	Compact(ctx context.Context, reason, instructions string) (*api.CompactionResult, error)
	// LastCompaction is the time (Unix ms) of the newest compaction on the
	// branch, and whether there is one.
	LastCompaction() (int64, bool)
	// CompactFailed is told a compaction ended without a result
	// (session_compact_failed); errorMessage is nil when it was aborted.
	CompactFailed(reason string, aborted, willRetry bool, errorMessage *string)
	// BeforeSettle runs what may continue a prompt that would otherwise
	// be over (agent_before_settle) and returns the run it asked for, or
	// nil.
	BeforeSettle() func()
	// AppendCustom adds an extension's message to the session and the
	// transcript, reported to the client as a message.
	AppendCustom(*llm.CustomMessage)
	// Ending is told the prompt is over, before agent_settled: what
	// waited for the run's end joins the transcript, and the handlers of
	// the run's events finish.
	Ending()
}

// Config is what a [Run] is built from.
type Config struct {
	// Ctx lives until the host closes; the run's work derives from it.
	Ctx     context.Context
	Agent   Agent
	Host    Host
	Session Session
	Hooks   Hooks
	// Restart claims the agent again after a retry's wait, or for
	// messages still queued; nil means Agent.StartContinue.
	Restart    func(context.Context) (func(), error)
	Retry      RetrySettings
	Compaction compaction.Settings
}

// Run is the prompt in progress and what follows it.
type Run struct {
	// State is the run's phase; Held are the messages that wait for a
	// point of it.
	State
	Held

	ctx     context.Context
	agent   Agent
	host    Host
	session Session
	hooks   Hooks
	restart func(context.Context) (func(), error)

	mu sync.Mutex // guards the fields below; never held with State.mu
	// retry and compaction are the settings (set_auto_retry and
	// set_auto_compaction switch them).
	retry      RetrySettings
	compaction compaction.Settings
	// attempt is the retry attempt under way (0: none).
	attempt int
	// overflowTried: one compact-and-retry per overflow.
	overflowTried bool
}

// New is the run of a host.
func New(c Config) *Run {
	r := &Run{ctx: c.Ctx, agent: c.Agent, host: c.Host, session: c.Session, hooks: c.Hooks, restart: c.Restart,
		retry: c.Retry, compaction: c.Compaction}
	if r.restart == nil {
		r.restart = c.Agent.StartContinue
	}
	return r
}

// Fresh readies the counters for a new prompt.
func (r *Run) Fresh() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overflowTried = false
}

// Reset forgets the counters of the session that was replaced.
func (r *Run) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempt, r.overflowTried = 0, false
}

// SetAutoRetry turns retrying transient failures on or off.
func (r *Run) SetAutoRetry(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retry.Enabled = on
}

// SetAutoCompaction turns automatic compaction on or off.
func (r *Run) SetAutoCompaction(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.compaction.Enabled = on
}

// CompactionSettings are the compaction settings now.
func (r *Run) CompactionSettings() compaction.Settings {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.compaction
}

// Drive performs an accepted prompt's run and what follows it: retries of
// transient failures and automatic compaction, which may each continue
// the run. It runs in a goroutine the host owns; it ends the prompt (the
// phase idle, agent_settled sent, the done channel closed) whatever
// happens, and with a nil run it only does that.
func (r *Run) Drive(run func()) {
	defer func() {
		done := r.EndDrive()
		r.session.Ending()
		// pi 1.5's clients wait for agent_settled before they call a
		// prompt done; it comes before the prompt stops counting as in
		// progress, so a client that sees it may prompt at once.
		last := LastAssistant(r.agent.Messages())
		r.host.Emit(api.AgentSettled{Aborted: last != nil && last.StopReason == llm.StopAborted})
		close(done)
	}()
	for run != nil {
		run()
		if run = r.afterRunGuarded(); run == nil {
			run = r.leftoverQueue()
		}
		if run == nil {
			run = r.session.BeforeSettle()
		}
	}
}

// LastAssistant is the latest assistant message of msgs, or nil.
func LastAssistant(msgs []llm.Message) *llm.AssistantMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		if a, ok := msgs[i].(*llm.AssistantMessage); ok {
			return a
		}
	}
	return nil
}

// aborted reports whether the run's last reply was aborted.
func (r *Run) aborted() bool {
	last := LastAssistant(r.agent.Messages())
	return last != nil && last.StopReason == llm.StopAborted
}

// leftoverQueue starts a run for messages queued after the run's last
// check of its queues (a steer that arrived between its last turn and
// the end of the prompt): they would otherwise wait for the next prompt.
// An aborted run leaves them queued.
func (r *Run) leftoverQueue() func() {
	steer, follow := r.agent.QueueCounts()
	if steer+follow == 0 || r.ctx.Err() != nil || r.aborted() {
		return nil
	}
	run, err := r.restart(r.ctx)
	if err != nil {
		r.host.Report(fmt.Errorf("running the messages queued as the prompt ended: %w", err))
		return nil
	}
	return run
}

// Continue claims the agent again for what the prompt still has to do
// (a boundary's continuation).
func (r *Run) Continue() (func(), error) { return r.restart(r.ctx) }

// afterRunGuarded is afterRun with a panic in it (a retry, a compaction)
// turned into a report: the prompt then ends and the host keeps serving.
func (r *Run) afterRunGuarded() (next func()) {
	defer r.survive("the prompt's retry or compaction", func(err error) {
		next = nil
		r.mu.Lock()
		r.overflowTried = false
		attempt := r.attempt
		r.attempt = 0
		r.mu.Unlock()
		if attempt > 0 {
			// The retry the client was told about ends here; a later
			// success must not report it.
			r.host.Emit(api.AutoRetryEnd{Success: false, Attempt: attempt, FinalError: err.Error()})
		}
	})
	return r.afterRun()
}

// afterRun looks at how the run ended and returns the next part to run,
// or nil when the prompt is over.
func (r *Run) afterRun() func() {
	last := LastAssistant(r.agent.Messages())
	if last == nil || r.ctx.Err() != nil {
		return nil
	}
	if next, handled := r.retryReply(last); handled {
		return next
	}
	return r.autoCompact(last)
}

// InternalSource names gopi itself as the origin of an extension_error
// event that reports an internal failure (clients already show those and
// go on).
const InternalSource = "gopi"

// survive is deferred by the run's own goroutines: a panic there is a
// bug, and must not take the process and the session down (see
// [Survived]).
func (r *Run) survive(where string, cleanup func(err error)) {
	Survived(recover(), r.host, where, cleanup)
}

// Survived handles v, what recover returned in code the runtime runs in
// its own goroutines: nil is no panic; else it is reported with its stack
// (stderr), the client hears of it as an extension_error event, and
// cleanup runs first so the protocol's promises still hold (an auto_*_end
// for every auto_*_start).
func Survived(v any, h Host, where string, cleanup func(err error)) {
	if v == nil {
		return
	}
	err, report := api.Panicked(where, v)
	h.Report(report)
	if cleanup != nil {
		cleanup(err)
	}
	h.Emit(api.ExtensionError{ExtensionPath: InternalSource, Event: where, Error: err.Error()})
}
