package openai

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// playRecorded streams a recorded SSE file through p.
func playRecorded(t *testing.T, p llm.Provider, api, file string, reasoning bool) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sse", file))
	require.NoError(t, err)
	srv := llmtest.Recorded(t, body)
	m := testModel(api, srv.URL+"/v1")
	m.Reasoning = reasoning
	req := userReq("summarise the project")
	req.Options.HTTPClient = srv.Client()
	return run(t, context.Background(), p, m, req)
}

func TestRecordedChatTextAndToolCall(t *testing.T) {
	evs, msg := playRecorded(t, NewCompletions(), llm.APIOpenAICompletions, "openai-chat-gpt-4.1-text-tool.sse", false)
	require.Equal(t, llm.StopToolUse, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, "chatcmpl-BQx7kT2mZ9rYc4vF1aLpN0eWqH3sD", msg.ResponseID)
	require.Len(t, msg.Content, 2)
	assert.Equal(t, llm.TextContent{Text: "I'll check the README."}, msg.Content[0])
	tc := msg.Content[1].(llm.ToolCall)
	assert.Equal(t, "call_Zk3u8PqRvB1mT6yXe0LwJc9N", tc.ID)
	assert.Equal(t, "read", tc.Name)
	assert.JSONEq(t, `{"path":"README.md"}`, string(tc.Arguments))
	assert.Equal(t, llm.Usage{Input: 307, Output: 27, CacheRead: 1536, TotalTokens: 1870, Cost: msg.Usage.Cost}, msg.Usage)
	assert.InDelta(t, (307*2+27*8+1536*0.5)/1e6, msg.Usage.Cost.Total, 1e-12)
	assert.Equal(t, []llm.StreamEventType{
		llm.EventStart,
		llm.EventTextStart, llm.EventTextDelta, llm.EventTextDelta,
		llm.EventToolCallStart, llm.EventToolCallDelta, llm.EventToolCallDelta, llm.EventToolCallDelta,
		llm.EventToolCallDelta, llm.EventToolCallDelta, llm.EventToolCallDelta,
		llm.EventTextEnd, llm.EventToolCallEnd, llm.EventDone,
	}, types(evs))
}

func TestRecordedChatVLLMReasoning(t *testing.T) {
	_, msg := playRecorded(t, NewCompletions(), llm.APIOpenAICompletions, "openai-chat-vllm-reasoning.sse", true)
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, llm.Contents{
		llm.ThinkingContent{Thinking: "The user asks for 2+2. That is 4.", ThinkingSignature: "reasoning_content"},
		llm.TextContent{Text: "2 + 2 = 4"},
	}, msg.Content)
	assert.Equal(t, 24, msg.Usage.Input)
	assert.Equal(t, 28, msg.Usage.Output)
	assert.Equal(t, 0, msg.Usage.CacheRead)
}

func TestRecordedResponsesReasoningTextTool(t *testing.T) {
	evs, msg := playRecorded(t, NewResponses(), llm.APIOpenAIResponses, "openai-responses-gpt-5-reasoning-tool.sse", true)
	require.Equal(t, llm.StopToolUse, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, "resp_68a1f3c2b9e48190a7d5c1e3f2b4a6d80c9e1f2a3b4c5d6e", msg.ResponseID)
	require.Len(t, msg.Content, 3)

	th := msg.Content[0].(llm.ThinkingContent)
	assert.Equal(t, "**Locating the README**\n\nThe user wants the project summary, so I should read the README first."+
		"\n\n**Choosing the tool**\n\nThe read tool takes a path; README.md is at the root.", th.Thinking)
	var item struct {
		ID               string `json:"id"`
		Type             string `json:"type"`
		EncryptedContent string `json:"encrypted_content"`
		Summary          []struct {
			Text string `json:"text"`
		} `json:"summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(th.ThinkingSignature), &item))
	assert.Equal(t, "rs_68a1f3c3d4e08190b1c2d3e4f5a6b7c80c9e1f2a3b4c5d6e", item.ID)
	assert.Equal(t, "reasoning", item.Type)
	assert.NotEmpty(t, item.EncryptedContent)
	assert.Len(t, item.Summary, 2)

	assert.Equal(t, llm.TextContent{
		Text:          "Let me read the README — one moment.",
		TextSignature: `{"v":1,"id":"msg_68a1f3c5e6f78190c2d3e4f5a6b7c8d90c9e1f2a3b4c5d6e"}`,
	}, msg.Content[1])
	tc := msg.Content[2].(llm.ToolCall)
	assert.Equal(t, "call_Qm4vX8tR2nL6pK0wJ3sB9yHd|fc_68a1f3c6f7089190d3e4f5a6b7c8d9e00c9e1f2a3b4c5d6e", tc.ID)
	assert.JSONEq(t, `{"path":"README.md"}`, string(tc.Arguments))
	assert.Equal(t, 290, msg.Usage.Input)
	assert.Equal(t, 1920, msg.Usage.CacheRead)
	assert.Equal(t, 187, msg.Usage.Output)

	// Each block is closed as its item completes, in order.
	var ends []llm.StreamEventType
	for _, ev := range evs {
		switch ev.Type {
		case llm.EventThinkingEnd, llm.EventTextEnd, llm.EventToolCallEnd:
			ends = append(ends, ev.Type)
		}
	}
	assert.Equal(t, []llm.StreamEventType{llm.EventThinkingEnd, llm.EventTextEnd, llm.EventToolCallEnd}, ends)
}

func TestStreamErrorsAndEarlyEnds(t *testing.T) {
	cases := []struct {
		api      string
		provider llm.Provider
		body     string
		want     string
	}{
		{llm.APIOpenAICompletions, NewCompletions(),
			"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n" +
				"data: {\"error\":{\"message\":\"The server is overloaded\",\"type\":\"server_error\",\"code\":null}}\n\n",
			`received error while streaming: {"message":"The server is overloaded","type":"server_error","code":null}`},
		{llm.APIOpenAIResponses, NewResponses(),
			"event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_x\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
				"event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"code\":\"server_error\",\"message\":\"boom\",\"param\":null}\n\n",
			"Error Code server_error: boom"},
		// A connection that closes cleanly before the reply is complete.
		{llm.APIOpenAICompletions, NewCompletions(),
			"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n",
			"stream ended before the model finished (no finish_reason)"},
		{llm.APIOpenAIResponses, NewResponses(),
			"event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_x\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
			"stream ended before the response completed"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			srv := llmtest.Recorded(t, []byte(tc.body))
			req := userReq("hi")
			req.Options.HTTPClient = srv.Client()
			_, msg := run(t, context.Background(), tc.provider, testModel(tc.api, srv.URL+"/v1"), req)
			assert.Equal(t, llm.StopError, msg.StopReason)
			assert.Equal(t, tc.want, msg.ErrorMessage)
		})
	}
}

// benchmarkRecorded plays a recorded reply through p from memory: the cost
// of one call's frame and events.
func benchmarkRecorded(b *testing.B, p llm.Provider, api, file string, want llm.StopReason) {
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "sse", file))
	require.NoError(b, err)
	m := testModel(api, "http://recorded.invalid/v1")
	m.Reasoning = true
	req := userReq("summarise the project")
	req.Options.HTTPClient = llmtest.RecordedClient(body)
	b.ReportAllocs()
	for b.Loop() {
		if msg := llm.Collect(p.Stream(b.Context(), m, req)); msg.StopReason != want {
			b.Fatal(msg.StopReason, msg.ErrorMessage)
		}
	}
}

func BenchmarkRecordedChat(b *testing.B) {
	benchmarkRecorded(b, NewCompletions(), llm.APIOpenAICompletions, "openai-chat-gpt-4.1-text-tool.sse", llm.StopToolUse)
}

func BenchmarkRecordedResponses(b *testing.B) {
	benchmarkRecorded(b, NewResponses(), llm.APIOpenAIResponses, "openai-responses-gpt-5-reasoning-tool.sse", llm.StopToolUse)
}
