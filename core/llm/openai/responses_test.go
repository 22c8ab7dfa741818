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

func respModel(srv *llmtest.Server) *llm.Model {
	return testModel(llm.APIOpenAIResponses, srv.OpenAIURL())
}

func respRun(t *testing.T, srv *llmtest.Server, m *llm.Model, req *llm.Request) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	req.Options.HTTPClient = srv.Client()
	return run(t, context.Background(), NewResponses(), m, req)
}

func TestResponsesTextSplitAcrossTinyWrites(t *testing.T) {
	text := "Grüße aus dem Stream 🌊, piece by piece."
	turn := llmtest.Text(text)
	turn.ChunkSize = 1
	turn.WriteSize = 3
	turn.Usage = llmtest.Usage{Input: 300, Output: 40, CacheRead: 100}
	srv := llmtest.New(t, turn)

	evs, msg := respRun(t, srv, respModel(srv), userReq("hi"))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, "/v1/responses", srv.LastRequest(t).Path)
	ts := types(evs)
	assert.Equal(t, []llm.StreamEventType{llm.EventStart, llm.EventTextStart}, ts[:2])
	assert.Equal(t, []llm.StreamEventType{llm.EventTextEnd, llm.EventDone}, ts[len(ts)-2:])
	assert.Equal(t, text, deltas(evs, llm.EventTextDelta))
	require.Len(t, msg.Content, 1)
	assert.Equal(t, llm.TextContent{Text: text, TextSignature: `{"v":1,"id":"msg_1_0"}`}, msg.Content[0])
	assert.Equal(t, "resp_1", msg.ResponseID)
	assert.Equal(t, 300, msg.Usage.Input)
	assert.Equal(t, 100, msg.Usage.CacheRead)
	assert.Equal(t, 40, msg.Usage.Output)
	assert.Equal(t, 440, msg.Usage.TotalTokens)
	assert.InDelta(t, (300*2+40*8+100*0.5)/1e6, msg.Usage.Cost.Total, 1e-12)
}

func TestResponsesToolCalls(t *testing.T) {
	a := `{"path":"src/main.go","offset":1,"limit":200}`
	b := `{"pattern":"func \\w+\\(","glob":"**/*.go"}`
	turn := llmtest.ToolCalls(llmtest.Call("call_a", "read", a), llmtest.Call("call_b", "grep", b))
	turn.ChunkSize = 5
	turn.WriteSize = 7
	srv := llmtest.New(t, turn)

	evs, msg := respRun(t, srv, respModel(srv), userReq("go"))
	require.Equal(t, llm.StopToolUse, msg.StopReason, msg.ErrorMessage)
	calls := msg.Content.ToolCalls()
	require.Len(t, calls, 2)
	assert.Equal(t, "call_a|fc_1_0", calls[0].ID)
	assert.Equal(t, "read", calls[0].Name)
	assert.JSONEq(t, a, string(calls[0].Arguments))
	assert.Equal(t, "call_b|fc_1_1", calls[1].ID)
	assert.JSONEq(t, b, string(calls[1].Arguments))
	assert.Equal(t, a+b, deltas(evs, llm.EventToolCallDelta))
}

func TestResponsesReasoningRoundTrip(t *testing.T) {
	turn := llmtest.Turn{Blocks: []llmtest.Block{
		llmtest.Thinking("First I look.\n\nThen I read.", "gAAAA-encrypted=="),
		llmtest.Say("Reading it."),
		llmtest.Call("call_7", "read", `{"path":"go.mod"}`),
	}}
	srv := llmtest.New(t, turn, llmtest.Text("It is a Go module."))
	m := respModel(srv)
	m.Reasoning = true

	req := userReq("what is go.mod?")
	req.SystemPrompt = "Be brief."
	req.Options.Thinking = llm.ThinkingHigh
	evs, first := respRun(t, srv, m, req)
	require.Equal(t, llm.StopToolUse, first.StopReason, first.ErrorMessage)
	require.Len(t, first.Content, 3)
	th := first.Content[0].(llm.ThinkingContent)
	assert.Equal(t, "First I look.\n\nThen I read.", th.Thinking)
	assert.Equal(t, th.Thinking, deltas(evs, llm.EventThinkingDelta))
	var item map[string]any
	require.NoError(t, json.Unmarshal([]byte(th.ThinkingSignature), &item))
	assert.Equal(t, "reasoning", item["type"])
	assert.Equal(t, "rs_1_0", item["id"])
	assert.Equal(t, "gAAAA-encrypted==", item["encrypted_content"])

	body := srv.LastRequest(t).JSON()
	assert.Equal(t, map[string]any{"effort": "high", "summary": "auto"}, body["reasoning"])
	assert.Equal(t, []any{"reasoning.encrypted_content"}, body["include"])
	assert.Equal(t, false, body["store"])

	req.Messages = append(req.Messages, first, &llm.ToolResultMessage{
		ToolCallID: "call_7|fc_1_2", ToolName: "read",
		Content: llm.Contents{llm.TextContent{Text: "module example.com/x"}},
	})
	_, second := respRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, second.StopReason, second.ErrorMessage)
	input := srv.LastRequest(t).JSON()["input"].([]any)
	require.Len(t, input, 6)
	assert.Equal(t, map[string]any{"role": "developer", "content": "Be brief."}, input[0])
	assert.Equal(t, map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "what is go.mod?"}}}, input[1])
	assert.JSONEq(t, th.ThinkingSignature, jsonOf(t, input[2]), "reasoning item replayed verbatim")
	assert.JSONEq(t, `{"type":"message","role":"assistant","status":"completed","id":"msg_1_1",
		"content":[{"type":"output_text","text":"Reading it.","annotations":[]}]}`, jsonOf(t, input[3]))
	assert.JSONEq(t, `{"type":"function_call","id":"fc_1_2","call_id":"call_7","name":"read","arguments":"{\"path\":\"go.mod\"}"}`, jsonOf(t, input[4]))
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_7","output":"module example.com/x"}`, jsonOf(t, input[5]))
}

func TestResponsesRedactedReasoningKeepsItem(t *testing.T) {
	turn := llmtest.Turn{Blocks: []llmtest.Block{
		{Kind: llmtest.KindThinking, Redacted: true, Signature: "opaque"},
		llmtest.Say("ok"),
	}}
	srv := llmtest.New(t, turn)
	m := respModel(srv)
	m.Reasoning = true
	_, msg := respRun(t, srv, m, userReq("hi"))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	th := msg.Content[0].(llm.ThinkingContent)
	assert.Empty(t, th.Thinking)
	assert.Contains(t, th.ThinkingSignature, `"encrypted_content":"opaque"`)
}

func TestResponsesRequestShape(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	m := respModel(srv)
	img := llm.ImageContent{Data: "iVBORw0=", MimeType: "image/png"}
	req := &llm.Request{
		SystemPrompt: "You are terse.",
		Messages: []llm.Message{
			llm.UserText("look", img),
			&llm.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: llm.StopToolUse,
				Content: llm.Contents{llm.ToolCall{ID: "call_1|fc_1", Name: "shot", Arguments: json.RawMessage(`{}`)}}},
			&llm.ToolResultMessage{ToolCallID: "call_1|fc_1", ToolName: "shot", Content: llm.Contents{llm.TextContent{Text: "here"}, img}},
		},
		Tools:   []llm.ToolSpec{{Name: "shot", Description: "Take a screenshot."}},
		Options: llm.Options{APIKey: "k", SessionID: "s-9"},
	}
	_, msg := respRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	r := srv.LastRequest(t)
	assert.Equal(t, "s-9", r.Header.Get("session_id"))
	want := `{
		"model": "gpt-test",
		"stream": true,
		"store": false,
		"max_output_tokens": 16000,
		"prompt_cache_key": "s-9",
		"tools": [{"type":"function","name":"shot","description":"Take a screenshot.",
			"parameters":{"type":"object","properties":{}},"strict":false}],
		"input": [
			{"role":"system","content":"You are terse."},
			{"role":"user","content":[{"type":"input_text","text":"look"},
				{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,iVBORw0="}]},
			{"type":"function_call","id":"fc_1","call_id":"call_1","name":"shot","arguments":"{}"},
			{"type":"function_call_output","call_id":"call_1","output":[
				{"type":"input_text","text":"here"},
				{"type":"input_image","detail":"auto","image_url":"data:image/png;base64,iVBORw0="}]}
		]
	}`
	assert.JSONEq(t, want, string(r.Body))
}

func TestResponsesForeignToolCallIDs(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	m := respModel(srv)
	long := "call_x|item+with/odd=chars"
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("hi"),
		// Written by Anthropic: the item id is rebuilt from a hash.
		&llm.AssistantMessage{API: llm.APIAnthropicMessages, Provider: "anthropic", Model: "claude", StopReason: llm.StopToolUse,
			Content: llm.Contents{
				llm.ThinkingContent{Thinking: "hmm", ThinkingSignature: "sig"},
				llm.ToolCall{ID: long, Name: "ls", Arguments: json.RawMessage(`{}`)},
			}},
		&llm.ToolResultMessage{ToolCallID: long, ToolName: "ls", Content: llm.Contents{llm.TextContent{Text: "a"}}},
	}}
	_, msg := respRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	input := srv.LastRequest(t).JSON()["input"].([]any)
	require.Len(t, input, 4)
	// Foreign thinking becomes an assistant message.
	assert.Equal(t, "hmm", input[1].(map[string]any)["content"].([]any)[0].(map[string]any)["text"])
	call := input[2].(map[string]any)
	assert.Equal(t, "call_x", call["call_id"])
	assert.Equal(t, "fc_"+shortHash("item+with/odd=chars"), call["id"])
	assert.Equal(t, "call_x", input[3].(map[string]any)["call_id"])
}

func TestResponsesIncompleteIsLength(t *testing.T) {
	turn := llmtest.Text("truncated")
	turn.StopReason = "length"
	turn.Usage = llmtest.Usage{Input: 10, Output: 5}
	srv := llmtest.New(t, turn)
	_, msg := respRun(t, srv, respModel(srv), userReq("hi"))
	assert.Equal(t, llm.StopLength, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, "truncated", msg.Content.Text())
	assert.Equal(t, 5, msg.Usage.Output)
}

func TestResponsesFailedIsError(t *testing.T) {
	turn := llmtest.Text("partial")
	turn.StopReason = "error"
	srv := llmtest.New(t, turn)
	_, msg := respRun(t, srv, respModel(srv), userReq("hi"))
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Equal(t, "server_error: The model failed to generate a response.", msg.ErrorMessage)
}

func TestResponsesOffEffort(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("a"), llmtest.Text("b"))
	m := respModel(srv)
	m.Reasoning = true
	req := userReq("hi")
	_, msg := respRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, map[string]any{"effort": "none"}, srv.LastRequest(t).JSON()["reasoning"])
	assert.NotContains(t, srv.LastRequest(t).JSON(), "include")

	m.ThinkingLevelMap = map[llm.ThinkingLevel]*string{llm.ThinkingOff: nil}
	_, msg = respRun(t, srv, m, req)
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	assert.NotContains(t, srv.LastRequest(t).JSON(), "reasoning")
}
