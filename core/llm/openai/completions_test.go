package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

func chatModel(srv *llmtest.Server) *llm.Model {
	return testModel(llm.APIOpenAICompletions, srv.OpenAIURL())
}

func chatRun(t *testing.T, srv *llmtest.Server, m *llm.Model, req *llm.Request) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	req.Options.HTTPClient = srv.Client()
	return run(t, context.Background(), NewCompletions(), m, req)
}

func TestChatTextSplitAcrossTinyWrites(t *testing.T) {
	text := "Héllo, wörld 👋 — streamed in tiny pieces."
	turn := llmtest.Text(text)
	turn.ChunkSize = 2
	turn.WriteSize = 1
	turn.ResponseID = "chatcmpl-42"
	turn.Usage = llmtest.Usage{Input: 1000, Output: 200, CacheRead: 500}
	srv := llmtest.New(t, turn)

	evs, msg := chatRun(t, srv, chatModel(srv), userReq("hi"))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	ts := types(evs)
	assert.Equal(t, llm.EventStart, ts[0])
	assert.Equal(t, llm.EventTextStart, ts[1])
	assert.Equal(t, llm.EventTextEnd, ts[len(ts)-2])
	assert.Equal(t, llm.EventDone, ts[len(ts)-1])
	assert.Equal(t, text, deltas(evs, llm.EventTextDelta))
	assert.Equal(t, text, evs[len(evs)-2].Content)
	assert.Equal(t, llm.Contents{llm.TextContent{Text: text}}, msg.Content)
	assert.Equal(t, "chatcmpl-42", msg.ResponseID)
	assert.Equal(t, llm.APIOpenAICompletions, msg.API)
	assert.Equal(t, "gpt-test", msg.Model)

	// prompt_tokens includes the cached ones.
	assert.Equal(t, 1000, msg.Usage.Input)
	assert.Equal(t, 500, msg.Usage.CacheRead)
	assert.Equal(t, 200, msg.Usage.Output)
	assert.Equal(t, 1700, msg.Usage.TotalTokens)
	assert.InDelta(t, 1000*2/1e6, msg.Usage.Cost.Input, 1e-12)
	assert.InDelta(t, 200*8/1e6, msg.Usage.Cost.Output, 1e-12)
	assert.InDelta(t, 500*0.5/1e6, msg.Usage.Cost.CacheRead, 1e-12)
	assert.InDelta(t, (2000+1600+250)/1e6, msg.Usage.Cost.Total, 1e-12)
}

func TestChatParallelToolCallsInterleaved(t *testing.T) {
	a := `{"path":"a.go","limit":10,"note":"ünïcode \"quoted\""}`
	b := `{"command":"ls -la | head","timeout":30}`
	for _, size := range []int{1, 4, 7} {
		turn := llmtest.Turn{Blocks: []llmtest.Block{
			llmtest.Say("Let me look."),
			llmtest.Call("call_a", "read", a),
			llmtest.Call("call_b", "bash", b),
		}, ChunkSize: size, WriteSize: 5}
		srv := llmtest.New(t, turn)
		evs, msg := chatRun(t, srv, chatModel(srv), userReq("go"))
		require.Equal(t, llm.StopToolUse, msg.StopReason, msg.ErrorMessage)
		calls := msg.Content.ToolCalls()
		require.Len(t, calls, 2)
		assert.Equal(t, "call_a", calls[0].ID)
		assert.Equal(t, "read", calls[0].Name)
		assert.JSONEq(t, a, string(calls[0].Arguments))
		assert.Equal(t, "call_b", calls[1].ID)
		assert.Equal(t, "bash", calls[1].Name)
		assert.JSONEq(t, b, string(calls[1].Arguments))
		assert.Equal(t, "Let me look.", msg.Content.Text())

		// The argument deltas really arrived interleaved.
		var order []int
		for _, ev := range evs {
			if ev.Type == llm.EventToolCallDelta && ev.Delta != "" {
				order = append(order, ev.ContentIndex)
			}
		}
		require.GreaterOrEqual(t, len(order), 4)
		assert.Equal(t, []int{1, 2, 1, 2}, order[:4], "size %d", size)
		var ends []*llm.ToolCall
		for _, ev := range evs {
			if ev.Type == llm.EventToolCallEnd {
				ends = append(ends, ev.ToolCall)
			}
		}
		require.Len(t, ends, 2)
		assert.JSONEq(t, a, string(ends[0].Arguments))
	}
}

func TestChatStopReasons(t *testing.T) {
	long := llmtest.Text("cut by the token limit")
	long.StopReason = "length"
	filtered := llmtest.Text("hmm")
	filtered.StopReason = "content_filter"
	srv := llmtest.New(t, long, filtered)

	_, msg := chatRun(t, srv, chatModel(srv), userReq("a"))
	assert.Equal(t, llm.StopLength, msg.StopReason)

	_, msg = chatRun(t, srv, chatModel(srv), userReq("b"))
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Equal(t, "Provider finish_reason: content_filter", msg.ErrorMessage)
}

func TestChatReasoningRoundTrip(t *testing.T) {
	turn := llmtest.Turn{Blocks: []llmtest.Block{
		llmtest.Thinking("The user wants a file listing.", ""),
		llmtest.Say("Listing."),
		llmtest.Call("call_1", "ls", `{"path":"."}`),
	}}
	srv := llmtest.New(t, turn, llmtest.Text("done"))
	m := chatModel(srv)
	m.Reasoning = true

	req := userReq("list files")
	req.Options.Thinking = llm.ThinkingHigh
	evs, first := chatRun(t, srv, m, req)
	require.Equal(t, llm.StopToolUse, first.StopReason, first.ErrorMessage)
	assert.Equal(t, []llm.StreamEventType{llm.EventStart, llm.EventThinkingStart}, types(evs)[:2])
	require.Len(t, first.Content, 3)
	th, ok := first.Content[0].(llm.ThinkingContent)
	require.True(t, ok)
	assert.Equal(t, "The user wants a file listing.", th.Thinking)
	assert.Equal(t, "reasoning_content", th.ThinkingSignature)
	body := srv.LastRequest(t).JSON()
	assert.Equal(t, "high", body["reasoning_effort"])

	// Same model: the reasoning goes back in the field it came in.
	req.Messages = append(req.Messages, first, &llm.ToolResultMessage{
		ToolCallID: "call_1", ToolName: "ls", Content: llm.Contents{llm.TextContent{Text: "a.go\nb.go"}},
	})
	_, second := chatRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, second.StopReason, second.ErrorMessage)
	msgs := srv.LastRequest(t).JSON()["messages"].([]any)
	require.Len(t, msgs, 3)
	asst := msgs[1].(map[string]any)
	assert.Equal(t, "assistant", asst["role"])
	assert.Equal(t, "Listing.", asst["content"])
	assert.Equal(t, "The user wants a file listing.", asst["reasoning_content"])
	calls := asst["tool_calls"].([]any)
	require.Len(t, calls, 1)
	assert.JSONEq(t, `{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}`, jsonOf(t, calls[0]))
	assert.Equal(t, map[string]any{"role": "tool", "content": "a.go\nb.go", "tool_call_id": "call_1"}, msgs[2])

	// Another model: the thinking becomes plain text, ids are shortened.
	other := *first
	other.Model = "someone-else"
	other.Content = append(llm.Contents(nil), first.Content...)
	other.Content[2] = llm.ToolCall{ID: "call_1|fc_xyz+/=", Name: "ls", Arguments: json.RawMessage(`{}`)}
	srv.Push(llmtest.Text("ok"))
	req.Messages = []llm.Message{llm.UserText("list"), &other, &llm.ToolResultMessage{
		ToolCallID: "call_1|fc_xyz+/=", ToolName: "ls", Content: llm.Contents{llm.TextContent{Text: "x"}},
	}}
	_, third := chatRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, third.StopReason, third.ErrorMessage)
	msgs = srv.LastRequest(t).JSON()["messages"].([]any)
	asst = msgs[1].(map[string]any)
	assert.Equal(t, "The user wants a file listing.Listing.", asst["content"])
	assert.NotContains(t, asst, "reasoning_content")
	assert.Equal(t, "call_1", asst["tool_calls"].([]any)[0].(map[string]any)["id"])
	assert.Equal(t, "call_1", msgs[2].(map[string]any)["tool_call_id"])
}

func TestChatRequestShape(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	m := chatModel(srv)
	m.Reasoning = true
	img := llm.ImageContent{Data: "aGVsbG8=", MimeType: "image/png"}
	temp := 0.25
	req := &llm.Request{
		SystemPrompt: "You are terse.",
		Messages: []llm.Message{
			llm.UserText("what is this?", img),
			&llm.AssistantMessage{
				API: m.API, Provider: m.Provider, Model: m.ID, StopReason: llm.StopToolUse,
				Content: llm.Contents{llm.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"x.png"}`)}},
			},
			&llm.ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: llm.Contents{img}},
			// An aborted reply is not replayed; its unanswered call gets no result either.
			&llm.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: llm.StopAborted,
				Content: llm.Contents{llm.ToolCall{ID: "c2", Name: "read"}}},
			llm.UserText("and now?"),
		},
		Tools: []llm.ToolSpec{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
		Options: llm.Options{APIKey: "k", MaxTokens: 1234, Temperature: &temp, Thinking: llm.ThinkingLow,
			SessionID: "sess-1", CacheRetention: "long"},
	}
	_, msg := chatRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	r := srv.LastRequest(t)
	assert.Equal(t, "/v1/chat/completions", r.Path)
	want := `{
		"model": "gpt-test",
		"stream": true,
		"stream_options": {"include_usage": true},
		"store": false,
		"max_completion_tokens": 1234,
		"temperature": 0.25,
		"reasoning_effort": "low",
		"prompt_cache_key": "sess-1",
		"prompt_cache_retention": "24h",
		"tools": [{"type": "function", "function": {"name": "read", "description": "Read a file.",
			"parameters": {"type":"object","properties":{"path":{"type":"string"}}}, "strict": false}}],
		"messages": [
			{"role": "developer", "content": "You are terse."},
			{"role": "user", "content": [
				{"type": "text", "text": "what is this?"},
				{"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}]},
			{"role": "assistant", "content": null, "tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"x.png\"}"}}]},
			{"role": "tool", "content": "` + imageOnlyResult + `", "tool_call_id": "c1"},
			{"role": "user", "content": [
				{"type": "text", "text": "` + toolImagesFollow + `"},
				{"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}}]},
			{"role": "user", "content": [{"type": "text", "text": "and now?"}]}
		]
	}`
	assert.JSONEq(t, want, string(r.Body))
}

func TestChatCompatFlagsChangeRequest(t *testing.T) {
	history := []llm.Message{
		llm.UserText("hi"),
		&llm.AssistantMessage{API: llm.APIOpenAICompletions, Provider: "openai", Model: "gpt-test", StopReason: llm.StopToolUse,
			Content: llm.Contents{
				llm.ThinkingContent{Thinking: "pondering", ThinkingSignature: "reasoning_content"},
				llm.ToolCall{ID: "c1", Name: "ls", Arguments: json.RawMessage(`{}`)},
			}},
		&llm.ToolResultMessage{ToolCallID: "c1", ToolName: "ls", Content: llm.Contents{llm.TextContent{Text: "a"}}},
		llm.UserText("thanks"),
	}
	tools := []llm.ToolSpec{{Name: "ls", Description: "List.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	cases := []struct {
		name      string
		compat    string
		reasoning bool
		check     func(t *testing.T, body map[string]any)
	}{
		{"defaults", `{}`, true, func(t *testing.T, body map[string]any) {
			msgs := body["messages"].([]any)
			assert.Equal(t, "developer", msgs[0].(map[string]any)["role"])
			assert.Equal(t, float64(16000), body["max_completion_tokens"])
			assert.NotContains(t, body, "max_tokens")
			assert.Equal(t, "medium", body["reasoning_effort"])
			assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
			assert.Equal(t, false, body["store"])
			assert.Contains(t, body["tools"].([]any)[0].(map[string]any)["function"], "strict")
			assert.Len(t, msgs, 5)
		}},
		{"no reasoning model uses system", `{}`, false, func(t *testing.T, body map[string]any) {
			assert.Equal(t, "system", body["messages"].([]any)[0].(map[string]any)["role"])
			assert.NotContains(t, body, "reasoning_effort")
		}},
		{"system role", `{"supportsDeveloperRole":false}`, true, func(t *testing.T, body map[string]any) {
			assert.Equal(t, "system", body["messages"].([]any)[0].(map[string]any)["role"])
		}},
		{"max_tokens field", `{"maxTokensField":"max_tokens"}`, true, func(t *testing.T, body map[string]any) {
			assert.Equal(t, float64(16000), body["max_tokens"])
			assert.NotContains(t, body, "max_completion_tokens")
		}},
		{"no reasoning_effort", `{"supportsReasoningEffort":false}`, true, func(t *testing.T, body map[string]any) {
			assert.NotContains(t, body, "reasoning_effort")
		}},
		{"effort map", `{"reasoningEffortMap":{"medium":"balanced"}}`, true, func(t *testing.T, body map[string]any) {
			assert.Equal(t, "balanced", body["reasoning_effort"])
		}},
		{"no usage in streaming", `{"supportsUsageInStreaming":false}`, true, func(t *testing.T, body map[string]any) {
			assert.NotContains(t, body, "stream_options")
		}},
		{"no store", `{"supportsStore":false}`, true, func(t *testing.T, body map[string]any) {
			assert.NotContains(t, body, "store")
		}},
		{"no strict", `{"supportsStrictMode":false}`, true, func(t *testing.T, body map[string]any) {
			assert.NotContains(t, body["tools"].([]any)[0].(map[string]any)["function"], "strict")
		}},
		{"tool result name", `{"requiresToolResultName":true}`, true, func(t *testing.T, body map[string]any) {
			assert.Equal(t, "ls", body["messages"].([]any)[3].(map[string]any)["name"])
		}},
		{"assistant after tool result", `{"requiresAssistantAfterToolResult":true}`, true, func(t *testing.T, body map[string]any) {
			msgs := body["messages"].([]any)
			require.Len(t, msgs, 6)
			assert.Equal(t, "", msgs[2].(map[string]any)["content"])
			assert.Equal(t, map[string]any{"role": "assistant", "content": bridgeAfterResults}, msgs[4])
		}},
		{"thinking as text", `{"requiresThinkingAsText":true}`, true, func(t *testing.T, body map[string]any) {
			asst := body["messages"].([]any)[2].(map[string]any)
			assert.Equal(t, []any{map[string]any{"type": "text", "text": "pondering"}}, asst["content"])
			assert.NotContains(t, asst, "reasoning_content")
		}},
		{"thinking replayed", `{}`, true, func(t *testing.T, body map[string]any) {
			asst := body["messages"].([]any)[2].(map[string]any)
			assert.Equal(t, "pondering", asst["reasoning_content"])
			assert.Nil(t, asst["content"])
		}},
		{"deepseek format", `{"thinkingFormat":"deepseek"}`, true, func(t *testing.T, body map[string]any) {
			assert.Equal(t, map[string]any{"type": "enabled"}, body["thinking"])
			assert.Equal(t, "medium", body["reasoning_effort"])
		}},
		{"openrouter format", `{"thinkingFormat":"openrouter"}`, true, func(t *testing.T, body map[string]any) {
			assert.Equal(t, map[string]any{"effort": "medium"}, body["reasoning"])
			assert.NotContains(t, body, "reasoning_effort")
		}},
		{"qwen chat template", `{"thinkingFormat":"qwen-chat-template"}`, true, func(t *testing.T, body map[string]any) {
			assert.Equal(t, map[string]any{"enable_thinking": true, "preserve_thinking": true}, body["chat_template_kwargs"])
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Text("ok"))
			m := chatModel(srv)
			m.Reasoning = tc.reasoning
			m.Compat = json.RawMessage(tc.compat)
			req := &llm.Request{SystemPrompt: "sys", Messages: history, Tools: tools,
				Options: llm.Options{Thinking: llm.ThinkingMedium}}
			if !tc.reasoning {
				req.Options.Thinking = llm.ThinkingOff
			}
			_, msg := chatRun(t, srv, m, req)
			require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
			tc.check(t, srv.LastRequest(t).JSON())
		})
	}
}

func TestChatCompatDetection(t *testing.T) {
	local := detectCompat(&llm.Model{Provider: "ollama", BaseURL: "http://localhost:11434/v1"})
	assert.True(t, local.supportsDeveloperRole)
	assert.True(t, local.supportsStore)
	assert.True(t, local.supportsReasoningEffort)
	assert.True(t, local.supportsUsageInStreaming)
	assert.Equal(t, fieldMaxCompletionTokens, local.maxTokensField)
	assert.Equal(t, ThinkingOpenAI, local.thinkingFormat)

	ds := detectCompat(&llm.Model{Provider: "custom", BaseURL: "https://api.deepseek.com/v1"})
	assert.False(t, ds.supportsDeveloperRole)
	assert.False(t, ds.supportsStore)
	assert.True(t, ds.requiresReasoningContent)
	assert.Equal(t, ThinkingDeepSeek, ds.thinkingFormat)

	ms := detectCompat(&llm.Model{Provider: "moonshotai", BaseURL: "https://api.moonshot.ai/v1"})
	assert.Equal(t, fieldMaxTokens, ms.maxTokensField)
	assert.False(t, ms.supportsReasoningEffort)
	assert.False(t, ms.supportsStrictMode)

	grok := detectCompat(&llm.Model{Provider: "xai", BaseURL: "https://api.x.ai/v1"})
	assert.False(t, grok.supportsReasoningEffort)

	or := detectCompat(&llm.Model{Provider: "openrouter", BaseURL: "https://openrouter.ai/api/v1"})
	assert.Equal(t, ThinkingOpenRouter, or.thinkingFormat)

	// Explicit compat beats detection.
	m := &llm.Model{Provider: "deepseek", BaseURL: "https://api.deepseek.com", Compat: json.RawMessage(`{"supportsDeveloperRole":true,"thinkingFormat":"openai"}`)}
	c := resolveCompat(m)
	assert.True(t, c.supportsDeveloperRole)
	assert.Equal(t, ThinkingOpenAI, c.thinkingFormat)
}

func TestChatOffEffortFromThinkingLevelMap(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	m := chatModel(srv)
	m.Reasoning = true
	minimal := "minimal"
	m.ThinkingLevelMap = map[llm.ThinkingLevel]*string{llm.ThinkingOff: &minimal}
	req := userReq("hi")
	req.Options.Thinking = llm.ThinkingOff
	_, msg := chatRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, "minimal", srv.LastRequest(t).JSON()["reasoning_effort"])
}

// OpenRouter's streamed usage says what it billed: that becomes the
// total, marked as the provider's; other servers' cost fields are not
// read.
func TestChatOpenRouterBilledCost(t *testing.T) {
	usage := `{"prompt_tokens":1000,"completion_tokens":200,"cost":0.5,"is_byok":false}`
	for _, tc := range []struct {
		model    *llm.Model
		total    float64
		provider bool
	}{
		{&llm.Model{ID: "x", Provider: "openrouter", Cost: llm.ModelCost{Input: 2, Output: 8}}, 0.5, true},
		{&llm.Model{ID: "x", Provider: "other", BaseURL: "https://example.test/v1", Cost: llm.ModelCost{Input: 2, Output: 8}}, (2000 + 1600) / 1e6, false},
	} {
		s := chatState{b: llm.NewBuilder(tc.model), openRouter: llm.IsOpenRouter(tc.model)}
		s.usage(usage)
		msg := s.b.Done("").Partial
		assert.InDelta(t, tc.total, msg.Usage.Cost.Total, 1e-12)
		assert.InDelta(t, 2000/1e6, msg.Usage.Cost.Input, 1e-12, "the parts stay the catalog's")
		require.NotNil(t, msg.Usage.Cost.TotalFromProvider)
		assert.Equal(t, tc.provider, *msg.Usage.Cost.TotalFromProvider)
	}
}
