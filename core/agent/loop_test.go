package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

func TestTextRunEventOrder(t *testing.T) {
	fm := newFakeModel(textTurn("Hel", "lo"))
	a, rec := newTestAgent(t, fm, Config{
		GetAuth: func(ctx context.Context, m *llm.Model) (llm.Auth, error) {
			return llm.Auth{APIKey: "key-" + m.Provider}, nil
		},
		Options: llm.Options{SessionID: "s1", MaxTokens: 100},
	}, echoTool("echo"))
	a.SetSystemPrompt("be brief")
	a.SetThinkingLevel(llm.ThinkingXHigh) // the model has no xhigh: clamped down

	require.NoError(t, a.Prompt(context.Background(), llm.UserText("hi")))

	assert.Equal(t, []string{
		"agent_start", "turn_start",
		"message_start:user", "message_end:user",
		"message_start:assistant",
		"message_update:text_start", "message_update:text_delta", "message_update:text_delta", "message_update:text_end",
		"message_end:assistant",
		"turn_end", "agent_end",
	}, rec.labels())

	end := rec.last()
	require.Len(t, end.Messages, 2)
	am := end.Messages[1].(*llm.AssistantMessage)
	assert.Equal(t, "Hello", am.Content.Text())
	assert.Equal(t, llm.StopStop, am.StopReason)
	assert.Equal(t, "user,assistant", roles(a.Messages()))
	assert.False(t, a.IsStreaming())

	// Updates carry the partial message and the stream event.
	upd := rec.ofType(EventMessageUpdate)[2]
	assert.Equal(t, "Hello", upd.Message.(*llm.AssistantMessage).Content.Text())
	assert.Equal(t, "lo", upd.AssistantEvent.Delta)
	raw, err := json.Marshal(upd)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"lo"`)

	reqs := fm.requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "be brief", r.SystemPrompt)
	assert.Equal(t, "key-fake", r.Options.APIKey)
	assert.Equal(t, "s1", r.Options.SessionID)
	assert.Equal(t, 100, r.Options.MaxTokens)
	assert.Equal(t, llm.ThinkingHigh, r.Options.Thinking)
	require.Len(t, r.Tools, 1)
	assert.Equal(t, "echo", r.Tools[0].Name)
	assert.Equal(t, "user", roles(r.Messages))
}

// piLabels reads the event sequence of a pi 0.73.1 RPC transcript.
func piLabels(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			Message struct {
				Role string `json:"role"`
			} `json:"message"`
			AssistantMessageEvent struct {
				Type string `json:"type"`
			} `json:"assistantMessageEvent"`
			ToolCallID string `json:"toolCallId"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		switch ev.Type {
		case "response":
		case "message_start", "message_end":
			out = append(out, ev.Type+":"+ev.Message.Role)
		case "message_update":
			out = append(out, ev.Type+":"+ev.AssistantMessageEvent.Type)
		case "tool_execution_start", "tool_execution_update", "tool_execution_end":
			out = append(out, ev.Type+":"+ev.ToolCallID)
		default:
			out = append(out, ev.Type)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// piToolEvents returns the tool_execution_* records of a pi transcript.
func piToolEvents(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, `{"type":"tool_execution_`) {
			out = append(out, line)
		}
	}
	return out
}

func TestToolRunMatchesPiTranscript(t *testing.T) {
	const id = "toolu_1795269364005976263"
	fm := newFakeModel(
		toolTurn(callSpec{id, "bash", `{"command":"echo hi-from-tool"}`}),
		textTurn("It ", "printed ", "hi."),
	)
	bash := &fakeTool{
		name:   "bash",
		schema: `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`,
		run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
			update(Result{Content: llm.Contents{}})
			update(Result{Content: TextResult("hi-from-tool\n").Content, Details: map[string]any{}})
			return TextResult("hi-from-tool\n"), nil
		},
	}
	a, rec := newTestAgent(t, fm, Config{}, bash)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("bash: echo hi-from-tool")))

	assert.Equal(t, piLabels(t, "testdata/pi-0.73.1-rpc-tool-call.jsonl"), rec.labels())

	// The tool events are byte-compatible with pi's.
	piTool := piToolEvents(t, "testdata/pi-0.73.1-rpc-tool-call.jsonl")
	var ours []string
	for _, ev := range rec.all() {
		switch ev.Type {
		case EventToolExecutionStart, EventToolExecutionUpdate, EventToolExecutionEnd:
			raw, err := json.Marshal(ev)
			require.NoError(t, err)
			ours = append(ours, string(raw))
		}
	}
	require.Len(t, ours, len(piTool))
	for i := range ours {
		// pi 1.5 added durationMs to tool_execution_end; pi 0.73.1's
		// transcript predates it. Everything else matches byte for byte.
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(ours[i]), &m))
		if m["type"] == string(EventToolExecutionEnd) {
			d, ok := m["durationMs"].(float64)
			require.True(t, ok, "tool_execution_end carries durationMs: %s", ours[i])
			assert.GreaterOrEqual(t, d, 0.0)
			delete(m, "durationMs")
			b, _ := json.Marshal(m)
			ours[i] = string(b)
		}
		assert.JSONEq(t, piTool[i], ours[i])
	}

	start := rec.ofType(EventToolExecutionStart)[0]
	assert.JSONEq(t, `{"command":"echo hi-from-tool"}`, string(start.Args))
	upds := rec.ofType(EventToolExecutionUpdate)
	require.Len(t, upds, 2)
	assert.Equal(t, "", resultText(upds[0].Result))
	assert.Equal(t, "hi-from-tool\n", resultText(upds[1].Result))
	end := rec.ofType(EventToolExecutionEnd)[0]
	assert.False(t, end.IsError)
	assert.Equal(t, "hi-from-tool\n", resultText(end.Result))

	turnEnds := rec.ofType(EventTurnEnd)
	require.Len(t, turnEnds, 2)
	require.Len(t, turnEnds[0].ToolResults, 1)
	assert.Equal(t, id, turnEnds[0].ToolResults[0].ToolCallID)
	assert.Empty(t, turnEnds[1].ToolResults)

	// The second model call sees the call and its result.
	reqs := fm.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "user,assistant,toolResult", roles(reqs[1].Messages))
	assert.Equal(t, "user,assistant,toolResult,assistant", roles(rec.last().Messages))
	assert.Equal(t, "user,assistant,toolResult,assistant", roles(a.Messages()))
	assert.Empty(t, a.PendingToolCalls())
}

func TestParallelToolsKeepCallOrder(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "slow", `{}`}, callSpec{"c2", "fast", `{}`}),
		textTurn("done"),
	)
	fastEnded := make(chan struct{})
	slow := &fakeTool{name: "slow", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		// Only finishes after the fast call has been reported finished,
		// which cannot happen unless both run at once.
		select {
		case <-fastEnded:
			return TextResult("slow result"), nil
		case <-time.After(5 * time.Second):
			return Result{}, errors.New("ran alone")
		}
	}}
	fast := &fakeTool{name: "fast", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		update(TextResult("fast partial"))
		return TextResult("fast result"), nil
	}}
	a, rec := newTestAgent(t, fm, Config{}, slow, fast)
	a.Subscribe(func(ev Event) {
		if ev.Type == EventToolExecutionEnd && ev.ToolCallID == "c2" {
			close(fastEnded)
		}
	})
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("go")))

	assert.Equal(t, []string{
		"agent_start", "turn_start", "message_start:user", "message_end:user",
		"message_start:assistant",
		"message_update:toolcall_start", "message_update:toolcall_delta", "message_update:toolcall_delta", "message_update:toolcall_end",
		"message_update:toolcall_start", "message_update:toolcall_delta", "message_update:toolcall_delta", "message_update:toolcall_end",
		"message_end:assistant",
		"tool_execution_start:c1", "tool_execution_start:c2",
		"tool_execution_update:c2", "tool_execution_end:c2", "tool_execution_end:c1",
		"message_start:toolResult", "message_end:toolResult", "message_start:toolResult", "message_end:toolResult",
		"turn_end", "turn_start",
		"message_start:assistant", "message_update:text_start", "message_update:text_delta", "message_update:text_end", "message_end:assistant",
		"turn_end", "agent_end",
	}, rec.labels())

	trs := rec.ofType(EventTurnEnd)[0].ToolResults
	require.Len(t, trs, 2)
	assert.Equal(t, "c1", trs[0].ToolCallID)
	assert.Equal(t, "slow result", trs[0].Content.Text())
	assert.False(t, trs[0].IsError)
	assert.Equal(t, "c2", trs[1].ToolCallID)
	assert.Equal(t, "fast result", trs[1].Content.Text())
}

func TestSequentialToolsDoNotOverlap(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "t", `{"n":1}`}, callSpec{"c2", "t", `{"n":2}`}),
		textTurn("done"),
	)
	running := 0
	maxRunning := 0
	tool := &fakeTool{name: "t", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		running++ // unsynchronised on purpose: -race flags overlap
		maxRunning = max(maxRunning, running)
		time.Sleep(10 * time.Millisecond)
		running--
		return TextResult(string(call.Args)), nil
	}}
	a, rec := newTestAgent(t, fm, Config{ToolExecution: ToolsSequential}, tool)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("go")))
	assert.Equal(t, 1, maxRunning)

	var tail []string
	for _, l := range rec.labels() {
		if strings.HasPrefix(l, "tool_") || strings.HasSuffix(l, ":toolResult") {
			tail = append(tail, l)
		}
	}
	assert.Equal(t, []string{
		"tool_execution_start:c1", "tool_execution_end:c1", "message_start:toolResult", "message_end:toolResult",
		"tool_execution_start:c2", "tool_execution_end:c2", "message_start:toolResult", "message_end:toolResult",
	}, tail)
}

type seqTool struct{ *fakeTool }

func (seqTool) Sequential() bool { return true }

func TestSequentialToolForcesSequentialBatch(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "a", `{}`}, callSpec{"c2", "b", `{}`}),
		textTurn("done"),
	)
	a, rec := newTestAgent(t, fm, Config{}, echoTool("a"), seqTool{echoTool("b")})
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("go")))
	labels := rec.labels()
	i := indexOf(labels, "tool_execution_end:c1")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, "message_start:toolResult", labels[i+1], "sequential batches report each result at once")
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

const readSchema = `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`

func TestSchemaValidationError(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "read", `{"limit":5}`}),
		textTurn("sorry"),
	)
	ran := false
	read := &fakeTool{name: "read", schema: readSchema, run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		ran = true
		return TextResult("content"), nil
	}}
	hooked := false
	a, rec := newTestAgent(t, fm, Config{BeforeToolCall: func(ctx context.Context, call *Call) (bool, string) {
		hooked = true
		return false, ""
	}}, read)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("read")))
	assert.False(t, ran)
	assert.False(t, hooked, "validation comes before the hook")

	end := rec.ofType(EventToolExecutionEnd)[0]
	assert.True(t, end.IsError)
	text := resultText(end.Result)
	assert.Contains(t, text, `Validation failed for tool "read":`)
	assert.Contains(t, text, `  - path: must have required properties path`)
	assert.Contains(t, text, "Received arguments:\n{\n  \"limit\": 5\n}")

	tr := toolResults(a.Messages())[0]
	assert.True(t, tr.IsError)
	assert.Equal(t, text, tr.Content.Text())
	assert.JSONEq(t, `{}`, string(tr.Details))
	// The model reads the failure on the next call.
	assert.Equal(t, "user,assistant,toolResult", roles(fm.requests()[1].Messages))
}

func TestSchemaCoercesPrimitives(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "read", `{"path":"a.txt","limit":"10"}`}),
		textTurn("ok"),
	)
	var got Call
	read := &fakeTool{name: "read", schema: readSchema, run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		got = call
		return TextResult("content"), nil
	}}
	a, rec := newTestAgent(t, fm, Config{}, read)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("read")))
	assert.JSONEq(t, `{"path":"a.txt","limit":10}`, string(got.Args))
	assert.False(t, rec.ofType(EventToolExecutionEnd)[0].IsError)
	// The event shows what the model sent.
	assert.JSONEq(t, `{"path":"a.txt","limit":"10"}`, string(rec.ofType(EventToolExecutionStart)[0].Args))
}

type preparingTool struct{ *fakeTool }

func (preparingTool) PrepareArguments(args json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	if p, ok := m["file"]; ok {
		m["path"] = p
		delete(m, "file")
	}
	b, _ := json.Marshal(m)
	return b
}

func TestArgumentPreparerRunsBeforeValidation(t *testing.T) {
	fm := newFakeModel(toolTurn(callSpec{"c1", "read", `{"file":"x"}`}), textTurn("ok"))
	var got Call
	read := preparingTool{&fakeTool{name: "read", schema: readSchema, run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		got = call
		return TextResult("ok"), nil
	}}}
	a, rec := newTestAgent(t, fm, Config{}, read)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("read")))
	assert.False(t, rec.ofType(EventToolExecutionEnd)[0].IsError)
	assert.JSONEq(t, `{"path":"x"}`, string(got.Args))
}

func TestUnknownTool(t *testing.T) {
	fm := newFakeModel(toolTurn(callSpec{"c1", "nope", `{}`}), textTurn("ok"))
	a, rec := newTestAgent(t, fm, Config{}, echoTool("echo"))
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	end := rec.ofType(EventToolExecutionEnd)[0]
	assert.True(t, end.IsError)
	assert.Equal(t, "Tool nope not found", resultText(end.Result))
	raw, err := json.Marshal(end)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"tool_execution_end","toolCallId":"c1","toolName":"nope","result":{"content":[{"type":"text","text":"Tool nope not found"}],"details":{}},"isError":true}`, string(raw))
}

func TestToolErrorAndPanicBecomeResults(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "broken", `{}`}, callSpec{"c2", "boom", `{}`}, callSpec{"c3", "echo", `{}`}),
		textTurn("ok"),
	)
	broken := &fakeTool{name: "broken", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		return Result{}, errors.New("disk on fire")
	}}
	boom := &fakeTool{name: "boom", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		panic("nil map")
	}}
	var reports []error
	a, rec := newTestAgent(t, fm, Config{Report: func(err error) { reports = append(reports, err) }}, broken, boom, echoTool("echo"))
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))

	trs := rec.ofType(EventTurnEnd)[0].ToolResults
	require.Len(t, trs, 3)
	assert.True(t, trs[0].IsError)
	assert.Equal(t, "disk on fire", trs[0].Content.Text())
	assert.True(t, trs[1].IsError)
	assert.Contains(t, trs[1].Content.Text(), "nil map")
	assert.False(t, trs[2].IsError)
	require.Len(t, reports, 1)
	assert.Contains(t, reports[0].Error(), "boom panicked")
	assert.Equal(t, llm.StopStop, rec.last().Messages[len(rec.last().Messages)-1].(*llm.AssistantMessage).StopReason)
}

func TestBeforeToolCallBlocks(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "rm", `{"path":"/"}`}, callSpec{"c2", "rm", `{"path":"/tmp"}`}),
		textTurn("ok"),
	)
	ran := 0
	rm := &fakeTool{name: "rm", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		ran++
		return TextResult("removed"), nil
	}}
	var seen []string
	a, rec := newTestAgent(t, fm, Config{BeforeToolCall: func(ctx context.Context, call *Call) (bool, string) {
		seen = append(seen, string(call.Args))
		if strings.Contains(string(call.Args), `"/"`) {
			return true, "Blocked by user"
		}
		return false, ""
	}}, rm)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	assert.Equal(t, 1, ran)
	assert.Equal(t, []string{`{"path":"/"}`, `{"path":"/tmp"}`}, seen)
	trs := rec.ofType(EventTurnEnd)[0].ToolResults
	assert.True(t, trs[0].IsError)
	assert.Equal(t, "Blocked by user", trs[0].Content.Text())
	assert.False(t, trs[1].IsError)
	// A blocked call ends before the allowed ones run.
	labels := rec.labels()
	assert.Less(t, indexOf(labels, "tool_execution_end:c1"), indexOf(labels, "tool_execution_start:c2"))
}

// ToolStarting hears of the calls that run, after BeforeToolCall let them
// through and before the tool does anything; a blocked call is never
// started.
func TestToolStartingAfterTheBeforeHook(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "rm", `{"path":"/"}`}, callSpec{"c2", "rm", `{"path":"/tmp"}`}),
		textTurn("ok"),
	)
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	rm := &fakeTool{name: "rm", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		note("run:" + call.ID)
		return TextResult("removed"), nil
	}}
	a, _ := newTestAgent(t, fm, Config{
		BeforeToolCall: func(ctx context.Context, call *Call) (bool, string) {
			note("before:" + call.ID)
			return strings.Contains(string(call.Args), `"/"`), "Blocked by user"
		},
		ToolStarting: func(ctx context.Context, call Call) {
			id, _ := CallID(ctx)
			assert.Equal(t, call.ID, id, "the call's own context")
			note("starting:" + call.ID)
		},
	}, rm)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	assert.Equal(t, []string{"before:c1", "before:c2", "starting:c2", "run:c2"}, order)
}

func TestBeforeToolCallDefaultReason(t *testing.T) {
	fm := newFakeModel(toolTurn(callSpec{"c1", "echo", `{}`}), textTurn("ok"))
	a, rec := newTestAgent(t, fm, Config{BeforeToolCall: func(ctx context.Context, call *Call) (bool, string) { return true, "" }}, echoTool("echo"))
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	assert.Equal(t, "Tool execution was blocked", resultText(rec.ofType(EventToolExecutionEnd)[0].Result))
}

func TestAfterToolCallReplacesResult(t *testing.T) {
	fm := newFakeModel(toolTurn(callSpec{"c1", "echo", `{}`}), textTurn("ok"))
	a, rec := newTestAgent(t, fm, Config{AfterToolCall: func(ctx context.Context, call Call, res Result) Result {
		res.Content = llm.Contents{llm.TextContent{Text: "redacted"}}
		res.Details = map[string]int{"n": 1}
		res.IsError = true
		return res
	}}, echoTool("echo"))
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	end := rec.ofType(EventToolExecutionEnd)[0]
	assert.True(t, end.IsError)
	assert.Equal(t, "redacted", resultText(end.Result))
	tr := rec.ofType(EventTurnEnd)[0].ToolResults[0]
	assert.True(t, tr.IsError)
	assert.JSONEq(t, `{"n":1}`, string(tr.Details))
}

func TestTerminateStopsAfterBatch(t *testing.T) {
	fm := newFakeModel(toolTurn(callSpec{"c1", "stop", `{}`}), textTurn("never"))
	stop := &fakeTool{name: "stop", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		r := TextResult("stopping")
		r.Terminate = true
		return r, nil
	}}
	a, rec := newTestAgent(t, fm, Config{}, stop)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	assert.Len(t, fm.requests(), 1)
	assert.Equal(t, "turn_end", rec.labels()[len(rec.labels())-2])
	assert.Equal(t, "user,assistant,toolResult", roles(rec.last().Messages))
}

func TestSteeringSkipsRemainingTools(t *testing.T) {
	for _, mode := range []ToolExecution{ToolsSequential, ToolsParallel} {
		t.Run(string(mode), func(t *testing.T) {
			fm := newFakeModel(
				toolTurn(callSpec{"c1", "work", `{}`}, callSpec{"c2", "work", `{}`}, callSpec{"c3", "work", `{}`}),
				textTurn("changing course"),
			)
			var a *Agent
			ran := 0
			work := &fakeTool{name: "work", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
				ran++
				return TextResult("worked"), nil
			}}
			cfg := Config{ToolExecution: mode}
			if mode == ToolsSequential {
				work.run = func(ctx context.Context, call Call, update func(Result)) (Result, error) {
					ran++
					a.Steer(llm.UserText("stop, do Y instead")) // the user types while the tool runs
					return TextResult("worked"), nil
				}
			} else {
				// In parallel mode calls start together; a steer arriving
				// while the approval gate holds call 1 skips the rest.
				cfg.BeforeToolCall = func(ctx context.Context, call *Call) (bool, string) {
					if call.ID == "c1" {
						a.Steer(llm.UserText("stop, do Y instead"))
					}
					return false, ""
				}
			}
			var rec *recorder
			a, rec = newTestAgent(t, fm, cfg, work)
			require.NoError(t, a.Prompt(context.Background(), llm.UserText("do X")))

			assert.Equal(t, 1, ran)
			trs := rec.ofType(EventTurnEnd)[0].ToolResults
			require.Len(t, trs, 3)
			assert.False(t, trs[0].IsError)
			for _, tr := range trs[1:] {
				assert.True(t, tr.IsError)
				assert.Equal(t, "Skipped due to queued user message.", tr.Content.Text())
			}
			labels := rec.labels()
			i := indexOf(labels, "turn_end")
			assert.Equal(t, []string{"turn_end", "turn_start", "message_start:user", "message_end:user", "message_start:assistant"}, labels[i:i+5])
			reqs := fm.requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, "user,assistant,toolResult,toolResult,toolResult,user", roles(reqs[1].Messages))
			assert.Equal(t, []string{"do X", "stop, do Y instead"}, userTexts(reqs[1].Messages))
			s, f := a.QueueCounts()
			assert.Zero(t, s+f)
		})
	}
}

func TestSteerKeepsToolsLikePi073(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "work", `{}`}, callSpec{"c2", "work", `{}`}),
		textTurn("ok"),
	)
	var a *Agent
	ran := 0
	work := &fakeTool{name: "work", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		ran++
		a.Steer(llm.UserText("also Z"))
		return TextResult("worked"), nil
	}}
	var rec *recorder
	a, rec = newTestAgent(t, fm, Config{ToolExecution: ToolsSequential, SteerKeepsTools: true, SteeringMode: QueueAll}, work)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("do X")))
	assert.Equal(t, 2, ran)
	for _, tr := range rec.ofType(EventTurnEnd)[0].ToolResults {
		assert.False(t, tr.IsError)
	}
	assert.Equal(t, []string{"do X", "also Z", "also Z"}, userTexts(fm.requests()[1].Messages))
}

func TestFollowUpAfterStop(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "echo", `{}`}),
		textTurn("first done"),
		textTurn("second done"),
	)
	var a *Agent
	tool := &fakeTool{name: "echo", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		a.FollowUp(llm.UserText("then this"))
		return TextResult("ok"), nil
	}}
	var rec *recorder
	a, rec = newTestAgent(t, fm, Config{}, tool)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("first")))

	reqs := fm.requests()
	require.Len(t, reqs, 3)
	// The follow-up waits for the tool loop to finish.
	assert.Equal(t, []string{"first"}, userTexts(reqs[1].Messages))
	assert.Equal(t, []string{"first", "then this"}, userTexts(reqs[2].Messages))
	assert.Equal(t, "user,assistant,toolResult,assistant,user,assistant", roles(rec.last().Messages))
	assert.Len(t, rec.ofType(EventAgentStart), 1)
	assert.Len(t, rec.ofType(EventAgentEnd), 1)
	assert.Len(t, rec.ofType(EventTurnStart), 3)
}

func TestQueueModes(t *testing.T) {
	queueTwo := func(a *Agent, steer bool) func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		return func(ctx context.Context, call Call, update func(Result)) (Result, error) {
			for _, s := range []string{"one", "two"} {
				if steer {
					a.Steer(llm.UserText(s))
				} else {
					a.FollowUp(llm.UserText(s))
				}
			}
			return TextResult("ok"), nil
		}
	}
	cases := []struct {
		name     string
		steer    bool
		mode     QueueMode
		requests [][]string // user texts per model call after the first
	}{
		{"steer one-at-a-time", true, QueueOneAtATime, [][]string{{"go", "one"}, {"go", "one", "two"}}},
		{"steer all", true, QueueAll, [][]string{{"go", "one", "two"}}},
		{"follow-up one-at-a-time", false, QueueOneAtATime, [][]string{{"go"}, {"go", "one"}, {"go", "one", "two"}}},
		{"follow-up all", false, QueueAll, [][]string{{"go"}, {"go", "one", "two"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fm := newFakeModel(toolTurn(callSpec{"c1", "q", `{}`}), textTurn("a"), textTurn("b"), textTurn("c"))
			var a *Agent
			tool := &fakeTool{name: "q"}
			cfg := Config{SteeringMode: tc.mode, FollowUpMode: tc.mode}
			a, _ = newTestAgent(t, fm, cfg, tool)
			tool.run = queueTwo(a, tc.steer)
			require.NoError(t, a.Prompt(context.Background(), llm.UserText("go")))
			reqs := fm.requests()
			require.Len(t, reqs, 1+len(tc.requests))
			for i, want := range tc.requests {
				assert.Equal(t, want, userTexts(reqs[i+1].Messages), "request %d", i+1)
			}
		})
	}
}

func TestSteeringQueuedBeforeRunIsDeliveredFirst(t *testing.T) {
	fm := newFakeModel(textTurn("ok"))
	a, rec := newTestAgent(t, fm, Config{})
	a.Steer(llm.UserText("early"))
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("prompt")))
	assert.Equal(t, []string{"prompt", "early"}, userTexts(fm.requests()[0].Messages))
	assert.Equal(t, []string{
		"agent_start", "turn_start", "message_start:user", "message_end:user", "message_start:user", "message_end:user",
		"message_start:assistant",
	}, rec.labels()[:7])
}

func TestAbortMidStream(t *testing.T) {
	var cause error
	reached := make(chan struct{})
	fm := newFakeModel(func(ctx context.Context, b *llm.Builder, yield func(llm.StreamEvent) bool) {
		i, ev := b.BeginText()
		if !yield(ev) || !yield(b.TextDelta(i, "partial")) {
			return
		}
		close(reached)
		<-ctx.Done()
		cause = context.Cause(ctx)
		yield(b.Fail(ctx, ctx.Err()))
	})
	a, rec := newTestAgent(t, fm, Config{})
	a.FollowUp(llm.UserText("later"))

	done := make(chan error, 1)
	go func() { done <- a.Prompt(context.Background(), llm.UserText("talk")) }()
	<-reached
	assert.True(t, a.IsStreaming())
	a.Abort()
	require.NoError(t, <-done)

	assert.ErrorIs(t, cause, ErrAborted)
	labels := rec.labels()
	assert.Equal(t, []string{"message_update:text_delta", "message_end:assistant", "turn_end", "agent_end"}, labels[len(labels)-4:])
	am := rec.ofType(EventMessageEnd)[1].Message.(*llm.AssistantMessage)
	assert.Equal(t, llm.StopAborted, am.StopReason)
	assert.Equal(t, "Request was aborted", am.ErrorMessage)
	assert.Equal(t, "partial", am.Content.Text())
	assert.Empty(t, rec.ofType(EventTurnEnd)[0].ToolResults)
	assert.False(t, a.IsStreaming())
	assert.Equal(t, "Request was aborted", a.ErrorMessage())
	_, f := a.QueueCounts()
	assert.Equal(t, 1, f, "an aborted run leaves follow-ups queued")
	assert.Len(t, fm.requests(), 1)
}

func TestAbortMidTool(t *testing.T) {
	fm := newFakeModel(toolTurn(callSpec{"c1", "sleep", `{}`}), textTurn("never"))
	started := make(chan struct{})
	var toolCause error
	sleep := &fakeTool{name: "sleep", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		close(started)
		<-ctx.Done()
		toolCause = context.Cause(ctx)
		return Result{}, errors.New("Operation aborted")
	}}
	a, rec := newTestAgent(t, fm, Config{}, sleep)
	done := make(chan error, 1)
	go func() { done <- a.Prompt(context.Background(), llm.UserText("nap")) }()
	<-started
	assert.Equal(t, []string{"c1"}, a.PendingToolCalls())
	a.Abort()
	require.NoError(t, <-done)

	assert.ErrorIs(t, toolCause, ErrAborted)
	labels := rec.labels()
	i := indexOf(labels, "tool_execution_end:c1")
	require.GreaterOrEqual(t, i, 0)
	// As in pi, the aborted batch is reported, then the next model call
	// ends aborted at once.
	assert.Equal(t, []string{
		"tool_execution_end:c1", "message_start:toolResult", "message_end:toolResult", "turn_end",
		"turn_start", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end",
	}, labels[i:])
	assert.Len(t, fm.requests(), 1, "no model call after the abort")
	tr := rec.ofType(EventTurnEnd)[0].ToolResults[0]
	assert.True(t, tr.IsError)
	assert.Equal(t, "Operation aborted", tr.Content.Text())
	am := rec.last().Messages[len(rec.last().Messages)-1].(*llm.AssistantMessage)
	assert.Equal(t, llm.StopAborted, am.StopReason)
	assert.Empty(t, a.PendingToolCalls())
}

func TestProviderErrorEndsRun(t *testing.T) {
	fm := newFakeModel(failTurn("429 rate limited"), textTurn("never"))
	a, rec := newTestAgent(t, fm, Config{})
	a.FollowUp(llm.UserText("later"))
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	assert.Equal(t, []string{
		"agent_start", "turn_start", "message_start:user", "message_end:user",
		"message_start:assistant", "message_end:assistant", "turn_end", "agent_end",
	}, rec.labels())
	am := rec.last().Messages[1].(*llm.AssistantMessage)
	assert.Equal(t, llm.StopError, am.StopReason)
	assert.Equal(t, "429 rate limited", am.ErrorMessage)
	assert.Equal(t, "429 rate limited", a.ErrorMessage())
	assert.Len(t, fm.requests(), 1)
	_, f := a.QueueCounts()
	assert.Equal(t, 1, f)
}

func TestMissingProviderIsAnErrorMessage(t *testing.T) {
	fm := newFakeModel()
	a, rec := newTestAgent(t, fm, Config{})
	a.SetModel(&llm.Model{ID: "m", API: "nowhere", Provider: "p"})
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	am := rec.last().Messages[1].(*llm.AssistantMessage)
	assert.Equal(t, llm.StopError, am.StopReason)
	assert.Contains(t, am.ErrorMessage, `no provider for "nowhere"`)
	assert.Equal(t, "m", am.Model)

	a.SetModel(nil)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("y")))
	assert.Equal(t, "no model selected", rec.last().Messages[1].(*llm.AssistantMessage).ErrorMessage)
}

func TestAPIKeyErrorIsAnErrorMessage(t *testing.T) {
	fm := newFakeModel(textTurn("never"))
	a, rec := newTestAgent(t, fm, Config{GetAuth: func(ctx context.Context, m *llm.Model) (llm.Auth, error) {
		return llm.Auth{}, errors.New("no API key found for fake")
	}})
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	am := rec.last().Messages[1].(*llm.AssistantMessage)
	assert.Equal(t, llm.StopError, am.StopReason)
	assert.Contains(t, am.ErrorMessage, "no API key found for fake")
	assert.Empty(t, fm.requests())
}

func TestBusyAndContinue(t *testing.T) {
	ctx := context.Background()
	fm := newFakeModel(toolTurn(callSpec{"c1", "probe", `{}`}), textTurn("a"), textTurn("b"), textTurn("c"))
	var a *Agent
	var busyErr, contErr error
	var streaming bool
	probe := &fakeTool{name: "probe", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		busyErr = a.Prompt(ctx, llm.UserText("again"))
		contErr = a.Continue(ctx)
		streaming = a.IsStreaming()
		return TextResult("ok"), nil
	}}
	var rec *recorder
	a, rec = newTestAgent(t, fm, Config{}, probe)

	assert.ErrorIs(t, a.Continue(ctx), ErrNoMessages)
	assert.ErrorIs(t, a.Prompt(ctx), ErrEmptyPrompt)
	require.NoError(t, a.Prompt(ctx, llm.UserText("x")))
	assert.ErrorIs(t, busyErr, ErrBusy)
	assert.ErrorIs(t, contErr, ErrBusy)
	assert.True(t, streaming)
	require.NoError(t, a.WaitForIdle(ctx))

	// Ends with an assistant message and nothing queued.
	assert.ErrorIs(t, a.Continue(ctx), ErrContinueFromAssistant)
	assert.False(t, a.IsStreaming())

	// A queued follow-up is prompted instead.
	a.FollowUp(llm.UserText("more"))
	require.NoError(t, a.Continue(ctx))
	assert.Equal(t, []string{"x", "more"}, userTexts(fm.requests()[2].Messages))

	// Continuing from a user message (a retry) adds no message of its own.
	msgs := a.Messages()
	a.ReplaceMessages(append(msgs, llm.UserText("retry me")))
	before := len(rec.all())
	require.NoError(t, a.Continue(ctx))
	assert.Equal(t, []string{"agent_start", "turn_start", "message_start:assistant"}, rec.labels()[before:before+3])
	assert.Equal(t, "assistant", roles(rec.last().Messages))
}

func TestStartPromptClaimsSynchronously(t *testing.T) {
	fm := newFakeModel(textTurn("ok"))
	a, _ := newTestAgent(t, fm, Config{})
	run, err := a.StartPrompt(context.Background(), llm.UserText("x"))
	require.NoError(t, err)
	assert.True(t, a.IsStreaming())
	_, err = a.StartPrompt(context.Background(), llm.UserText("y"))
	assert.ErrorIs(t, err, ErrBusy)
	run()
	assert.False(t, a.IsStreaming())
	assert.Equal(t, "user,assistant", roles(a.Messages()))
}

func TestConvertAndTransformContext(t *testing.T) {
	fm := newFakeModel(textTurn("a"), textTurn("b"))
	var transformed int
	a, _ := newTestAgent(t, fm, Config{})
	exit := 0
	a.AppendMessage(&llm.BashExecutionMessage{Command: "ls", Output: "x", ExitCode: &exit, Timestamp: llm.Now()})
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	assert.Equal(t, "user", roles(fm.requests()[0].Messages), "the default conversion drops bashExecution")
	assert.Equal(t, "bashExecution,user,assistant", roles(a.Messages()))

	fm2 := newFakeModel(textTurn("a"))
	b, _ := newTestAgent(t, fm2, Config{
		TransformContext: func(ctx context.Context, msgs []llm.Message) []llm.Message {
			transformed++
			return append([]llm.Message{llm.UserText("injected")}, msgs...)
		},
		ConvertToLLM: func(msgs []llm.Message) []llm.Message {
			out := make([]llm.Message, 0, len(msgs))
			for _, m := range msgs {
				if be, ok := m.(*llm.BashExecutionMessage); ok {
					m = llm.UserText("ran " + be.Command)
				}
				out = append(out, m)
			}
			return out
		},
	})
	b.ReplaceMessages(a.Messages()[:1])
	require.NoError(t, b.Prompt(context.Background(), llm.UserText("y")))
	assert.Equal(t, 1, transformed)
	assert.Equal(t, []string{"injected", "ran ls", "y"}, userTexts(fm2.requests()[0].Messages))
}

func TestSubscriberPanicIsReported(t *testing.T) {
	fm := newFakeModel(textTurn("ok"))
	var reports []error
	a, rec := newTestAgent(t, fm, Config{Report: func(err error) { reports = append(reports, err) }})
	unsub := a.Subscribe(func(ev Event) {
		if ev.Type == EventTurnStart {
			panic("bad sink")
		}
	})
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	assert.Equal(t, EventAgentEnd, rec.last().Type)
	require.Len(t, reports, 1)
	assert.Contains(t, reports[0].Error(), "bad sink")

	unsub()
	fm.turns = append(fm.turns, textTurn("again"))
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("y")))
	assert.Len(t, reports, 1, "an unsubscribed sink gets nothing")
}

func TestProviderPanicEndsTurnWithError(t *testing.T) {
	fm := newFakeModel(func(ctx context.Context, b *llm.Builder, yield func(llm.StreamEvent) bool) {
		i, ev := b.BeginText()
		yield(ev)
		yield(b.TextDelta(i, "half"))
		panic("provider bug")
	})
	var reports []error
	a, rec := newTestAgent(t, fm, Config{Report: func(err error) { reports = append(reports, err) }})
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	am := rec.last().Messages[1].(*llm.AssistantMessage)
	assert.Equal(t, llm.StopError, am.StopReason)
	assert.Contains(t, am.ErrorMessage, "provider bug")
	assert.Equal(t, "half", am.Content.Text())
	assert.Len(t, reports, 1)
	assert.False(t, a.IsStreaming())
}

func TestUpdatesAfterReturnAreDropped(t *testing.T) {
	fm := newFakeModel(toolTurn(callSpec{"c1", "leaky", `{}`}), textTurn("ok"))
	var saved func(Result)
	leaky := &fakeTool{name: "leaky", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		saved = update
		return TextResult("done"), nil
	}}
	a, rec := newTestAgent(t, fm, Config{}, leaky)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("x")))
	saved(TextResult("late")) // must neither block nor emit
	assert.Empty(t, rec.ofType(EventToolExecutionUpdate))
}

// An abort while a before hook waits (pi 1.6): the call prepared before it,
// the waiting one and those after it all end "Operation aborted" without
// running, whatever the hook then decides, and the after hook sees none of
// them.
func TestAbortDuringBeforeHookAbortsTheBatch(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "echo", `{}`}, callSpec{"c2", "echo", `{"ask":true}`}, callSpec{"c3", "echo", `{}`}),
		textTurn("unused"),
	)
	ran := 0
	tool := &fakeTool{name: "echo", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		ran++
		return TextResult("ran"), nil
	}}
	var a *Agent
	var rec *recorder
	var after []string
	a, rec = newTestAgent(t, fm, Config{
		BeforeToolCall: func(ctx context.Context, call *Call) (bool, string) {
			if strings.Contains(string(call.Args), "ask") {
				a.Abort()
				<-ctx.Done()
				return true, "the dialog was cancelled"
			}
			return false, ""
		},
		AfterToolCall: func(ctx context.Context, call Call, res Result) Result {
			after = append(after, call.ID)
			return res
		},
	}, tool)
	_ = a.Prompt(context.Background(), llm.UserText("x"))
	assert.Zero(t, ran)
	assert.Empty(t, after)
	ends := rec.ofType(EventToolExecutionEnd)
	require.Len(t, ends, 3)
	for _, e := range ends {
		assert.True(t, e.IsError, e.ToolCallID)
		assert.Equal(t, "Operation aborted", e.Result.Content.Text(), e.ToolCallID)
	}
}
