package host

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// A steer that arrives after the run's last look at its queues (here: on
// agent_end, before the prompt settles) starts a run of its own instead of
// waiting in the queue for the next prompt.
func TestSteerAfterTheLastTurnRuns(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("first"), llmtest.Text("second"))
	reg, agentDir := newRegistry(t, llm.APIAnthropicMessages, srv.AnthropicURL())
	model, ok := reg.Find("scripted", "scripted-1")
	require.True(t, ok)
	h, err := New(Options{Cwd: t.TempDir(), AgentDir: agentDir, Registry: reg, Model: &model, Thinking: llm.ThinkingOff})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(context.Background()) })

	var once sync.Once
	settled := make(chan struct{}, 4)
	h.Subscribe(func(ev api.Event) {
		switch ev.EventType() {
		case "agent_end":
			once.Do(func() {
				_, err := h.Steer(context.Background(), api.MessageParams{Message: "one more thing"})
				assert.NoError(t, err)
			})
		case api.EventAgentSettled:
			settled <- struct{}{}
		}
	})
	_, err = h.Prompt(context.Background(), api.PromptParams{Message: "hi"})
	require.NoError(t, err)
	select {
	case <-settled:
	case <-time.After(20 * time.Second):
		t.Fatal("the prompt did not settle")
	}
	text, _ := h.LastAssistantText()
	assert.Equal(t, "second", text, "the steer got its own turn")
	steer, follow := h.agent.QueueCounts()
	assert.Zero(t, steer+follow)
}
