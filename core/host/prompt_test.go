package host

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// scriptedHost is a host on a scripted Anthropic-style model that plays
// turns.
func scriptedHost(t *testing.T, turns ...llmtest.Turn) *Host {
	t.Helper()
	srv := llmtest.New(t, turns...)
	reg, agentDir := newRegistry(t, llm.APIAnthropicMessages, srv.AnthropicURL())
	model, ok := reg.Find("scripted", "scripted-1")
	require.True(t, ok)
	h, err := New(Options{Cwd: t.TempDir(), AgentDir: agentDir, Registry: reg, Model: &model})
	require.NoError(t, err)
	return h
}

// A client sees agent_end before the agent has let go of its run. A prompt
// sent in that moment is a new prompt, not one sent "while streaming".
func TestPromptRightAfterAgentEndIsAccepted(t *testing.T) {
	h := scriptedHost(t, llmtest.Text("first"), llmtest.Text("second"))

	// Hold the agent inside its agent_end delivery, where the run has
	// ended for the client but not yet for the agent.
	ended, release := make(chan struct{}), make(chan struct{})
	held := false
	h.Subscribe(func(ev api.Event) {
		if ev.EventType() == string(agent.EventAgentEnd) && !held {
			held = true
			close(ended)
			<-release
		}
	})
	ctx := context.Background()
	_, err := h.Prompt(ctx, api.PromptParams{Message: "one"})
	require.NoError(t, err)
	<-ended
	answered := make(chan error, 1)
	go func() {
		_, err := h.Prompt(ctx, api.PromptParams{Message: "two"})
		answered <- err
	}()
	time.Sleep(20 * time.Millisecond) // let Prompt meet the winding-down run
	close(release)
	select {
	case err := <-answered:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("prompt did not answer")
	}
	require.Eventually(t, func() bool {
		st, err := h.GetState(ctx)
		return err == nil && !st.IsStreaming
	}, 10*time.Second, 5*time.Millisecond)
	text, _ := h.LastAssistantText()
	assert.Equal(t, "second", text)
	require.NoError(t, h.Close(ctx))
}

// A steer that arrives after the run's last look at its queues (here: on
// agent_end, before the prompt settles) starts a run of its own instead of
// waiting in the queue for the next prompt.
func TestSteerAfterTheLastTurnRuns(t *testing.T) {
	h := scriptedHost(t, llmtest.Text("first"), llmtest.Text("second"))
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
	_, err := h.Prompt(context.Background(), api.PromptParams{Message: "hi"})
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
