package anthropic

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// Recorded streams are in the API's exact wire format, pings included.

func playRecorded(t *testing.T, name string) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sse", name))
	require.NoError(t, err)
	srv := llmtest.Recorded(t, body)
	model := testModel(srv.URL)
	return collect(t, New().Stream(t.Context(), model, userReq("list the files")))
}

func TestRecordedThinkingAndToolCall(t *testing.T) {
	evs, msg := playRecorded(t, "anthropic-thinking-tool.sse")
	require.Equal(t, llm.StopToolUse, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, "msg_01XFDUDYJgAACzvnptvVoYEL", msg.ResponseID)

	require.Len(t, msg.Content, 3)
	th := msg.Content[0].(llm.ThinkingContent)
	assert.Equal(t, "The user wants the file list of the repo, so I'll run ls.", th.Thinking)
	assert.Equal(t, "EqQBCkYIBxgCKkDm4bnZ0h1EoE4Rp3f2Qn8xJtY5b3WqZ9L0mK2vX7cR1sTbA==", th.ThinkingSignature)
	assert.Equal(t, "Let me list the files.", msg.Content[1].(llm.TextContent).Text)
	tc := msg.Content[2].(llm.ToolCall)
	assert.Equal(t, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", tc.ID)
	assert.Equal(t, "bash", tc.Name)
	assert.JSONEq(t, `{"command":"ls -la","timeout":30}`, string(tc.Arguments))

	assert.Equal(t, llm.Usage{
		Input: 472, Output: 89, CacheRead: 1536, TotalTokens: 472 + 89 + 1536,
		Cost: msg.Usage.Cost,
	}, msg.Usage)
	assert.InDelta(t, (472*3+89*15+1536*0.3)/1e6, msg.Usage.Cost.Total, 1e-12)

	var types []llm.StreamEventType
	for _, ev := range evs {
		if ev.Type != llm.EventTextDelta && ev.Type != llm.EventThinkingDelta && ev.Type != llm.EventToolCallDelta {
			types = append(types, ev.Type)
		}
	}
	assert.Equal(t, []llm.StreamEventType{
		llm.EventStart,
		llm.EventThinkingStart, llm.EventThinkingEnd,
		llm.EventTextStart, llm.EventTextEnd,
		llm.EventToolCallStart, llm.EventToolCallEnd,
		llm.EventDone,
	}, types)
	// The empty first input fragment is an (empty) delta, as in pi.
	assert.Equal(t, 4, countType(evs, llm.EventToolCallDelta))

	// The final event serialises the way pi writes it.
	raw, err := json.Marshal(evs[len(evs)-1])
	require.NoError(t, err)
	var done map[string]any
	require.NoError(t, json.Unmarshal(raw, &done))
	assert.Equal(t, "done", done["type"])
	assert.Equal(t, "toolUse", done["reason"])
}

func TestRecordedOverloadedMidStream(t *testing.T) {
	evs, msg := playRecorded(t, "anthropic-overloaded.sse")
	assert.Equal(t, llm.EventError, evs[len(evs)-1].Type)
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Equal(t, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, msg.ErrorMessage)
	assert.Equal(t, "Sure, here", msg.Content.Text())
	assert.Equal(t, 25, msg.Usage.Input)
}

func TestRecordedRedactedThinking(t *testing.T) {
	_, msg := playRecorded(t, "anthropic-redacted-thinking.sse")
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	require.Len(t, msg.Content, 2)
	th := msg.Content[0].(llm.ThinkingContent)
	assert.True(t, th.Redacted)
	assert.Equal(t, "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8URj2pLmN3kJ0x", th.ThinkingSignature)
	assert.Equal(t, "The answer is 42.", msg.Content.Text())
	// message_delta only reports output; input and cache counts stay.
	assert.Equal(t, 96, msg.Usage.Input)
	assert.Equal(t, 1200, msg.Usage.CacheWrite)
	assert.Equal(t, 57, msg.Usage.Output)
}

// BenchmarkRecordedStream plays a recorded reply (thinking, text, a tool
// call) through Stream from memory: the cost of one call's frame and events.
func BenchmarkRecordedStream(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sse", "anthropic-thinking-tool.sse"))
	require.NoError(b, err)
	model := testModel("http://recorded.invalid")
	req := userReq("list the files")
	req.Options.HTTPClient = llmtest.RecordedClient(body)
	b.ReportAllocs()
	for b.Loop() {
		if msg := llm.Collect(New().Stream(b.Context(), model, req)); msg.StopReason != llm.StopToolUse {
			b.Fatal(msg.StopReason, msg.ErrorMessage)
		}
	}
}
