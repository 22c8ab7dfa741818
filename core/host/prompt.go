package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
	"github.com/gopi-dev/gopi/core/host/run"
	"github.com/gopi-dev/gopi/core/llm"
)

// Prompt validates and accepts a prompt. While a run streams it is queued
// as the streamingBehavior says; otherwise a run is claimed now (so
// get_state says isStreaming at once) and started once the response has
// been written, so agent_start never precedes it.
func (h *Host) Prompt(ctx context.Context, p api.PromptParams) (api.DispositionResult, error) {
	started := api.DispositionResult{Disposition: api.DispositionStarted}
	if p.Message == "" && len(p.Images) == 0 {
		return api.DispositionResult{}, errEmptyPrompt
	}
	behavior := ""
	if h.agent.IsStreaming() {
		behavior = string(p.StreamingBehavior)
	}
	handled, message, images, err := h.ext.prompt(ctx, p.Message, p.Images, "rpc", behavior)
	if err != nil {
		return api.DispositionResult{}, err
	}
	if handled || h.mcpCommand(message) {
		return api.DispositionResult{Disposition: api.DispositionHandled}, nil
	}
	p.Message, p.Images = message, images
	text := h.prompts.expand(p.Message)
	msg := llm.UserText(text, p.Images...)
	if done := h.run.ManualDone(); done != nil {
		return started, h.promptAfterCompaction(ctx, done, msg)
	}
	if h.run.Settle(ctx) {
		return h.queue(ctx, p.StreamingBehavior, msg)
	}
	return started, h.startPrompt(ctx, p, msg)
}

// readyToPrompt checks what a run needs before a prompt is accepted: a
// model, and credentials for it.
func (h *Host) readyToPrompt() error {
	model := h.agent.Model()
	if model == nil {
		return errNoModel
	}
	if !h.opts.Registry.HasAuth(model) {
		return &noAPIKeyError{provider: model.Provider}
	}
	return nil
}

func (h *Host) startPrompt(ctx context.Context, p api.PromptParams, msg llm.Message) error {
	if err := h.readyToPrompt(); err != nil {
		return err
	}
	h.mcp.WaitFirst(ctx)
	msgs := h.runMessages(ctx, msg)
	h.cp.Prompt(ctx)
	run, err := h.run.BeginDrive(func() (func(), error) { return h.agent.StartPrompt(h.ctx, msgs...) })
	if err != nil {
		h.cp.DropPending()
	}
	if errors.Is(err, agent.ErrBusy) {
		// A run started between the check and the claim.
		_, err := h.queue(ctx, p.StreamingBehavior, msg)
		return err
	}
	if err != nil {
		return err
	}
	h.run.Fresh()
	api.AfterResponse(ctx, func() { h.runs.Go(func() { h.run.Drive(run) }) })
	return nil
}

// runMessages are what a prompt's run starts with: what waited for the
// run's end first (bash results, extension messages), the system message
// if the prompt changed, msg, and what extensions add (nextTurn messages,
// before_agent_start's).
func (h *Host) runMessages(ctx context.Context, msg llm.Message) []llm.Message {
	h.flushPendingBash()
	h.run.FlushCustom()
	if h.ext.manager().Empty() {
		return h.withSystem(msg)
	}
	// Each run starts from gopi's own system prompt; a before_agent_start
	// handler may change it for this run.
	base, baseJSON := h.prompts.refresh()
	extra := h.run.TakeNextTurn()
	// Its handlers may change the system prompt's sections: the system
	// message records them.
	extra = append(extra, h.ext.beforeAgentStart(ctx, msg, base, baseJSON)...)
	return append(h.withSystem(msg), extra...)
}

// promptAfterCompaction accepts a prompt that arrived while a manual
// compaction runs: the prompt counts as in progress at once (get_state
// says isStreaming) and its run starts on the compacted context when the
// compaction ends, whether it succeeded or not.
func (h *Host) promptAfterCompaction(ctx context.Context, done <-chan struct{}, msg llm.Message) error {
	if err := h.readyToPrompt(); err != nil {
		return err
	}
	w := &run.WaitingPrompt{}
	if err := h.run.BeginWaiting(w); err != nil {
		return err // another prompt already waits for the compaction
	}
	h.run.Fresh()
	api.AfterResponse(ctx, func() {
		// With a nil run, Drive only ends the prompt.
		h.runs.Go(func() { h.run.Drive(h.awaitCompaction(done, w, msg)) })
	})
	return nil
}

// awaitCompaction waits for the manual compaction a prompt arrived
// behind and claims the prompt's run; nil when there is nothing to run
// (the host closed, the claim failed, or a panic).
func (h *Host) awaitCompaction(done <-chan struct{}, w *run.WaitingPrompt, msg llm.Message) (run func()) {
	defer h.run.DropWaiting(w)
	defer h.survive("the prompt waiting for compaction", func(error) { run = nil })
	select {
	case <-done:
	case <-h.ctx.Done():
		return nil
	}
	msgs := h.runMessages(h.ctx, msg)
	// Claimed under the run state's lock, so an abort either marked the
	// prompt before or finds its run.
	run, aborted, err := h.run.ClaimWaiting(w, func() (func(), error) { return h.agent.StartPrompt(h.ctx, msgs...) })
	if err != nil {
		h.opts.Report(fmt.Errorf("starting the prompt that waited for compaction: %w", err))
		return nil
	}
	if aborted {
		// As when pi is aborted right after a prompt: the run starts and
		// ends at once as aborted.
		h.agent.Abort()
	}
	return run
}

var queued = api.DispositionResult{Disposition: api.DispositionQueued}

// queue puts a prompt that came while a run streams in the queue b names;
// the command's dialect hears of msg first (api.Queued).
func (h *Host) queue(ctx context.Context, b api.StreamingBehavior, msg llm.Message) (api.DispositionResult, error) {
	switch b {
	case api.BehaviorSteer:
		api.Queued(ctx, msg)
		h.agent.Steer(msg)
	case api.BehaviorFollowUp:
		api.Queued(ctx, msg)
		h.agent.FollowUp(msg)
	default:
		return api.DispositionResult{}, errStreaming
	}
	return queued, nil
}

// Steer queues a message delivered at the run's next interruption point
// (or at the start of the next run when idle).
// Input handlers see it first: one may consume it ("handled") or change it.
func (h *Host) Steer(ctx context.Context, p api.MessageParams) (api.DispositionResult, error) {
	handled, text, images, err := h.ext.queued(ctx, p.Message, p.Images, h.streamingAs(api.BehaviorSteer))
	if err != nil {
		return api.DispositionResult{}, err
	}
	if handled {
		return api.DispositionResult{Disposition: api.DispositionHandled}, nil
	}
	h.agent.Steer(llm.UserText(h.prompts.expand(text), images...))
	return queued, nil
}

// FollowUp queues a message delivered when the run would otherwise stop.
// Input handlers see it first, as for Steer.
func (h *Host) FollowUp(ctx context.Context, p api.MessageParams) (api.DispositionResult, error) {
	handled, text, images, err := h.ext.queued(ctx, p.Message, p.Images, h.streamingAs(api.BehaviorFollowUp))
	if err != nil {
		return api.DispositionResult{}, err
	}
	if handled {
		return api.DispositionResult{Disposition: api.DispositionHandled}, nil
	}
	h.agent.FollowUp(llm.UserText(h.prompts.expand(text), images...))
	return queued, nil
}

// streamingAs is the behavior input handlers are told: b while a run
// streams, nothing when idle (pi's rule).
func (h *Host) streamingAs(b api.StreamingBehavior) string {
	if h.agent.IsStreaming() {
		return string(b)
	}
	return ""
}

// ClearQueue empties both queues and returns the text of what they held,
// so a client can put it back in its input box.
func (h *Host) ClearQueue(context.Context) (api.QueueResult, error) {
	steering, followUp := h.agent.ClearQueues()
	if len(steering)+len(followUp) == 0 {
		// The agent reports changes only; a client that asked to clear
		// hears the (empty) queues all the same, as with pi.
		h.queueChanged(nil, nil)
	}
	return api.QueueResult{Steering: queueTexts(steering), FollowUp: queueTexts(followUp)}, nil
}

// queueTexts is the text of each queued message ([] for none).
func queueTexts(msgs []llm.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if u, ok := m.(*llm.UserMessage); ok {
			out = append(out, u.Content.Text())
		}
	}
	return out
}

// queueChanged tells the client the queues' new contents.
func (h *Host) queueChanged(steering, followUp []llm.Message) {
	h.emit(api.QueueUpdate{Steering: queueTexts(steering), FollowUp: queueTexts(followUp)})
}

// abortWait bounds how long abort waits for a run to wind down; tools and
// providers honour cancellation, so this only matters for a stuck one.
const abortWait = 10 * time.Second

// Abort stops the running prompt and answers once the run has ended (its
// agent_end is on the wire before the response, as in pi).
func (h *Host) Abort(ctx context.Context) error {
	done := h.run.Abort()
	h.agent.Abort()
	// Extensions' ctx.signal aborts with the run.
	h.ext.manager().Notify(ext.HostRunAbort, ext.Empty{})
	ctx, cancel := context.WithTimeout(ctx, abortWait)
	defer cancel()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("abort requested, but the run has not stopped yet: %w", ctx.Err())
		}
	}
	if err := h.agent.WaitForIdle(ctx); err != nil {
		return fmt.Errorf("abort requested, but the run has not stopped yet: %w", err)
	}
	return nil
}

func queueMode(s string) agent.QueueMode {
	switch m := agent.QueueMode(s); m {
	case agent.QueueAll, agent.QueueOneAtATime:
		return m
	}
	return ""
}
