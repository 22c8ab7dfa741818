package acp

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

// queueRuntime starts a run for its first prompt and queues the others
// as follow-ups, telling the dialect which message it queued, as the host
// does; the test plays the run's events.
type queueRuntime struct {
	promptRuntime
	queued chan llm.Message
	first  bool
}

func (r *queueRuntime) Prompt(ctx context.Context, p api.PromptParams) (api.DispositionResult, error) {
	if !r.first {
		r.first = true
		return r.promptRuntime.Prompt(ctx, p)
	}
	msg := llm.UserText(p.Message)
	api.Queued(ctx, msg)
	r.queued <- msg
	return api.DispositionResult{Disposition: api.DispositionQueued}, nil
}

// Messages the run takes in together (followUpMode "all") share one
// turn: the prompt before is answered as the first of them joins, and
// both are answered with the reply that follows them.
func TestQueuedPromptsTakenTogetherShareATurn(t *testing.T) {
	rt := &queueRuntime{promptRuntime: promptRuntime{started: make(chan struct{})}, queued: make(chan llm.Message, 2)}
	c := serveRuntime(t, rt)
	c.open(map[string]any{})
	prompt := func(id int, text string) {
		c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": map[string]any{
			"sessionId": "s-1", "prompt": []any{map[string]any{"type": "text", "text": text}}}})
	}
	prompt(3, "first")
	<-rt.started
	prompt(4, "second")
	second := <-rt.queued
	prompt(5, "third")
	third := <-rt.queued

	rt.emit(agent.Event{Type: agent.EventMessageEnd, Message: &llm.AssistantMessage{StopReason: llm.StopStop}})
	rt.emit(agent.Event{Type: agent.EventMessageStart, Message: second})
	assert.EqualValues(t, 3, c.next()["id"], "the first prompt ends as the next joins")
	rt.emit(agent.Event{Type: agent.EventMessageStart, Message: third})
	rt.emit(agent.Event{Type: agent.EventMessageUpdate, AssistantEvent: &llm.StreamEvent{Type: llm.EventTextDelta, Delta: "both"}})
	u := c.next()
	require.Equal(t, "session/update", u["method"])
	rt.emit(agent.Event{Type: agent.EventMessageEnd, Message: &llm.AssistantMessage{StopReason: llm.StopLength}})
	rt.emit(api.AgentSettled{})
	for _, id := range []float64{4, 5} {
		m := c.next()
		assert.Equal(t, id, m["id"])
		assert.Equal(t, "max_tokens", m["result"].(map[string]any)["stopReason"], "the reply that followed both")
	}
	c.close()
}
