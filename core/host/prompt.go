package host

import (
	"context"
	"fmt"
	"time"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/ext"
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
		return started, h.starter.afterCompaction(ctx, done, msg)
	}
	if h.run.Settle(ctx) {
		return h.starter.queue(ctx, p.StreamingBehavior, msg)
	}
	return started, h.starter.start(ctx, p, msg)
}

// Steer queues a message delivered at the run's next interruption point
// (or at the start of the next run when idle).
// Input handlers see it first: one may consume it ("handled") or change it.
func (h *Host) Steer(ctx context.Context, p api.MessageParams) (api.DispositionResult, error) {
	handled, text, images, err := h.ext.queued(ctx, p.Message, p.Images, streamingAs(h.agent, api.BehaviorSteer))
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
	handled, text, images, err := h.ext.queued(ctx, p.Message, p.Images, streamingAs(h.agent, api.BehaviorFollowUp))
	if err != nil {
		return api.DispositionResult{}, err
	}
	if handled {
		return api.DispositionResult{Disposition: api.DispositionHandled}, nil
	}
	h.agent.FollowUp(llm.UserText(h.prompts.expand(text), images...))
	return queued, nil
}

// ClearQueue empties both queues and returns the text of what they held,
// so a client can put it back in its input box.
func (h *Host) ClearQueue(context.Context) (api.QueueResult, error) {
	steering, followUp := h.agent.ClearQueues()
	if len(steering)+len(followUp) == 0 {
		// The agent reports changes only; a client that asked to clear
		// hears the (empty) queues all the same, as with pi.
		h.emit(queueUpdate(nil, nil))
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

// streamingAs is the behavior input handlers are told: b while a run
// streams, nothing when idle (pi's rule).
func streamingAs(a *agent.Agent, b api.StreamingBehavior) string {
	if a.IsStreaming() {
		return string(b)
	}
	return ""
}

// queueUpdate tells the client the queues' new contents.
func queueUpdate(steering, followUp []llm.Message) api.QueueUpdate {
	return api.QueueUpdate{Steering: queueTexts(steering), FollowUp: queueTexts(followUp)}
}
