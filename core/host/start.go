package host

// This file starts a prompt's run: whether one can start, what it starts
// with, a prompt that waits for a manual compaction, and one queued
// behind a run.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/checkpoints"
	"github.com/gopi-dev/gopi/core/host/mcpstate"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/models"
)

// starter is the room that starts prompts' runs. It is given the rooms a
// run starts from (the extensions', the prompts', the transcript and its
// system record, the MCP servers, the checkpoints) and the run itself.
type starter struct {
	ctx      context.Context // the host's: runs derive from it
	runs     *sync.WaitGroup // the prompt runs started, waited for by Close
	agent    *agent.Agent
	run      *run.Run
	registry *models.Registry
	mcp      *mcpstate.State
	cp       *checkpoints.State
	ext      startHooks
	prompts  *promptRoom
	system   *systemRecord
	log      *transcript
	runHost  runHost
	report   func(error)
}

// startHooks is what the extensions add to a run's start (extRoom).
type startHooks interface {
	manager() *ext.Manager
	beforeAgentStart(ctx context.Context, msg llm.Message, sent promptOptions, sentJSON json.RawMessage) []llm.Message
}

// survive is deferred by the starter's own goroutines (see [run.Survived]).
func (s *starter) survive(where string, cleanup func(err error)) {
	run.Survived(recover(), s.runHost, where, cleanup)
}

// ready checks what a run needs before a prompt is accepted: a
// model, and credentials for it.
func (s *starter) ready() error {
	model := s.agent.Model()
	if model == nil {
		return errNoModel
	}
	if !s.registry.HasAuth(model) {
		return &noAPIKeyError{provider: model.Provider}
	}
	return nil
}

// start starts msg's run, or queues it behind one that began meanwhile;
// the run goes on once the response is written.
func (s *starter) start(ctx context.Context, p api.PromptParams, msg llm.Message) error {
	if err := s.ready(); err != nil {
		return err
	}
	s.mcp.WaitFirst(ctx)
	msgs := s.messages(ctx, msg)
	s.cp.Prompt(ctx)
	run, err := s.run.BeginDrive(func() (func(), error) { return s.agent.StartPrompt(s.ctx, msgs...) })
	if err != nil {
		s.cp.DropPending()
	}
	if errors.Is(err, agent.ErrBusy) {
		// A run started between the check and the claim.
		_, err := s.queue(ctx, p.StreamingBehavior, msg)
		return err
	}
	if err != nil {
		return err
	}
	s.run.Fresh()
	api.AfterResponse(ctx, func() { s.runs.Go(func() { s.run.Drive(run) }) })
	return nil
}

// messages are what a prompt's run starts with: what waited for the
// run's end first (bash results, extension messages), the system message
// if the prompt changed, msg, and what extensions add (nextTurn messages,
// before_agent_start's).
func (s *starter) messages(ctx context.Context, msg llm.Message) []llm.Message {
	s.log.flushBash()
	s.run.FlushCustom()
	if s.ext.manager().Empty() {
		return s.system.with(msg)
	}
	// Each run starts from gopi's own system prompt; a before_agent_start
	// handler may change it for this run.
	base, baseJSON := s.prompts.refresh()
	extra := s.run.TakeNextTurn()
	// Its handlers may change the system prompt's sections: the system
	// message records them.
	extra = append(extra, s.ext.beforeAgentStart(ctx, msg, base, baseJSON)...)
	return append(s.system.with(msg), extra...)
}

// afterCompaction accepts a prompt that arrived while a manual
// compaction runs: the prompt counts as in progress at once (get_state
// says isStreaming) and its run starts on the compacted context when the
// compaction ends, whether it succeeded or not.
func (s *starter) afterCompaction(ctx context.Context, done <-chan struct{}, msg llm.Message) error {
	if err := s.ready(); err != nil {
		return err
	}
	w := &run.WaitingPrompt{}
	if err := s.run.BeginWaiting(w); err != nil {
		return err // another prompt already waits for the compaction
	}
	s.run.Fresh()
	api.AfterResponse(ctx, func() {
		// With a nil run, Drive only ends the prompt.
		s.runs.Go(func() { s.run.Drive(s.awaitCompaction(done, w, msg)) })
	})
	return nil
}

// awaitCompaction waits for the manual compaction a prompt arrived
// behind and claims the prompt's run; nil when there is nothing to run
// (the host closed, the claim failed, or a panic).
func (s *starter) awaitCompaction(done <-chan struct{}, w *run.WaitingPrompt, msg llm.Message) (run func()) {
	defer s.run.DropWaiting(w)
	defer s.survive("the prompt waiting for compaction", func(error) { run = nil })
	select {
	case <-done:
	case <-s.ctx.Done():
		return nil
	}
	msgs := s.messages(s.ctx, msg)
	// Claimed under the run state's lock, so an abort either marked the
	// prompt before or finds its run.
	run, aborted, err := s.run.ClaimWaiting(w, func() (func(), error) { return s.agent.StartPrompt(s.ctx, msgs...) })
	if err != nil {
		s.report(fmt.Errorf("starting the prompt that waited for compaction: %w", err))
		return nil
	}
	if aborted {
		// As when pi is aborted right after a prompt: the run starts and
		// ends at once as aborted.
		s.agent.Abort()
	}
	return run
}

// queued is the answer to a prompt put in a queue.
var queued = api.DispositionResult{Disposition: api.DispositionQueued}

// queue puts a prompt that came while a run streams in the queue b names;
// the command's dialect hears of msg first (api.Queued).
func (s *starter) queue(ctx context.Context, b api.StreamingBehavior, msg llm.Message) (api.DispositionResult, error) {
	switch b {
	case api.BehaviorSteer:
		api.Queued(ctx, msg)
		s.agent.Steer(msg)
	case api.BehaviorFollowUp:
		api.Queued(ctx, msg)
		s.agent.FollowUp(msg)
	default:
		return api.DispositionResult{}, errStreaming
	}
	return queued, nil
}
