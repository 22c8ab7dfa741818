package faux

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gopi-dev/gopi/core/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var allTools = []llm.ToolSpec{
	{Name: "bash"}, {Name: "read"}, {Name: "write"}, {Name: "edit"},
	{Name: "ls"}, {Name: "grep"}, {Name: "find"},
}

func model(id string) *llm.Model {
	for _, m := range Models() {
		if m.ID == id {
			return &m
		}
	}
	panic("no model " + id)
}

func run(t *testing.T, p *Provider, req *llm.Request) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	return runModel(t, p, model(ModelID), req)
}

func runModel(t *testing.T, p *Provider, m *llm.Model, req *llm.Request) ([]llm.StreamEvent, *llm.AssistantMessage) {
	t.Helper()
	var evs []llm.StreamEvent
	for ev := range p.Stream(context.Background(), m, req) {
		evs = append(evs, ev)
	}
	require.NotEmpty(t, evs)
	require.Equal(t, llm.EventStart, evs[0].Type)
	last := evs[len(evs)-1]
	require.True(t, last.Terminal())
	for _, ev := range evs[:len(evs)-1] {
		require.False(t, ev.Terminal())
	}
	return evs, last.Partial
}

func say(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText(text)}, Tools: allTools}
}

func count(evs []llm.StreamEvent, t llm.StreamEventType) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == t {
			n++
		}
	}
	return n
}

func TestModels(t *testing.T) {
	ms := Models()
	require.Len(t, ms, 2)
	for _, m := range ms {
		assert.Equal(t, llm.APIFaux, m.API)
		assert.Equal(t, "faux", m.Provider)
		assert.Zero(t, m.Cost)
	}
	assert.True(t, model(ModelID).Reasoning)
	assert.False(t, model(FastModelID).Reasoning)
}

func TestReply(t *testing.T) {
	evs, msg := run(t, &Provider{}, say("Reply: exactly this, with  spaces\nand a second line"))
	assert.Equal(t, "exactly this, with  spaces\nand a second line", msg.Content.Text())
	assert.Equal(t, llm.StopStop, msg.StopReason)
	assert.Equal(t, "faux", msg.API)
	assert.Equal(t, ModelID, msg.Model)
	assert.Greater(t, count(evs, llm.EventTextDelta), 1, "text streams in pieces")
	assert.Positive(t, msg.Usage.Input)
	assert.Positive(t, msg.Usage.Output)
	assert.Equal(t, msg.Usage.Input+msg.Usage.Output, msg.Usage.TotalTokens)
	assert.Zero(t, msg.Usage.Cost.Total)
}

func TestStream(t *testing.T) {
	evs, msg := run(t, &Provider{}, say("stream: 12"))
	var deltas []string
	for _, ev := range evs {
		if ev.Type == llm.EventTextDelta {
			deltas = append(deltas, ev.Delta)
		}
	}
	require.Len(t, deltas, 12)
	assert.Equal(t, "1", deltas[0])
	assert.Equal(t, " 12", deltas[11])
	assert.Equal(t, "1 2 3 4 5 6 7 8 9 10 11 12", msg.Content.Text())

	_, msg = run(t, &Provider{}, say("stream: lots"))
	assert.Contains(t, msg.Content.Text(), "needs a count")
}

func TestThink(t *testing.T) {
	evs, msg := run(t, &Provider{}, say("think: Should I open main.go first?"))
	require.Len(t, msg.Content, 2)
	assert.Equal(t, "Should I open main.go first?", msg.Content[0].(llm.ThinkingContent).Thinking)
	assert.NotEmpty(t, msg.Content[1].(llm.TextContent).Text)
	assert.Equal(t, 1, count(evs, llm.EventThinkingStart))
	assert.Equal(t, 1, count(evs, llm.EventThinkingEnd))
}

func TestThinkingLevelAddsPlan(t *testing.T) {
	req := say("reply: ok")
	req.Options.Thinking = llm.ThinkingLow
	_, msg := run(t, &Provider{}, req)
	require.Len(t, msg.Content, 2)
	assert.Contains(t, msg.Content[0].(llm.ThinkingContent).Thinking, "reply")
	assert.Equal(t, "ok", msg.Content.Text())

	// faux-fast does not reason.
	_, msg = runModel(t, &Provider{}, model(FastModelID), req)
	require.Len(t, msg.Content, 1)
}

func toolCalls(t *testing.T, text string) []llm.ToolCall {
	t.Helper()
	evs, msg := run(t, &Provider{}, say(text))
	assert.Equal(t, llm.StopToolUse, msg.StopReason, msg.Content.Text())
	calls := msg.Content.ToolCalls()
	assert.Equal(t, len(calls), count(evs, llm.EventToolCallEnd))
	return calls
}

func TestToolDirectives(t *testing.T) {
	for _, tc := range []struct {
		text, name, args string
	}{
		{"bash: ls -la | head", "bash", `{"command":"ls -la | head"}`},
		{"BASH: echo one\necho two", "bash", `{"command":"echo one\necho two"}`},
		{"read: go.mod", "read", `{"path":"go.mod"}`},
		{"write: notes/a.txt :: hello world\n", "write", `{"path":"notes/a.txt","content":"hello world\n"}`},
		{"write: b.txt ::\nline one\nline two", "write", `{"path":"b.txt","content":"line one\nline two"}`},
		{"edit: main.go :: fmt.Println(1) => fmt.Println(2)", "edit", `{"path":"main.go","edits":[{"oldText":"fmt.Println(1)","newText":"fmt.Println(2)"}]}`},
		{"ls: src", "ls", `{"path":"src"}`},
		{"ls:", "ls", `{}`},
		{"grep: func main", "grep", `{"pattern":"func main"}`},
		{"find: **/*.go", "find", `{"pattern":"**/*.go"}`},
	} {
		t.Run(tc.text, func(t *testing.T) {
			calls := toolCalls(t, tc.text)
			require.Len(t, calls, 1)
			assert.Equal(t, tc.name, calls[0].Name)
			assert.JSONEq(t, tc.args, string(calls[0].Arguments))
			assert.True(t, strings.HasPrefix(calls[0].ID, "call_faux_"), calls[0].ID)
		})
	}
}

func TestParallelTools(t *testing.T) {
	calls := toolCalls(t, "tools: read: go.mod; ls: .; bash: pwd")
	require.Len(t, calls, 3)
	assert.Equal(t, []string{"read", "ls", "bash"}, []string{calls[0].Name, calls[1].Name, calls[2].Name})
	assert.JSONEq(t, `{"command":"pwd"}`, string(calls[2].Arguments))
	assert.NotEqual(t, calls[0].ID, calls[1].ID)

	_, msg := run(t, &Provider{}, say("tools: read: a; reply: b"))
	assert.Empty(t, msg.Content.ToolCalls())
	assert.Contains(t, msg.Content.Text(), "reply: b")
}

func TestToolNotOffered(t *testing.T) {
	req := say("bash: rm -rf /")
	req.Tools = []llm.ToolSpec{{Name: "read"}}
	_, msg := run(t, &Provider{}, req)
	assert.Empty(t, msg.Content.ToolCalls())
	assert.Equal(t, llm.StopStop, msg.StopReason)
	assert.Contains(t, msg.Content.Text(), "bash")
	assert.Contains(t, msg.Content.Text(), "does not offer")
}

func TestBadToolArguments(t *testing.T) {
	for _, text := range []string{"bash:", "write: nopath", "edit: a.txt :: no arrow", "read:"} {
		_, msg := run(t, &Provider{}, say(text))
		assert.Empty(t, msg.Content.ToolCalls(), text)
		assert.Contains(t, msg.Content.Text(), "needs", text)
	}
}

func TestToolResultSummary(t *testing.T) {
	first := toolCalls(t, "tools: bash: seq 10; read: x")
	req := say("tools: bash: seq 10; read: x")
	req.Messages = append(req.Messages,
		&llm.AssistantMessage{Content: llm.Contents{first[0], first[1]}, StopReason: llm.StopToolUse},
		&llm.ToolResultMessage{ToolCallID: first[0].ID, ToolName: "bash", Content: llm.Contents{llm.TextContent{Text: "1\n2\n3\n4\n5\n"}}},
		&llm.ToolResultMessage{ToolCallID: first[1].ID, ToolName: "read", Content: llm.Contents{llm.TextContent{Text: "no such file"}}, IsError: true},
	)
	_, msg := run(t, &Provider{}, req)
	assert.Equal(t, "Tool said: 1\n2\n3…\n\nTool said: no such file", msg.Content.Text())
	assert.Equal(t, llm.StopStop, msg.StopReason)
	assert.Empty(t, msg.Content.ToolCalls())
}

func TestGreeting(t *testing.T) {
	for _, text := range []string{"hello there", "what: is this", ""} {
		_, msg := run(t, &Provider{}, say(text))
		got := msg.Content.Text()
		assert.Contains(t, got, "offline", text)
		for _, d := range []string{"reply:", "stream:", "think:", "bash:", "read:", "write:", "edit:", "ls:", "grep:", "find:", "tools:", "error:"} {
			assert.Contains(t, got, d, "greeting lists %s", d)
		}
	}
}

func TestError(t *testing.T) {
	evs, msg := run(t, &Provider{}, say("error: 429"))
	assert.Equal(t, llm.EventError, evs[len(evs)-1].Type)
	assert.Equal(t, llm.StopError, msg.StopReason)
	assert.Contains(t, msg.ErrorMessage, "429")
	assert.Contains(t, msg.ErrorMessage, "rate limit")

	_, msg = run(t, &Provider{}, say("error: 529"))
	assert.Contains(t, msg.ErrorMessage, "529 Overloaded")

	_, msg = run(t, &Provider{}, say("error: teapot"))
	assert.Equal(t, llm.StopStop, msg.StopReason)
	assert.Contains(t, msg.Content.Text(), "error: 429")
}

func TestErrorThenRecover(t *testing.T) {
	p := &Provider{}
	req := say("error: 503 2")
	for range 2 {
		_, msg := run(t, p, req)
		require.Equal(t, llm.StopError, msg.StopReason)
		assert.Contains(t, msg.ErrorMessage, "503 Service Unavailable")
	}
	_, msg := run(t, p, req)
	assert.Equal(t, llm.StopStop, msg.StopReason)
	assert.Contains(t, msg.Content.Text(), "Recovered after 2")

	// A new message with the same directive starts over.
	req2 := say("error: 503 2")
	req2.Messages[0].(*llm.UserMessage).Timestamp++
	_, msg = run(t, p, req2)
	assert.Equal(t, llm.StopError, msg.StopReason)
}

func TestAbortMidStream(t *testing.T) {
	p := &Provider{Delay: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last llm.StreamEvent
	deltas := 0
	for ev := range p.Stream(ctx, model(ModelID), say("stream: 1000")) {
		if ev.Type == llm.EventTextDelta {
			deltas++
			if deltas == 3 {
				cancel()
			}
		}
		last = ev
	}
	require.Equal(t, llm.EventError, last.Type)
	assert.Equal(t, llm.StopAborted, last.Reason)
	assert.Equal(t, "Request was aborted", last.Partial.ErrorMessage)
	assert.Equal(t, 3, deltas)
	assert.Equal(t, "1 2 3", last.Partial.Content.Text())
}

func TestDelayPaces(t *testing.T) {
	p := &Provider{Delay: 10 * time.Millisecond}
	start := time.Now()
	run(t, p, say("stream: 5"))
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)

	// faux-fast ignores the delay.
	start = time.Now()
	runModel(t, p, model(FastModelID), say("stream: 50"))
	assert.Less(t, time.Since(start), 400*time.Millisecond)
}

func TestConsumerStopsEarly(t *testing.T) {
	n := 0
	for range (&Provider{}).Stream(context.Background(), model(ModelID), say("stream: 100")) {
		n++
		if n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)
}

func TestToolCallDeltasRebuildArguments(t *testing.T) {
	evs, msg := run(t, &Provider{}, say("write: a.txt :: some fairly long content to split"))
	var sb strings.Builder
	for _, ev := range evs {
		if ev.Type == llm.EventToolCallDelta {
			sb.WriteString(ev.Delta)
		}
	}
	assert.True(t, json.Valid([]byte(sb.String())))
	assert.JSONEq(t, sb.String(), string(msg.Content.ToolCalls()[0].Arguments))
}

func TestCallDirective(t *testing.T) {
	c, problem := callFor(directive{name: dirCall, arg: `mcp__srv__echo {"text": "hi"}`})
	require.Empty(t, problem)
	require.Equal(t, "mcp__srv__echo", c.name)
	require.JSONEq(t, `{"text":"hi"}`, string(c.args))
	c, problem = callFor(directive{name: dirCall, arg: "plain"})
	require.Empty(t, problem)
	require.JSONEq(t, `{}`, string(c.args))
	_, problem = callFor(directive{name: dirCall, arg: "x [1]"})
	require.Contains(t, problem, "JSON object")
}
