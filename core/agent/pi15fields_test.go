package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// pi 1.5's fields on the messages a run adds: each reply records the
// thinking level it was asked for (as near as the model supports) and
// how long it took; a tool result how long the tool ran, left out when
// it never ran; a tool's structured content travels on
// tool_execution_end only, not in the toolResult message.
func TestRunRecordsPi15Fields(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "data", `{}`}, callSpec{"c2", "nosuch", `{}`}),
		textTurn("done"),
	)
	data := &fakeTool{name: "data", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		return Result{Content: TextResult("two lines").Content, StructuredContent: map[string]any{"lines": 2}}, nil
	}}
	a, rec := newTestAgent(t, fm, Config{}, data)
	a.SetThinkingLevel(llm.ThinkingXHigh) // testModel has no xhigh: high is asked for
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("go")))

	var replies []*llm.AssistantMessage
	for _, ev := range rec.ofType(EventMessageEnd) {
		if m, ok := ev.Message.(*llm.AssistantMessage); ok {
			replies = append(replies, m)
		}
	}
	require.Len(t, replies, 2)
	for _, m := range replies {
		assert.Equal(t, llm.ThinkingHigh, m.ThinkingLevel)
		require.NotNil(t, m.DurationMs)
		assert.GreaterOrEqual(t, *m.DurationMs, int64(0))
	}
	// message_start shows the reply as it began: not yet timed.
	for _, ev := range rec.ofType(EventMessageStart) {
		if m, ok := ev.Message.(*llm.AssistantMessage); ok {
			assert.Nil(t, m.DurationMs)
		}
	}

	ends := rec.ofType(EventToolExecutionEnd)
	require.Len(t, ends, 2)
	byID := map[string]Event{}
	for _, e := range ends {
		byID[e.ToolCallID] = e
	}
	raw, err := json.Marshal(byID["c1"])
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"structuredContent":{"lines":2}`)
	assert.NotNil(t, byID["c1"].DurationMs)
	assert.Nil(t, byID["c2"].DurationMs, "an unknown tool never ran")

	trs := toolResults(a.Messages())
	require.Len(t, trs, 2)
	require.NotNil(t, trs[0].DurationMs)
	assert.GreaterOrEqual(t, *trs[0].DurationMs, int64(0))
	assert.Nil(t, trs[1].DurationMs)
	raw, err = json.Marshal(trs[0])
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "structuredContent")
	assert.Contains(t, string(raw), `"durationMs":`)

	// With thinking off, "off" is recorded; a reply that failed records
	// its level too.
	fm2 := newFakeModel(failTurn("boom"))
	b, rec2 := newTestAgent(t, fm2, Config{}, data)
	b.SetThinkingLevel(llm.ThinkingOff)
	_ = b.Prompt(context.Background(), llm.UserText("go"))
	last := rec2.ofType(EventMessageEnd)
	m := last[len(last)-1].Message.(*llm.AssistantMessage)
	assert.Equal(t, llm.StopError, m.StopReason)
	assert.Equal(t, llm.ThinkingOff, m.ThinkingLevel)
	require.NotNil(t, m.DurationMs)
}
