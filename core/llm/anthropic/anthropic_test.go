package anthropic

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testModel is a budget-thinking Claude pointed at url.
func testModel(url string) *llm.Model {
	return &llm.Model{
		ID:            "claude-sonnet-4-5",
		Name:          "Claude Sonnet 4.5",
		API:           llm.APIAnthropicMessages,
		Provider:      "anthropic",
		BaseURL:       url,
		Reasoning:     true,
		Input:         []string{"text", "image"},
		Cost:          llm.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		ContextWindow: 200000,
		MaxTokens:     64000,
	}
}

func userReq(text string) *llm.Request {
	return &llm.Request{
		SystemPrompt: "You are terse.",
		Messages:     []llm.Message{llm.UserText(text)},
		Options:      llm.Options{APIKey: "sk-test"},
	}
}

// collect drains a stream, checking the invariant every provider keeps:
// start first, then exactly one terminal event, last.
func collect(t *testing.T, seq iter.Seq[llm.StreamEvent]) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	var evs []llm.StreamEvent
	for ev := range seq {
		evs = append(evs, ev)
	}
	checkSequence(t, evs)
	return evs, evs[len(evs)-1].Partial
}

func checkSequence(t *testing.T, evs []llm.StreamEvent) {
	t.Helper()
	require.NotEmpty(t, evs)
	assert.Equal(t, llm.EventStart, evs[0].Type, "first event")
	terminals := 0
	for _, ev := range evs {
		if ev.Terminal() {
			terminals++
		}
		require.NotNil(t, ev.Partial, "event %s without partial", ev.Type)
	}
	assert.Equal(t, 1, terminals, "terminal events")
	assert.True(t, evs[len(evs)-1].Terminal(), "last event is %s", evs[len(evs)-1].Type)
}

func deltas(evs []llm.StreamEvent, typ llm.StreamEventType, idx int) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Type == typ && ev.ContentIndex == idx {
			b.WriteString(ev.Delta)
		}
	}
	return b.String()
}

func countType(evs []llm.StreamEvent, typ llm.StreamEventType) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

func TestTextStreamsAcrossSplitFrames(t *testing.T) {
	text := "Héllo, wörld — ünïcode 🙂 survives tiny chunks."
	srv := llmtest.New(t, llmtest.Turn{
		Blocks:     []llmtest.Block{llmtest.Say(text)},
		ChunkSize:  1,
		WriteSize:  7,
		ResponseID: "msg_abc",
	})
	model := testModel(srv.AnthropicURL())
	evs, msg := collect(t, New().Stream(t.Context(), model, userReq("hi")))

	assert.Equal(t, llm.EventDone, evs[len(evs)-1].Type)
	assert.Equal(t, llm.StopStop, msg.StopReason)
	assert.Equal(t, "msg_abc", msg.ResponseID)
	assert.Equal(t, text, msg.Content.Text())
	assert.Equal(t, text, deltas(evs, llm.EventTextDelta, 0))
	assert.Equal(t, 1, countType(evs, llm.EventTextStart))
	assert.Equal(t, 1, countType(evs, llm.EventTextEnd))
	assert.Equal(t, llm.APIAnthropicMessages, msg.API)
	assert.Equal(t, "anthropic", msg.Provider)
	assert.Equal(t, model.ID, msg.Model)

	r := srv.LastRequest(t)
	assert.Equal(t, "/v1/messages", r.Path)
	assert.Equal(t, "sk-test", r.Header.Get("X-Api-Key"))
	assert.Equal(t, "2023-06-01", r.Header.Get("Anthropic-Version"))
	body := r.JSON()
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, model.ID, body["model"])
	// Without thinking: max_tokens is capped at 32000 and thinking is
	// explicitly disabled on a reasoning model.
	assert.EqualValues(t, 32000, body["max_tokens"])
	assert.Equal(t, map[string]any{"type": "disabled"}, body["thinking"])
}

func TestThinkingSignatureRoundTrip(t *testing.T) {
	sig := "EqQBCkYIBxgCKkDm4bnZ0h1E+oE4Rp3f/2Qn8xJtY5b3=="
	srv := llmtest.New(t, llmtest.Turn{
		Blocks:    []llmtest.Block{llmtest.Thinking("Let me think about primes.", sig), llmtest.Say("7 is prime.")},
		ChunkSize: 2,
		WriteSize: 5,
	}, llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL())
	req := userReq("is 7 prime?")
	req.Options.Thinking = llm.ThinkingLow
	evs, msg := collect(t, New().Stream(t.Context(), model, req))

	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	require.Len(t, msg.Content, 2)
	th, ok := msg.Content[0].(llm.ThinkingContent)
	require.True(t, ok)
	assert.Equal(t, "Let me think about primes.", th.Thinking)
	assert.Equal(t, sig, th.ThinkingSignature)
	assert.Equal(t, "Let me think about primes.", deltas(evs, llm.EventThinkingDelta, 0))
	assert.Equal(t, 1, countType(evs, llm.EventThinkingEnd))

	// The next call sends the thinking back, signed, untouched.
	next := &llm.Request{
		Messages: []llm.Message{req.Messages[0], msg, llm.UserText("and 9?")},
		Options:  llm.Options{APIKey: "k", Thinking: llm.ThinkingLow},
	}
	_, msg2 := collect(t, New().Stream(t.Context(), model, next))
	require.Equal(t, llm.StopStop, msg2.StopReason, msg2.ErrorMessage)

	var body struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(srv.LastRequest(t).Body, &body))
	require.Len(t, body.Messages, 3)
	asst := body.Messages[1]
	assert.Equal(t, "assistant", asst.Role)
	require.Len(t, asst.Content, 2)
	assert.Equal(t, map[string]any{"type": "thinking", "thinking": "Let me think about primes.", "signature": sig}, asst.Content[0])
	assert.Equal(t, map[string]any{"type": "text", "text": "7 is prime."}, asst.Content[1])
}

func TestThinkingFromAnotherModelBecomesText(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL())
	foreign := &llm.AssistantMessage{
		API: llm.APIOpenAIResponses, Provider: "openai", Model: "gpt-5",
		Content: llm.Contents{
			llm.ThinkingContent{Thinking: "pondering", ThinkingSignature: "opaque-openai"},
			llm.ThinkingContent{Redacted: true, ThinkingSignature: "secret"},
			llm.TextContent{Text: "answer"},
		},
		StopReason: llm.StopStop,
	}
	unsigned := &llm.AssistantMessage{
		API: model.API, Provider: model.Provider, Model: model.ID,
		Content:    llm.Contents{llm.ThinkingContent{Thinking: "cut short"}, llm.TextContent{Text: "partial"}},
		StopReason: llm.StopStop,
	}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("a"), foreign, llm.UserText("b"), unsigned, llm.UserText("c")}}
	_, msg := collect(t, New().Stream(t.Context(), model, req))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)

	msgs := srv.LastRequest(t).JSON()["messages"].([]any)
	require.Len(t, msgs, 5)
	first := msgs[1].(map[string]any)["content"].([]any)
	assert.Equal(t, []any{
		map[string]any{"type": "text", "text": "pondering"},
		map[string]any{"type": "text", "text": "answer"},
	}, first, "foreign thinking is text, foreign redacted thinking dropped")
	second := msgs[3].(map[string]any)["content"].([]any)
	assert.Equal(t, map[string]any{"type": "text", "text": "cut short"}, second[0], "unsigned thinking is text")
}

func TestRedactedThinkingRoundTrip(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Blocks: []llmtest.Block{
		{Kind: llmtest.KindThinking, Redacted: true, Signature: "opaque-payload"},
		llmtest.Say("done"),
	}}, llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL())
	req := userReq("x")
	req.Options.Thinking = llm.ThinkingHigh
	_, msg := collect(t, New().Stream(t.Context(), model, req))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	th := msg.Content[0].(llm.ThinkingContent)
	assert.True(t, th.Redacted)
	assert.Equal(t, "opaque-payload", th.ThinkingSignature)
	assert.Equal(t, redactedThinkingText, th.Thinking)

	next := &llm.Request{Messages: []llm.Message{req.Messages[0], msg, llm.UserText("more")}}
	collect(t, New().Stream(t.Context(), model, next))
	msgs := srv.LastRequest(t).JSON()["messages"].([]any)
	content := msgs[1].(map[string]any)["content"].([]any)
	assert.Equal(t, map[string]any{"type": "redacted_thinking", "data": "opaque-payload"}, content[0])
}

func TestParallelToolCalls(t *testing.T) {
	argsA := `{"path": "src/main.go", "limit": 20, "nested": {"quote": "a \"b\" c", "emoji": "✨"}}`
	argsB := `{"command":"ls -la | grep \\.go$","timeout":30}`
	srv := llmtest.New(t, llmtest.Turn{
		Blocks: []llmtest.Block{
			llmtest.Say("Reading both."),
			llmtest.Call("toolu_01A", "read", argsA),
			llmtest.Call("toolu_02B", "bash", argsB),
		},
		ChunkSize: 4,
		WriteSize: 3,
	}, llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL())
	req := userReq("look")
	req.Tools = []llm.ToolSpec{
		{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "bash", Description: "Run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
	}
	evs, msg := collect(t, New().Stream(t.Context(), model, req))

	require.Equal(t, llm.StopToolUse, msg.StopReason, msg.ErrorMessage)
	calls := msg.Content.ToolCalls()
	require.Len(t, calls, 2)
	assert.Equal(t, "toolu_01A", calls[0].ID)
	assert.Equal(t, "read", calls[0].Name)
	assert.JSONEq(t, argsA, string(calls[0].Arguments))
	assert.Equal(t, "bash", calls[1].Name)
	assert.JSONEq(t, argsB, string(calls[1].Arguments))

	var ends []*llm.ToolCall
	for _, ev := range evs {
		if ev.Type == llm.EventToolCallEnd {
			ends = append(ends, ev.ToolCall)
		}
	}
	require.Len(t, ends, 2)
	assert.JSONEq(t, argsA, string(ends[0].Arguments))
	assert.JSONEq(t, argsB, string(ends[1].Arguments))
	assert.Equal(t, argsA, deltas(evs, llm.EventToolCallDelta, 1), "deltas carry the raw JSON")
	// Partial arguments are always valid JSON while streaming.
	for _, ev := range evs {
		if ev.Type == llm.EventToolCallDelta {
			tc := ev.Partial.Content[ev.ContentIndex].(llm.ToolCall)
			assert.True(t, len(tc.Arguments) == 0 || json.Valid(tc.Arguments), "partial args %q", tc.Arguments)
		}
	}

	tools := srv.LastRequest(t).JSON()["tools"].([]any)
	require.Len(t, tools, 2)
	read := tools[0].(map[string]any)
	assert.Equal(t, "read", read["name"])
	assert.Equal(t, "Read a file", read["description"])
	assert.Equal(t, true, read["eager_input_streaming"])
	schema := read["input_schema"].(map[string]any)
	assert.Equal(t, "object", schema["type"])
	assert.Equal(t, []any{"path"}, schema["required"])
	assert.Equal(t, false, schema["additionalProperties"])
	assert.Contains(t, schema["properties"], "limit")

	// Results go back as one user message of tool_result blocks, with an
	// image and an error flag where the tool gave them.
	img := llm.ImageContent{Data: "iVBORw0KGgo=", MimeType: "image/png"}
	next := &llm.Request{
		Messages: []llm.Message{
			req.Messages[0], msg,
			&llm.ToolResultMessage{ToolCallID: "toolu_01A", ToolName: "read", Content: llm.Contents{llm.TextContent{Text: "package main"}, img}},
			&llm.ToolResultMessage{ToolCallID: "toolu_02B", ToolName: "bash", Content: llm.Contents{llm.TextContent{Text: "exit 1"}}, IsError: true},
		},
		Options: llm.Options{APIKey: "k"},
	}
	_, msg2 := collect(t, New().Stream(t.Context(), model, next))
	require.Equal(t, llm.StopStop, msg2.StopReason, msg2.ErrorMessage)

	msgs := srv.LastRequest(t).JSON()["messages"].([]any)
	require.Len(t, msgs, 3)
	asst := msgs[1].(map[string]any)["content"].([]any)
	require.Len(t, asst, 3)
	use := asst[1].(map[string]any)
	assert.Equal(t, "tool_use", use["type"])
	assert.Equal(t, "toolu_01A", use["id"])
	gotInput, _ := json.Marshal(use["input"])
	assert.JSONEq(t, argsA, string(gotInput))

	results := msgs[2].(map[string]any)
	assert.Equal(t, "user", results["role"])
	blocks := results["content"].([]any)
	require.Len(t, blocks, 2)
	r0 := blocks[0].(map[string]any)
	assert.Equal(t, "tool_result", r0["type"])
	assert.Equal(t, "toolu_01A", r0["tool_use_id"])
	assert.NotContains(t, r0, "is_error")
	r0c := r0["content"].([]any)
	require.Len(t, r0c, 2)
	assert.Equal(t, map[string]any{"type": "text", "text": "package main"}, r0c[0])
	assert.Equal(t, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}, r0c[1])
	r1 := blocks[1].(map[string]any)
	assert.Equal(t, true, r1["is_error"])
	assert.Equal(t, []any{map[string]any{"type": "text", "text": "exit 1"}}, r1["content"])
}

func TestOrphanToolCallsAndFailedRepliesAreRepaired(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL())
	calls := &llm.AssistantMessage{
		API: model.API, Provider: model.Provider, Model: model.ID,
		Content: llm.Contents{
			llm.ToolCall{ID: "call|weird/id", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)},
			llm.ToolCall{ID: "toolu_b", Name: "read", Arguments: json.RawMessage(`{"path":"b"}`)},
		},
		StopReason: llm.StopToolUse,
	}
	failed := &llm.AssistantMessage{API: model.API, Provider: model.Provider, Model: model.ID,
		Content: llm.Contents{llm.TextContent{Text: "half"}}, StopReason: llm.StopError, ErrorMessage: "boom"}
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("go"),
		calls,
		&llm.ToolResultMessage{ToolCallID: "call|weird/id", ToolName: "read", Content: llm.Contents{llm.TextContent{Text: ""}}},
		llm.UserText("never mind"),
		failed,
		llm.UserText("again"),
	}}
	_, msg := collect(t, New().Stream(t.Context(), model, req))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)

	msgs := srv.LastRequest(t).JSON()["messages"].([]any)
	require.Len(t, msgs, 5, "the failed reply is left out")
	use := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)
	assert.Equal(t, "call_weird_id", use["id"])
	results := msgs[2].(map[string]any)["content"].([]any)
	require.Len(t, results, 2)
	r0 := results[0].(map[string]any)
	assert.Equal(t, "call_weird_id", r0["tool_use_id"])
	assert.NotContains(t, r0, "content", "empty output sends no empty text block")
	r1 := results[1].(map[string]any)
	assert.Equal(t, "toolu_b", r1["tool_use_id"])
	assert.Equal(t, true, r1["is_error"])
	assert.Equal(t, []any{map[string]any{"type": "text", "text": noToolResult}}, r1["content"])
	assert.Equal(t, "never mind", msgs[3].(map[string]any)["content"].([]any)[0].(map[string]any)["text"])
}

func TestImagesInRequest(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("a cat"), llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL())
	img := llm.ImageContent{Data: "R0lGODlhAQABAAAAACw=", MimeType: "image/gif"}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("what is this?", img)}}
	_, msg := collect(t, New().Stream(t.Context(), model, req))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)

	content := srv.LastRequest(t).JSON()["messages"].([]any)[0].(map[string]any)["content"].([]any)
	require.Len(t, content, 2)
	assert.Equal(t, "what is this?", content[0].(map[string]any)["text"])
	image := content[1].(map[string]any)
	assert.Equal(t, "image", image["type"])
	assert.Equal(t, map[string]any{"type": "base64", "media_type": "image/gif", "data": "R0lGODlhAQABAAAAACw="}, image["source"])

	// A text-only model gets a placeholder instead.
	model.Input = []string{"text"}
	collect(t, New().Stream(t.Context(), model, req))
	content = srv.LastRequest(t).JSON()["messages"].([]any)[0].(map[string]any)["content"].([]any)
	require.Len(t, content, 2)
	assert.Equal(t, userImageOmitted, content[1].(map[string]any)["text"])
}

func TestCacheControlPlacement(t *testing.T) {
	srv := llmtest.New(t)
	model := testModel(srv.AnthropicURL())
	build := func(retention string) map[string]any {
		t.Helper()
		srv.Push(llmtest.Text("ok"))
		req := &llm.Request{
			SystemPrompt: "sys",
			Messages: []llm.Message{
				llm.UserText("first"),
				&llm.AssistantMessage{API: model.API, Provider: model.Provider, Model: model.ID, Content: llm.Contents{llm.TextContent{Text: "reply"}}, StopReason: llm.StopStop},
				&llm.UserMessage{Content: llm.Contents{llm.TextContent{Text: "second"}, llm.TextContent{Text: "last block"}}},
			},
			Tools: []llm.ToolSpec{
				{Name: "a", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
				{Name: "b", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			},
			Options: llm.Options{CacheRetention: retention},
		}
		_, msg := collect(t, New().Stream(t.Context(), model, req))
		require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
		return srv.LastRequest(t).JSON()
	}
	ephemeral := map[string]any{"type": "ephemeral"}

	body := build("")
	sys := body["system"].([]any)[0].(map[string]any)
	assert.Equal(t, "sys", sys["text"])
	assert.Equal(t, ephemeral, sys["cache_control"])
	msgs := body["messages"].([]any)
	last := msgs[2].(map[string]any)["content"].([]any)
	assert.NotContains(t, last[0], "cache_control")
	assert.Equal(t, ephemeral, last[1].(map[string]any)["cache_control"])
	assert.NotContains(t, msgs[0].(map[string]any)["content"].([]any)[0], "cache_control")
	tools := body["tools"].([]any)
	assert.NotContains(t, tools[0], "cache_control")
	assert.Equal(t, ephemeral, tools[1].(map[string]any)["cache_control"])

	body = build("long")
	assert.Equal(t, map[string]any{"type": "ephemeral", "ttl": "1h"}, body["system"].([]any)[0].(map[string]any)["cache_control"])

	body = build("none")
	raw, _ := json.Marshal(body)
	assert.NotContains(t, string(raw), "cache_control")
}

func TestThinkingBudgetAndMaxTokens(t *testing.T) {
	srv := llmtest.New(t)
	run := func(model *llm.Model, opts llm.Options) (map[string]any, http.Header) {
		t.Helper()
		srv.Push(llmtest.Text("ok"))
		req := &llm.Request{Messages: []llm.Message{llm.UserText("q")}, Options: opts}
		_, msg := collect(t, New().Stream(t.Context(), model, req))
		require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
		r := srv.LastRequest(t)
		return r.JSON(), r.Header
	}
	temp := 0.5
	model := testModel(srv.AnthropicURL())

	body, hdr := run(model, llm.Options{Thinking: llm.ThinkingMedium, Temperature: &temp})
	assert.Equal(t, map[string]any{"type": "enabled", "budget_tokens": float64(8192), "display": "summarized"}, body["thinking"])
	assert.EqualValues(t, 32000+8192, body["max_tokens"])
	assert.NotContains(t, body, "temperature", "temperature is not sent with thinking")
	assert.Contains(t, hdr.Get("Anthropic-Beta"), betaInterleavedThinking)

	body, _ = run(model, llm.Options{Thinking: llm.ThinkingHigh, MaxTokens: 4000, ThinkingBudgets: map[llm.ThinkingLevel]int{llm.ThinkingHigh: 5000}})
	assert.EqualValues(t, 5000, body["thinking"].(map[string]any)["budget_tokens"])
	assert.EqualValues(t, 9000, body["max_tokens"])

	// A small model: max_tokens stops at its limit and the budget shrinks
	// below it, leaving room for the answer.
	small := testModel(srv.AnthropicURL())
	small.MaxTokens = 8000
	body, _ = run(small, llm.Options{Thinking: llm.ThinkingMedium})
	assert.EqualValues(t, 8000, body["max_tokens"])
	assert.EqualValues(t, 8000-1024, body["thinking"].(map[string]any)["budget_tokens"])

	body, _ = run(model, llm.Options{Thinking: llm.ThinkingOff, Temperature: &temp})
	assert.Equal(t, map[string]any{"type": "disabled"}, body["thinking"])
	assert.Equal(t, 0.5, body["temperature"])

	plain := testModel(srv.AnthropicURL())
	plain.Reasoning = false
	body, _ = run(plain, llm.Options{Thinking: llm.ThinkingHigh})
	assert.NotContains(t, body, "thinking")

	// Adaptive models take an effort instead of a budget.
	adaptive := testModel(srv.AnthropicURL())
	adaptive.ID = "claude-opus-4-6"
	body, hdr = run(adaptive, llm.Options{Thinking: llm.ThinkingMedium})
	assert.Equal(t, map[string]any{"type": "adaptive", "display": "summarized"}, body["thinking"])
	assert.Equal(t, map[string]any{"effort": "medium"}, body["output_config"])
	assert.EqualValues(t, 32000, body["max_tokens"])
	assert.NotContains(t, hdr.Get("Anthropic-Beta"), betaInterleavedThinking)

	maxEffort := "max"
	adaptive.ThinkingLevelMap = map[llm.ThinkingLevel]*string{llm.ThinkingXHigh: &maxEffort}
	body, _ = run(adaptive, llm.Options{Thinking: llm.ThinkingXHigh})
	assert.Equal(t, map[string]any{"effort": "max"}, body["output_config"])
}

func TestUsageAndCost(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Blocks: []llmtest.Block{llmtest.Say("counted")},
		Usage:  llmtest.Usage{Input: 1000, Output: 500, CacheRead: 20000, CacheWrite: 3000},
	})
	model := testModel(srv.AnthropicURL())
	evs, msg := collect(t, New().Stream(t.Context(), model, userReq("x")))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)

	u := msg.Usage
	assert.Equal(t, 1000, u.Input)
	assert.Equal(t, 500, u.Output)
	assert.Equal(t, 20000, u.CacheRead)
	assert.Equal(t, 3000, u.CacheWrite)
	assert.Equal(t, 24500, u.TotalTokens)
	assert.InDelta(t, 0.003, u.Cost.Input, 1e-12)
	assert.InDelta(t, 0.0075, u.Cost.Output, 1e-12)
	assert.InDelta(t, 0.006, u.Cost.CacheRead, 1e-12)
	assert.InDelta(t, 0.01125, u.Cost.CacheWrite, 1e-12)
	assert.InDelta(t, 0.003+0.0075+0.006+0.01125, u.Cost.Total, 1e-12)

	// Input counts are known from message_start on, before any output.
	var firstText *llm.AssistantMessage
	for _, ev := range evs {
		if ev.Type == llm.EventTextStart {
			firstText = ev.Partial
			break
		}
	}
	require.NotNil(t, firstText)
	assert.Equal(t, 1000, firstText.Usage.Input)
	assert.Equal(t, 20000, firstText.Usage.CacheRead)
}

func TestStopReasons(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("trunc")}, StopReason: "length"},
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("no")}, StopReason: "refusal"},
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("hm")}, StopReason: "pause_turn"},
	)
	model := testModel(srv.AnthropicURL())

	_, msg := collect(t, New().Stream(t.Context(), model, userReq("x")))
	assert.Equal(t, llm.StopLength, msg.StopReason)

	evs, msg := collect(t, New().Stream(t.Context(), model, userReq("x")))
	assert.Equal(t, llm.EventError, evs[len(evs)-1].Type)
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "refusal")
	assert.Equal(t, "no", msg.Content.Text(), "the partial reply is kept")

	_, msg = collect(t, New().Stream(t.Context(), model, userReq("x")))
	assert.Equal(t, llm.StopStop, msg.StopReason)
}

func TestHTTPErrorsKeepStatusAndBody(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{429, "", `429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
		{500, "", `500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}`},
		{529, "", `529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		{502, "upstream connect error", `502 upstream connect error`},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Turn{Fault: &llmtest.Fault{Status: tc.status, Body: tc.body, RetryAfter: "0"}}, llmtest.Text("retried"))
			evs, msg := collect(t, New().Stream(t.Context(), testModel(srv.AnthropicURL()), userReq("x")))
			assert.Equal(t, llm.EventError, evs[len(evs)-1].Type)
			assert.Equal(t, llm.StopError, msg.StopReason)
			assert.Equal(t, tc.want, msg.ErrorMessage)
			assert.Len(t, srv.Requests(), 1, "the SDK must not retry")
		})
	}
}

func TestCutStreamIsAnError(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Blocks:    []llmtest.Block{llmtest.Say("this reply will be cut short")},
		ChunkSize: 4,
		Fault:     &llmtest.Fault{CutAfter: 6},
	}, llmtest.Turn{
		Blocks: []llmtest.Block{llmtest.Say("never sent")},
		Fault:  &llmtest.Fault{Cut: true},
	})
	model := testModel(srv.AnthropicURL())
	evs, msg := collect(t, New().Stream(t.Context(), model, userReq("x")))
	assert.Equal(t, llm.EventError, evs[len(evs)-1].Type)
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "ended unexpectedly")
	assert.NotEmpty(t, msg.Content.Text(), "what arrived is kept")

	// Cut before the first event.
	_, msg = collect(t, New().Stream(t.Context(), model, userReq("x")))
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "ended unexpectedly")
	assert.Empty(t, msg.Content)
}

func TestStreamWithoutMessageStopIsAnError(t *testing.T) {
	body := "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half"}}` + "\n\n"
	srv := llmtest.Recorded(t, []byte(body))
	evs, msg := collect(t, New().Stream(t.Context(), testModel(srv.URL), userReq("x")))
	assert.Equal(t, llm.EventError, evs[len(evs)-1].Type)
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "ended unexpectedly")
	assert.Equal(t, "half", msg.Content.Text())
}

func TestStalledStreamAbortsOnCancel(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Blocks: []llmtest.Block{llmtest.Say("waiting forever")},
		Fault:  &llmtest.Fault{StallAfter: 4},
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelled time.Time
	var evs []llm.StreamEvent
	for ev := range New().Stream(ctx, testModel(srv.AnthropicURL()), userReq("x")) {
		evs = append(evs, ev)
		if ev.Type == llm.EventTextDelta && cancelled.IsZero() {
			cancelled = time.Now()
			cancel()
		}
	}
	require.False(t, cancelled.IsZero(), "no text arrived before the stall")
	assert.Less(t, time.Since(cancelled), 2*time.Second, "cancel must end the call promptly")
	checkSequence(t, evs)
	msg := evs[len(evs)-1].Partial
	assert.Equal(t, llm.StopAborted, msg.StopReason)
	assert.Equal(t, "Request was aborted", msg.ErrorMessage)
}

func TestConsumerStopsEarly(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say(strings.Repeat("long reply ", 200))}, ChunkSize: 8})
	n := 0
	for ev := range New().Stream(t.Context(), testModel(srv.AnthropicURL()), userReq("x")) {
		n++
		if ev.Type == llm.EventTextDelta {
			break
		}
	}
	assert.Equal(t, 3, n) // start, text_start, text_delta; goleak checks the connection is released
}

func TestEnvironmentIsIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Env-Header: leaked")
	srv := llmtest.New(t, llmtest.Text("ok"), llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL())

	_, msg := collect(t, New().Stream(t.Context(), model, userReq("x")))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	h := srv.LastRequest(t).Header
	assert.Equal(t, "sk-test", h.Get("X-Api-Key"))
	assert.Empty(t, h.Get("Authorization"))
	assert.Empty(t, h.Get("X-Env-Header"))

	// No key in the options means no key on the wire, not the env's.
	req := userReq("x")
	req.Options.APIKey = ""
	_, msg = collect(t, New().Stream(t.Context(), model, req))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	h = srv.LastRequest(t).Header
	assert.Empty(t, h.Get("X-Api-Key"))
	assert.Empty(t, h.Get("Authorization"))
}

func TestHeadersAndHTTPClient(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL())
	model.Headers = map[string]string{"X-Model": "m", "X-Both": "model"}
	var calls atomic.Int32
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	req := userReq("x")
	req.Options.Headers = map[string]string{"X-Both": "options", "X-Opt": "o"}
	req.Options.HTTPClient = client
	_, msg := collect(t, New().Stream(t.Context(), model, req))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)

	h := srv.LastRequest(t).Header
	assert.Equal(t, "m", h.Get("X-Model"))
	assert.Equal(t, "o", h.Get("X-Opt"))
	assert.Equal(t, "options", h.Get("X-Both"), "options override the model")
	assert.Equal(t, "sk-test", h.Get("X-Api-Key"))
	assert.EqualValues(t, 1, calls.Load(), "the call's HTTP client is used")
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestBaseURLWithPathPrefix(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	model := testModel(srv.AnthropicURL() + "/proxy/anthropic")
	_, msg := collect(t, New().Stream(t.Context(), model, userReq("x")))
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	assert.Equal(t, "/proxy/anthropic/v1/messages", srv.LastRequest(t).Path)
}

func TestToolInputInStartEvent(t *testing.T) {
	// Some Anthropic-compatible servers send the whole input with the
	// block's start and no deltas.
	frame := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	body := frame("message_start", `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`) +
		frame("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_x","name":"ls","input":{"path":"."}}}`) +
		frame("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		frame("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`) +
		frame("message_stop", `{"type":"message_stop"}`)
	srv := llmtest.Recorded(t, []byte(body))
	evs, msg := collect(t, New().Stream(t.Context(), testModel(srv.URL), userReq("x")))
	require.Equal(t, llm.StopToolUse, msg.StopReason, msg.ErrorMessage)
	assert.JSONEq(t, `{"path":"."}`, string(msg.Content.ToolCalls()[0].Arguments))
	assert.Equal(t, 1, countType(evs, llm.EventToolCallEnd))
}
