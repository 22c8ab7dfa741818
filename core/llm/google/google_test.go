package google

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

func TestMain(m *testing.M) {
	// opencensus, pulled in by the SDK's auth dependencies, starts a
	// package-level worker in init.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

func testModel(baseURL string) *llm.Model {
	return &llm.Model{
		ID:            "gemini-2.5-flash",
		Name:          "Gemini 2.5 Flash",
		API:           llm.APIGoogleGenerativeAI,
		Provider:      "google",
		BaseURL:       baseURL,
		Reasoning:     true,
		Input:         []string{"text", "image"},
		Cost:          llm.ModelCost{Input: 0.3, Output: 2.5, CacheRead: 0.075},
		ContextWindow: 1048576,
		MaxTokens:     65536,
	}
}

func request(srv *llmtest.Server, msgs ...llm.Message) *llm.Request {
	return &llm.Request{
		SystemPrompt: "You are terse.",
		Messages:     msgs,
		Options:      llm.Options{APIKey: "test-key", HTTPClient: srv.Client()},
	}
}

func collect(t *testing.T, ctx context.Context, model *llm.Model, req *llm.Request) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	var evs []llm.StreamEvent
	for ev := range New().Stream(ctx, model, req) {
		evs = append(evs, ev)
	}
	require.NotEmpty(t, evs)
	require.Equal(t, llm.EventStart, evs[0].Type)
	last := evs[len(evs)-1]
	require.True(t, last.Terminal(), "last event %s", last.Type)
	for _, ev := range evs[:len(evs)-1] {
		require.False(t, ev.Terminal())
	}
	return evs, last.Partial
}

func types(evs []llm.StreamEvent) []llm.StreamEventType {
	var out []llm.StreamEventType
	for _, ev := range evs {
		if len(out) > 0 && out[len(out)-1] == ev.Type && strings.HasSuffix(string(ev.Type), "_delta") {
			continue
		}
		out = append(out, ev.Type)
	}
	return out
}

func body(t *testing.T, r llmtest.Request) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &m), string(r.Body))
	return m
}

// at walks a decoded JSON value by keys and indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestStreamText(t *testing.T) {
	text := "Hello, wörld — streaming in tiny pieces."
	srv := llmtest.New(t, llmtest.Turn{
		Blocks:     []llmtest.Block{llmtest.Say(text)},
		ChunkSize:  2,
		WriteSize:  1,
		ResponseID: "resp-abc",
	})
	model := testModel(srv.GoogleURL())
	evs, msg := collect(t, context.Background(), model, request(srv, llm.UserText("hi")))

	assert.Equal(t, []llm.StreamEventType{llm.EventStart, llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd, llm.EventDone}, types(evs))
	var deltas strings.Builder
	n := 0
	for _, ev := range evs {
		if ev.Type == llm.EventTextDelta {
			deltas.WriteString(ev.Delta)
			n++
		}
	}
	assert.Greater(t, n, 10)
	assert.Equal(t, text, deltas.String())
	assert.Equal(t, text, msg.Content.Text())
	assert.Equal(t, llm.StopStop, msg.StopReason)
	assert.Equal(t, "resp-abc", msg.ResponseID)
	assert.Equal(t, llm.APIGoogleGenerativeAI, msg.API)
	assert.Equal(t, "gemini-2.5-flash", msg.Model)

	r := srv.LastRequest(t)
	assert.Equal(t, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", r.Path)
	assert.Equal(t, "test-key", r.Header.Get("x-goog-api-key"))
	b := body(t, r)
	assert.Equal(t, "You are terse.", at(b, "systemInstruction", "parts", 0, "text"))
	assert.Equal(t, "hi", at(b, "contents", 0, "parts", 0, "text"))
	assert.Equal(t, "user", at(b, "contents", 0, "role"))
	assert.EqualValues(t, 32000, at(b, "generationConfig", "maxOutputTokens"))
	// Thinking off on a reasoning model turns the budget down to zero and
	// asks for no thoughts.
	assert.EqualValues(t, 0, at(b, "generationConfig", "thinkingConfig", "thinkingBudget"))
	assert.Nil(t, at(b, "generationConfig", "thinkingConfig", "includeThoughts"))
}

func TestThoughtSignatureRoundTrip(t *testing.T) {
	thinkSig := base64.StdEncoding.EncodeToString([]byte("thinking-signature-bytes"))
	textSig := base64.StdEncoding.EncodeToString([]byte("text-sig"))
	callSig := base64.StdEncoding.EncodeToString([]byte("call-signature"))
	thinking := llmtest.Thinking("Let me plan this carefully.", thinkSig)
	say := llmtest.Say("I'll read it.")
	say.Signature = textSig
	call := llmtest.Call("", "read", `{"path":"a.txt"}`)
	call.Signature = callSig
	srv := llmtest.New(t,
		llmtest.Turn{Blocks: []llmtest.Block{thinking, say, call}},
		llmtest.Text("It says hello."),
	)
	model := testModel(srv.GoogleURL())
	req := request(srv, llm.UserText("read a.txt"))
	req.Options.Thinking = llm.ThinkingMedium
	req.Tools = []llm.ToolSpec{{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}

	evs, msg := collect(t, context.Background(), model, req)
	assert.Equal(t, []llm.StreamEventType{
		llm.EventStart,
		llm.EventThinkingStart, llm.EventThinkingDelta, llm.EventThinkingEnd,
		llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd,
		llm.EventToolCallStart, llm.EventToolCallDelta, llm.EventToolCallEnd,
		llm.EventDone,
	}, types(evs))
	require.Len(t, msg.Content, 3)
	th := msg.Content[0].(llm.ThinkingContent)
	assert.Equal(t, "Let me plan this carefully.", th.Thinking)
	assert.Equal(t, thinkSig, th.ThinkingSignature)
	assert.Equal(t, textSig, msg.Content[1].(llm.TextContent).TextSignature)
	tc := msg.Content[2].(llm.ToolCall)
	assert.Equal(t, callSig, tc.ThoughtSignature)
	assert.Equal(t, llm.StopToolUse, msg.StopReason)

	first := body(t, srv.LastRequest(t))
	assert.Equal(t, true, at(first, "generationConfig", "thinkingConfig", "includeThoughts"))
	assert.EqualValues(t, 8192, at(first, "generationConfig", "thinkingConfig", "thinkingBudget"))
	assert.Equal(t, "read", at(first, "tools", 0, "functionDeclarations", 0, "name"))
	assert.Equal(t, []any{"path"}, at(first, "tools", 0, "functionDeclarations", 0, "parametersJsonSchema", "required"))

	// Second turn: the signatures go back exactly where they came from.
	req.Messages = append(req.Messages, msg, &llm.ToolResultMessage{
		ToolCallID: tc.ID, ToolName: "read",
		Content: llm.Contents{llm.TextContent{Text: "hello"}},
	})
	_, msg2 := collect(t, context.Background(), model, req)
	assert.Equal(t, "It says hello.", msg2.Content.Text())

	second := body(t, srv.LastRequest(t))
	parts := at(second, "contents", 1, "parts")
	assert.Equal(t, "model", at(second, "contents", 1, "role"))
	assert.Equal(t, true, at(parts, 0, "thought"))
	assert.Equal(t, "Let me plan this carefully.", at(parts, 0, "text"))
	assert.Equal(t, thinkSig, at(parts, 0, "thoughtSignature"))
	assert.Equal(t, textSig, at(parts, 1, "thoughtSignature"))
	assert.Equal(t, "read", at(parts, 2, "functionCall", "name"))
	assert.Equal(t, "a.txt", at(parts, 2, "functionCall", "args", "path"))
	assert.Equal(t, callSig, at(parts, 2, "thoughtSignature"))
	assert.Nil(t, at(parts, 2, "functionCall", "id"), "Gemini models get no call ids")
	assert.Equal(t, "user", at(second, "contents", 2, "role"))
	assert.Equal(t, "hello", at(second, "contents", 2, "parts", 0, "functionResponse", "response", "output"))
	assert.Equal(t, "read", at(second, "contents", 2, "parts", 0, "functionResponse", "name"))
}

func TestSignaturesDroppedForOtherModel(t *testing.T) {
	sig := base64.StdEncoding.EncodeToString([]byte("sig"))
	prev := &llm.AssistantMessage{
		API: llm.APIAnthropicMessages, Provider: "anthropic", Model: "claude-x",
		Content: llm.Contents{
			llm.ThinkingContent{Thinking: "pondering", ThinkingSignature: sig},
			llm.ToolCall{ID: "toolu_1", Name: "ls", Arguments: json.RawMessage(`{}`), ThoughtSignature: sig},
		},
		StopReason: llm.StopToolUse,
	}
	model := testModel("")
	contents := convertMessages(model, []llm.Message{llm.UserText("go"), prev})
	require.Len(t, contents, 3)
	parts := contents[1].Parts
	assert.False(t, parts[0].Thought, "foreign thinking becomes plain text")
	assert.Equal(t, "pondering", parts[0].Text)
	assert.Nil(t, parts[0].ThoughtSignature)
	assert.Nil(t, parts[1].ThoughtSignature)
	// The unanswered call gets a synthetic error result.
	fr := contents[2].Parts[0].FunctionResponse
	require.NotNil(t, fr)
	assert.Equal(t, "ls", fr.Name)
	assert.Contains(t, fr.Response, "error")
}

func TestConvertSkipsFailedTurnsAndMergesResults(t *testing.T) {
	model := testModel("")
	model.ID = "claude-sonnet-4" // served through Google: ids required
	msgs := []llm.Message{
		llm.UserText("go"),
		&llm.AssistantMessage{API: model.API, Provider: model.Provider, Model: model.ID, StopReason: llm.StopError, Content: llm.Contents{llm.TextContent{Text: "half"}}},
		&llm.AssistantMessage{API: model.API, Provider: model.Provider, Model: model.ID, StopReason: llm.StopToolUse, Content: llm.Contents{
			llm.ToolCall{ID: "a", Name: "ls", Arguments: json.RawMessage(`{}`)},
			llm.ToolCall{ID: "b", Name: "ls", Arguments: json.RawMessage(`{"path":"x"}`)},
		}},
		&llm.ToolResultMessage{ToolCallID: "a", ToolName: "ls", Content: llm.Contents{llm.TextContent{Text: "one"}}},
		&llm.ToolResultMessage{ToolCallID: "b", ToolName: "ls", Content: llm.Contents{llm.TextContent{Text: "boom"}}, IsError: true},
	}
	contents := convertMessages(model, msgs)
	require.Len(t, contents, 3)
	assert.Equal(t, "a", contents[1].Parts[0].FunctionCall.ID)
	require.Len(t, contents[2].Parts, 2)
	assert.Equal(t, "one", contents[2].Parts[0].FunctionResponse.Response["output"])
	assert.Equal(t, "b", contents[2].Parts[1].FunctionResponse.ID)
	assert.Equal(t, "boom", contents[2].Parts[1].FunctionResponse.Response["error"])
}

func TestToolCalls(t *testing.T) {
	srv := llmtest.New(t, llmtest.ToolCalls(
		llmtest.Call("", "bash", `{"command":"ls -la"}`),
		llmtest.Call("call-7", "read", `{"path":"go.mod","limit":10}`),
		llmtest.Call("call-7", "read", `{"path":"go.sum"}`),
	))
	model := testModel(srv.GoogleURL())
	req := request(srv, llm.UserText("look around"))
	req.Tools = []llm.ToolSpec{
		{Name: "bash", Description: "Run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"anyOf":[{"required":["command"]}]}`)},
		{Name: "read", Description: "Read", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	}
	evs, msg := collect(t, context.Background(), model, req)
	calls := msg.Content.ToolCalls()
	require.Len(t, calls, 3)
	assert.Equal(t, "bash", calls[0].Name)
	assert.True(t, strings.HasPrefix(calls[0].ID, "bash_"), calls[0].ID)
	assert.JSONEq(t, `{"command":"ls -la"}`, string(calls[0].Arguments))
	assert.Equal(t, "call-7", calls[1].ID)
	assert.JSONEq(t, `{"path":"go.mod","limit":10}`, string(calls[1].Arguments))
	assert.NotEqual(t, "call-7", calls[2].ID, "a repeated id is replaced")
	assert.Equal(t, llm.StopToolUse, msg.StopReason)

	var ends, deltas int
	for _, ev := range evs {
		switch ev.Type {
		case llm.EventToolCallEnd:
			ends++
			require.NotNil(t, ev.ToolCall)
		case llm.EventToolCallDelta:
			deltas++
			assert.True(t, json.Valid([]byte(ev.Delta)))
		}
	}
	assert.Equal(t, 3, ends)
	assert.Equal(t, 3, deltas)

	b := body(t, srv.LastRequest(t))
	assert.NotNil(t, at(b, "tools", 0, "functionDeclarations", 0, "parametersJsonSchema", "anyOf"), "JSON Schema passes through")
	assert.Nil(t, at(b, "tools", 0, "functionDeclarations", 0, "parameters"))
}

func TestImageInput(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3}
	data := base64.StdEncoding.EncodeToString(png)
	srv := llmtest.New(t, llmtest.Text("A tiny image."), llmtest.Text("ok"))
	model := testModel(srv.GoogleURL())
	_, msg := collect(t, context.Background(), model, request(srv, llm.UserText("what is this?", llm.ImageContent{Data: data, MimeType: "image/png"})))
	assert.Equal(t, "A tiny image.", msg.Content.Text())
	b := body(t, srv.LastRequest(t))
	assert.Equal(t, "what is this?", at(b, "contents", 0, "parts", 0, "text"))
	assert.Equal(t, "image/png", at(b, "contents", 0, "parts", 1, "inlineData", "mimeType"))
	assert.Equal(t, data, at(b, "contents", 0, "parts", 1, "inlineData", "data"))

	// A text-only model gets a placeholder instead.
	model.Input = []string{"text"}
	collect(t, context.Background(), model, request(srv, llm.UserText("and now?", llm.ImageContent{Data: data, MimeType: "image/png"})))
	b = body(t, srv.LastRequest(t))
	assert.Nil(t, at(b, "contents", 0, "parts", 1, "inlineData"))
	assert.Equal(t, imageOmitted, at(b, "contents", 0, "parts", 1, "text"))
}

func TestUsageAndCost(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Blocks: []llmtest.Block{llmtest.Thinking("hmm", ""), llmtest.Say("done")},
		Usage:  llmtest.Usage{Input: 1000, Output: 300, CacheRead: 4000},
	})
	model := testModel(srv.GoogleURL())
	_, msg := collect(t, context.Background(), model, request(srv, llm.UserText("hi")))
	u := msg.Usage
	assert.Equal(t, 1000, u.Input, "prompt minus cached")
	assert.Equal(t, 4000, u.CacheRead)
	assert.Equal(t, 300, u.Output, "candidates plus thoughts")
	assert.Equal(t, 0, u.CacheWrite)
	assert.Equal(t, 5300, u.TotalTokens)
	assert.InDelta(t, 1000*0.3/1e6, u.Cost.Input, 1e-12)
	assert.InDelta(t, 300*2.5/1e6, u.Cost.Output, 1e-12)
	assert.InDelta(t, 4000*0.075/1e6, u.Cost.CacheRead, 1e-12)
	assert.InDelta(t, u.Cost.Input+u.Cost.Output+u.Cost.CacheRead, u.Cost.Total, 1e-12)
}

func TestFinishReasons(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("cut sho")}, StopReason: "length"},
		llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("nope")}, StopReason: "SAFETY"},
	)
	model := testModel(srv.GoogleURL())
	_, msg := collect(t, context.Background(), model, request(srv, llm.UserText("a")))
	assert.Equal(t, llm.StopLength, msg.StopReason)
	_, msg = collect(t, context.Background(), model, request(srv, llm.UserText("b")))
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "SAFETY")
}

func TestHTTPErrors(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.HTTPError(429, ""),
		llmtest.HTTPError(500, "upstream exploded"),
	)
	model := testModel(srv.GoogleURL())
	evs, msg := collect(t, context.Background(), model, request(srv, llm.UserText("hi")))
	assert.Equal(t, []llm.StreamEventType{llm.EventStart, llm.EventError}, types(evs))
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "429")
	assert.Contains(t, msg.ErrorMessage, "RESOURCE_EXHAUSTED")
	assert.Contains(t, msg.ErrorMessage, "Resource has been exhausted")

	_, msg = collect(t, context.Background(), model, request(srv, llm.UserText("hi")))
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "500")
	assert.Contains(t, msg.ErrorMessage, "upstream exploded")
	// One request per call: no hidden retries.
	assert.Len(t, srv.Requests(), 2)
}

func TestCutStream(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Blocks:    []llmtest.Block{llmtest.Say("this reply is cut in the middle")},
		ChunkSize: 4,
		Fault:     &llmtest.Fault{CutAfter: 3},
	})
	model := testModel(srv.GoogleURL())
	_, msg := collect(t, context.Background(), model, request(srv, llm.UserText("hi")))
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "connection lost")
	assert.Equal(t, "this reply i", msg.Content.Text())
	assert.Len(t, srv.Requests(), 1, "the SDK must not resume the stream")
}

func TestCutBeforeAnyEvent(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Blocks: []llmtest.Block{llmtest.Say("never")}, Fault: &llmtest.Fault{Cut: true}})
	model := testModel(srv.GoogleURL())
	_, msg := collect(t, context.Background(), model, request(srv, llm.UserText("hi")))
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.NotEmpty(t, msg.ErrorMessage)
	assert.Empty(t, msg.Content)
	assert.Len(t, srv.Requests(), 1)
}

func TestStallThenCancelIsAborted(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{
		Blocks:    []llmtest.Block{llmtest.Say("first then never")},
		ChunkSize: 5,
		Fault:     &llmtest.Fault{StallAfter: 1},
	})
	model := testModel(srv.GoogleURL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last llm.StreamEvent
	for ev := range New().Stream(ctx, model, request(srv, llm.UserText("hi"))) {
		if ev.Type == llm.EventTextDelta {
			time.AfterFunc(20*time.Millisecond, cancel)
		}
		last = ev
	}
	require.Equal(t, llm.EventError, last.Type)
	assert.Equal(t, llm.StopAborted, last.Reason)
	assert.Equal(t, llm.StopAborted, last.Partial.StopReason)
	assert.Equal(t, "Request was aborted", last.Partial.ErrorMessage)
	assert.Equal(t, "first", last.Partial.Content.Text())
}

func TestEnvironmentIgnored(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "env-google-key")
	t.Setenv("GEMINI_API_KEY", "env-gemini-key")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	t.Setenv("GOOGLE_GENAI_USE_ENTERPRISE", "true")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "env-project")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1/")
	t.Setenv("GOOGLE_VERTEX_BASE_URL", "http://127.0.0.1:1/")

	srv := llmtest.New(t, llmtest.Text("keyless"), llmtest.Text("keyed"))
	model := testModel(srv.GoogleURL())
	model.Headers = map[string]string{"X-Model": "m", "X-Both": "model"}
	req := request(srv, llm.UserText("hi"))
	req.Options.APIKey = ""
	req.Options.Headers = map[string]string{"X-Both": "options"}
	_, msg := collect(t, context.Background(), model, req)
	require.Equal(t, llm.StopStop, msg.StopReason, msg.ErrorMessage)
	r := srv.LastRequest(t)
	assert.Equal(t, "/v1beta/models/gemini-2.5-flash:streamGenerateContent", r.Path)
	assert.Empty(t, r.Header.Values("x-goog-api-key"), "no key means no key, not the environment's")
	assert.Empty(t, r.Header.Get("Authorization"))
	assert.Equal(t, "m", r.Header.Get("X-Model"))
	assert.Equal(t, "options", r.Header.Get("X-Both"))

	req.Options.Headers = map[string]string{"X-Goog-Api-Key": "from-header"}
	srv.Push(llmtest.Text("header key"))
	collect(t, context.Background(), model, req)
	assert.Equal(t, []string{"from-header"}, srv.LastRequest(t).Header.Values("x-goog-api-key"))

	req.Options.APIKey = "explicit"
	collect(t, context.Background(), model, req)
	assert.Equal(t, []string{"explicit"}, srv.LastRequest(t).Header.Values("x-goog-api-key"))
}

func TestRecordedStream(t *testing.T) {
	raw, err := os.ReadFile("../../../testdata/sse/google-gemini-2.5-flash-thinking-tool.sse")
	require.NoError(t, err)
	srv := llmtest.Recorded(t, raw)
	model := testModel(srv.URL + "/v1beta")
	req := &llm.Request{
		Messages: []llm.Message{llm.UserText("what is here?")},
		Tools:    []llm.ToolSpec{{Name: "bash", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Options:  llm.Options{APIKey: "k", HTTPClient: srv.Client(), Thinking: llm.ThinkingLow},
	}
	evs, msg := collect(t, context.Background(), model, req)
	assert.Equal(t, []llm.StreamEventType{
		llm.EventStart,
		llm.EventThinkingStart, llm.EventThinkingDelta, llm.EventThinkingEnd,
		llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd,
		llm.EventToolCallStart, llm.EventToolCallDelta, llm.EventToolCallEnd,
		llm.EventDone,
	}, types(evs))
	require.Len(t, msg.Content, 3)
	assert.True(t, strings.HasPrefix(msg.Content[0].(llm.ThinkingContent).Thinking, "**Checking the project layout**"))
	assert.Equal(t, "Let me look at the directory first.", msg.Content[1].(llm.TextContent).Text)
	tc := msg.Content[2].(llm.ToolCall)
	assert.Equal(t, "bash", tc.Name)
	assert.JSONEq(t, `{"command":"ls -la","timeout":30}`, string(tc.Arguments))
	assert.NotEmpty(t, signature(tc.ThoughtSignature), "signature is valid base64")
	assert.Equal(t, llm.StopToolUse, msg.StopReason)
	assert.Equal(t, "k3VhaOTlEJ2mz7IP4fXwsAc", msg.ResponseID)
	assert.Equal(t, 2210-1024, msg.Usage.Input)
	assert.Equal(t, 1024, msg.Usage.CacheRead)
	assert.Equal(t, 24+64, msg.Usage.Output)
}

func TestStreamWithoutFinishReasonIsError(t *testing.T) {
	srv := llmtest.Recorded(t, []byte("data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"partial\"}]},\"index\":0}]}\r\n\r\n"))
	model := testModel(srv.URL + "/v1beta")
	_, msg := collect(t, context.Background(), model, &llm.Request{
		Messages: []llm.Message{llm.UserText("x")},
		Options:  llm.Options{APIKey: "k", HTTPClient: srv.Client()},
	})
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "ended without")
	assert.Equal(t, "partial", msg.Content.Text())
}

func TestSplitAPIVersion(t *testing.T) {
	for _, tc := range []struct{ in, base, version string }{
		{"https://generativelanguage.googleapis.com/v1beta", "https://generativelanguage.googleapis.com/", "v1beta"},
		{"https://generativelanguage.googleapis.com/v1beta/", "https://generativelanguage.googleapis.com/", "v1beta"},
		{"http://127.0.0.1:8080/proxy/google/v1", "http://127.0.0.1:8080/proxy/google/", "v1"},
		{"http://127.0.0.1:8080/v1alpha2", "http://127.0.0.1:8080/", "v1alpha2"},
		{"http://127.0.0.1:8080/proxy", "http://127.0.0.1:8080/proxy", ""},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
	} {
		base, version := splitAPIVersion(tc.in)
		assert.Equal(t, tc.base, base, tc.in)
		assert.Equal(t, tc.version, version, tc.in)
	}
}

func TestThinkingConfigLevels(t *testing.T) {
	m := &llm.Model{ID: "gemini-3-pro-preview", Reasoning: true}
	tc := thinkingConfig(m, &llm.Options{Thinking: llm.ThinkingMinimal})
	assert.Equal(t, "LOW", string(tc.ThinkingLevel))
	assert.True(t, tc.IncludeThoughts)
	assert.Nil(t, tc.ThinkingBudget)
	tc = thinkingConfig(m, &llm.Options{Thinking: llm.ThinkingOff})
	assert.Equal(t, "LOW", string(tc.ThinkingLevel))
	assert.False(t, tc.IncludeThoughts)

	m = &llm.Model{ID: "gemini-2.5-pro", Reasoning: true}
	tc = thinkingConfig(m, &llm.Options{Thinking: llm.ThinkingHigh})
	assert.EqualValues(t, 32768, *tc.ThinkingBudget)
	tc = thinkingConfig(m, &llm.Options{Thinking: llm.ThinkingLow, ThinkingBudgets: map[llm.ThinkingLevel]int{llm.ThinkingLow: 999}})
	assert.EqualValues(t, 999, *tc.ThinkingBudget)

	m = &llm.Model{ID: "gemini-exp", Reasoning: true}
	assert.EqualValues(t, -1, *thinkingConfig(m, &llm.Options{Thinking: llm.ThinkingMedium}).ThinkingBudget)
	assert.Nil(t, thinkingConfig(&llm.Model{ID: "gemini-2.0-flash"}, &llm.Options{Thinking: llm.ThinkingHigh}))
}

// BenchmarkRecordedStream plays a recorded reply (thinking, text, a tool
// call) through Stream from memory: the cost of one call's frame and events.
func BenchmarkRecordedStream(b *testing.B) {
	raw, err := os.ReadFile("../../../testdata/sse/google-gemini-2.5-flash-thinking-tool.sse")
	require.NoError(b, err)
	model := testModel("http://recorded.invalid/v1beta")
	req := &llm.Request{
		Messages: []llm.Message{llm.UserText("what is here?")},
		Tools:    []llm.ToolSpec{{Name: "bash", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Options:  llm.Options{APIKey: "k", HTTPClient: llmtest.RecordedClient(raw), Thinking: llm.ThinkingLow},
	}
	b.ReportAllocs()
	for b.Loop() {
		if msg := llm.Collect(New().Stream(b.Context(), model, req)); msg.StopReason != llm.StopToolUse {
			b.Fatal(msg.StopReason, msg.ErrorMessage)
		}
	}
}
