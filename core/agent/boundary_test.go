package agent

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// A turn boundary that asks for one more request gets one: from the
// context it hands back when nothing else would run, and none extra when
// tool results already cause the next request.
func TestTurnBoundaryMore(t *testing.T) {
	t.Run("context only", func(t *testing.T) {
		fm := newFakeModel(textTurn("first"), textTurn("second"))
		calls := 0
		a, _ := newTestAgent(t, fm, Config{
			TurnBoundary: func(_ context.Context, msg *llm.AssistantMessage, _ []*llm.ToolResultMessage) ([]llm.Message, bool) {
				calls++
				if calls > 1 {
					return nil, false
				}
				// The reply is edited out and an instruction added.
				return []llm.Message{llm.UserText("hi"), llm.UserText("again")}, true
			},
		})
		require.NoError(t, a.Prompt(context.Background(), llm.UserText("hi")))
		reqs := fm.requests()
		require.Len(t, reqs, 2)
		assert.Equal(t, "user,user", roles(reqs[1].Messages), "the second request sees the context the boundary gave")
		assert.Equal(t, 2, calls)
	})
	t.Run("satisfied by tool results", func(t *testing.T) {
		fm := newFakeModel(toolTurn(callSpec{id: "c1", name: "echo", args: `{"text":"x"}`}), textTurn("done"))
		a, _ := newTestAgent(t, fm, Config{
			TurnBoundary: func(_ context.Context, _ *llm.AssistantMessage, results []*llm.ToolResultMessage) ([]llm.Message, bool) {
				return nil, len(results) > 0 // asks after the tool turn only
			},
		}, echoTool("echo"))
		require.NoError(t, a.Prompt(context.Background(), llm.UserText("hi")))
		assert.Len(t, fm.requests(), 2, "the tool results' request is the one asked for")
	})
}
