package lspbridge

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
)

func isEvent(m *msg) bool { return m.isNotification("pi/event") }

func TestEventsAreTheNativeEventObjects(t *testing.T) {
	rt := stateRT()
	h := startBridge(t, rt, config{})
	h.sync() // events go once the client has spoken
	events := []api.Event{
		agent.Event{Type: agent.EventAgentStart},
		agent.Event{Type: agent.EventTurnStart},
		agent.Event{Type: agent.EventMessageStart, Message: textMessage("a <b> & c")},
		agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: "bash", Args: json.RawMessage(`{"command":"ls <dir> && echo"}`)},
		agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: "c1", ToolName: "bash"},
		agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "c1", ToolName: "bash", IsError: true},
		agent.Event{Type: agent.EventMessageEnd, Message: textMessage("done")},
		agent.Event{Type: agent.EventTurnEnd, Message: textMessage("done")},
		&agent.Event{Type: agent.EventAgentEnd},
		api.AutoCompactionStart{Reason: "threshold"},
		api.AutoCompactionEnd{Result: &api.CompactionResult{Summary: "s", FirstKeptEntryID: "e"}, WillRetry: true},
		api.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "overloaded"},
		api.AutoRetryEnd{Success: false, Attempt: 3, FinalError: "gave up"},
		api.ExtensionError{ExtensionPath: "/x.ts", Event: "tool_call", Error: "boom"},
	}
	for _, ev := range events {
		rt.emit(ev)
		m := h.next()
		require.True(t, isEvent(m), "want a pi/event, got %s", m)
		assert.Equal(t, nativeEvent(t, ev), string(m.params()), "%s", ev.EventType())
	}
}

// updateEvent is a message_update carrying the message so far twice: as
// message and as assistantMessageEvent.partial.
func updateEvent() agent.Event {
	partial := textMessage("Hello, wor")
	return agent.Event{
		Type:           agent.EventMessageUpdate,
		Message:        partial,
		AssistantEvent: &llm.StreamEvent{Type: llm.EventTextDelta, ContentIndex: 0, Delta: "wor", Partial: partial},
	}
}

func TestMessageUpdateIsLeanByDefault(t *testing.T) {
	rt := stateRT()
	h := startBridge(t, rt, config{})
	require.Nil(t, h.initialize(`{}`, "").errObj())

	for _, ev := range []api.Event{updateEvent(), ptr(updateEvent())} {
		rt.emit(ev)
		m := h.next()
		require.True(t, isEvent(m), m.String())
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(m.params(), &got))
		assert.NotContains(t, got, "message")
		assert.JSONEq(t, `{"type":"text_delta","contentIndex":0,"delta":"wor"}`, string(got["assistantMessageEvent"]))
		// pi 1.5's lean form: the usage so far instead of the message so far.
		assert.Equal(t, `{"type":"message_update","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"wor"}}`, string(m.params()))
	}
	// The runtime's event is left as it was: other subscribers see it whole.
	ev := updateEvent()
	rt.emit(ev)
	h.next()
	assert.NotNil(t, ev.Message)
	assert.NotNil(t, ev.AssistantEvent.Partial)

	// Other events keep their message.
	end := agent.Event{Type: agent.EventMessageEnd, Message: textMessage("Hello, world")}
	rt.emit(end)
	assert.Equal(t, nativeEvent(t, end), string(h.next().params()))
}

func ptr[T any](v T) *T { return &v }

func TestMessageUpdateIsFullOnRequest(t *testing.T) {
	rt := stateRT()
	h := startBridge(t, rt, config{})
	require.Nil(t, h.initialize(`{}`, `"initializationOptions":{"fullUpdates":true}`).errObj())
	ev := updateEvent()
	rt.emit(ev)
	m := h.next()
	require.True(t, isEvent(m), m.String())
	assert.Equal(t, nativeEvent(t, ev), string(m.params()))
	assert.Contains(t, string(m.params()), `"message":`)
	assert.Contains(t, string(m.params()), `"partial":`)
}

// acceptProgress answers every window/workDoneProgress/create at once.
func acceptProgress(p *peer, m *msg) bool {
	if m.isRequest("window/workDoneProgress/create") {
		p.reply(m, "null")
		return true
	}
	return false
}

func isProgress(m *msg) bool { return m.isNotification("$/progress") }

func isCreate(m *msg) bool { return m.isRequest("window/workDoneProgress/create") }

func createToken(t *testing.T, m *msg) string {
	t.Helper()
	var p struct {
		Token string `json:"token"`
	}
	require.NoError(t, json.Unmarshal(m.params(), &p), m.String())
	require.NotEmpty(t, p.Token, m.String())
	return p.Token
}

// awaitProgress takes the next $/progress and checks its token and value.
func awaitProgress(t *testing.T, h *harness, token, value string) {
	t.Helper()
	m := h.await("$/progress", isProgress)
	assert.JSONEq(t, fmt.Sprintf(`{"token":%q,"value":%s}`, token, value), string(m.params()))
}

func TestProgressFollowsTheRun(t *testing.T) {
	rt := stateRT()
	h := startBridge(t, rt, config{})
	require.Nil(t, h.initialize(capsProgress, "").errObj())

	rt.emit(agent.Event{Type: agent.EventAgentStart})
	create := h.await("create", isCreate)
	token := createToken(t, create)
	// Nothing is reported on a token the client has not accepted yet.
	for _, m := range h.sync() {
		assert.False(t, isProgress(m), "progress before create was answered: %s", m)
	}
	h.reply(create, "null")
	awaitProgress(t, h, token, `{"kind":"begin","title":"gopi","cancellable":true,"message":"Working"}`)

	rt.emit(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: "bash", Args: json.RawMessage(`{"command":"ls -la"}`)})
	awaitProgress(t, h, token, `{"kind":"report","message":"bash: ls -la"}`)
	rt.emit(api.AutoCompactionStart{Reason: "threshold"})
	rt.emit(api.AutoCompactionEnd{Result: &api.CompactionResult{Summary: "s"}})
	awaitProgress(t, h, token, `{"kind":"report","message":"Compacting context"}`)
	rt.emit(api.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "overloaded\nmore detail"})
	rt.emit(api.AutoRetryEnd{Success: true, Attempt: 1})
	awaitProgress(t, h, token, `{"kind":"report","message":"Retrying in 2s (attempt 1 of 3): overloaded …"}`)
	// agent_end is not the end of the prompt (pi 1.5): agent_settled is.
	rt.emit(agent.Event{Type: agent.EventAgentEnd, WillRetry: true})
	rt.emit(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "c2", ToolName: "read", Args: json.RawMessage(`{"path":"go.mod"}`)})
	awaitProgress(t, h, token, `{"kind":"report","message":"read: go.mod"}`)
	rt.emit(api.AgentSettled{})
	awaitProgress(t, h, token, `{"kind":"end"}`)

	// Outside a run, a compaction or a retry opens its own progress.
	rt.emit(api.AutoCompactionStart{Reason: "overflow"})
	create = h.await("create", isCreate)
	token2 := createToken(t, create)
	assert.NotEqual(t, token, token2)
	h.reply(create, "null")
	awaitProgress(t, h, token2, `{"kind":"begin","title":"gopi","cancellable":true,"message":"Context overflow: compacting"}`)
	rt.emit(api.AutoCompactionEnd{Result: &api.CompactionResult{Summary: "s"}})
	awaitProgress(t, h, token2, `{"kind":"end"}`)

	rt.emit(api.AutoRetryStart{Attempt: 2, MaxAttempts: 3, DelayMs: 500, ErrorMessage: "rate limited"})
	create = h.await("create", isCreate)
	token3 := createToken(t, create)
	h.reply(create, "null")
	awaitProgress(t, h, token3, `{"kind":"begin","title":"gopi","cancellable":true,"message":"Retrying in 500ms (attempt 2 of 3): rate limited"}`)
	rt.emit(api.AutoRetryEnd{Success: false, Attempt: 3, FinalError: "gave up"})
	awaitProgress(t, h, token3, `{"kind":"end","message":"gave up"}`)
}

func TestProgressOnARefusedTokenIsNeverSent(t *testing.T) {
	rt := stateRT()
	h := startBridge(t, rt, config{})
	require.Nil(t, h.initialize(capsProgress, "").errObj())

	rt.emit(agent.Event{Type: agent.EventAgentStart})
	create := h.await("create", isCreate)
	refused := createToken(t, create)
	h.replyError(create, -32603, "no progress here")
	rt.emit(agent.Event{Type: agent.EventToolExecutionStart, ToolName: "read", Args: json.RawMessage(`{"path":"go.mod"}`)})
	rt.emit(agent.Event{Type: agent.EventAgentEnd})
	rt.emit(api.AgentSettled{})

	// Steps go out in order, so by the next create anything about the
	// refused token would have been sent.
	rt.emit(agent.Event{Type: agent.EventAgentStart})
	var before []*msg
	for {
		m := h.next()
		if isCreate(m) {
			create = m
			break
		}
		before = append(before, m)
	}
	for _, m := range before {
		assert.False(t, isProgress(m), "progress on a refused token: %s", m)
	}
	accepted := createToken(t, create)
	assert.NotEqual(t, refused, accepted)
	h.reply(create, "null")
	awaitProgress(t, h, accepted, `{"kind":"begin","title":"gopi","cancellable":true,"message":"Working"}`)
}

func TestProgressCancelAbortsTheRun(t *testing.T) {
	rt := stateRT()
	h := startBridge(t, rt, config{auto: acceptProgress})
	require.Nil(t, h.initialize(capsProgress, "").errObj())
	rt.emit(agent.Event{Type: agent.EventAgentStart})
	m := h.await("begin", isProgress)
	var p struct {
		Token string `json:"token"`
	}
	require.NoError(t, json.Unmarshal(m.params(), &p))

	h.notify("window/workDoneProgress/cancel", `{"token":"gopi-999"}`)
	h.notify("window/workDoneProgress/cancel", `{"token":5}`)
	h.sync()
	require.Empty(t, rt.aborts, "another token aborts nothing")

	h.notify("window/workDoneProgress/cancel", fmt.Sprintf(`{"token":%q}`, p.Token))
	select {
	case <-rt.aborts:
	case <-time.After(waitTimeout):
		t.Fatal("cancelling the run's progress did not abort it")
	}
}

func TestNoProgressWithoutTheCapability(t *testing.T) {
	for _, caps := range []string{"", `{}`, `{"window":{"workDoneProgress":false}}`} {
		rt := stateRT()
		h := startBridge(t, rt, config{})
		if caps != "" {
			require.Nil(t, h.initialize(caps, "").errObj())
		}
		rt.emit(agent.Event{Type: agent.EventAgentStart})
		rt.emit(agent.Event{Type: agent.EventToolExecutionStart, ToolName: "bash", Args: json.RawMessage(`{"command":"ls"}`)})
		rt.emit(api.AutoCompactionStart{Reason: "threshold"})
		rt.emit(agent.Event{Type: agent.EventAgentEnd})
		got := h.sync()
		require.Len(t, got, 4)
		for _, m := range got {
			assert.True(t, isEvent(m), "only events are sent: %s", m)
		}
	}
}
