package ext

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// sameJSON checks that typed and the map gopi sent before the protocol
// was typed encode the same JSON value: the same fields, nulls where
// there were nulls, nothing where there was nothing.
func sameJSON(t *testing.T, typed any, old map[string]any) {
	t.Helper()
	a, err := Marshal(typed)
	require.NoError(t, err)
	b, err := Marshal(old)
	require.NoError(t, err)
	var got, want any
	require.NoError(t, json.Unmarshal(a, &got))
	require.NoError(t, json.Unmarshal(b, &want))
	assert.Equal(t, want, got, "typed: %s\nold:   %s", a, b)
}

func TestHookEventsKeepTheirWire(t *testing.T) {
	str := func(s string) *string { return &s }
	yes := true
	model := &llm.Model{ID: "m", Provider: "p", API: "anthropic-messages"}
	raw := json.RawMessage(`{"a":1}`)
	cases := []struct {
		name  string
		typed Event
		old   map[string]any
	}{
		{"session_start", SessionStartEvent{Reason: "startup"}, map[string]any{"type": "session_start", "reason": "startup"}},
		{"session_start previous", SessionStartEvent{Reason: "fork", PreviousSessionFile: "/a"},
			map[string]any{"type": "session_start", "reason": "fork", "previousSessionFile": "/a"}},
		{"session_shutdown", SessionShutdownEvent{Reason: "resume", TargetSessionFile: "/b"},
			map[string]any{"type": "session_shutdown", "reason": "resume", "targetSessionFile": "/b"}},
		{"session_before_switch", SessionBeforeSwitchEvent{Reason: "new"}, map[string]any{"type": "session_before_switch", "reason": "new"}},
		{"session_before_fork at", SessionBeforeForkEvent{EntryID: "e", Position: "at"},
			map[string]any{"type": "session_before_fork", "entryId": "e", "position": "at"}},
		{"session_before_tree", SessionBeforeTreeEvent{Preparation: TreePreparation{TargetID: "t", OldLeafID: str("o"), UserWantsSummary: true, Label: str("l")}},
			map[string]any{"type": "session_before_tree", "preparation": map[string]any{
				"targetId": "t", "oldLeafId": "o", "commonAncestorId": nil, "entriesToSummarize": nil, "userWantsSummary": true,
				"customInstructions": nil, "replaceInstructions": nil, "label": "l"}}},
		{"session_tree", SessionTreeEvent{NewLeafID: str("n")}, map[string]any{"type": "session_tree", "newLeafId": "n", "oldLeafId": nil}},
		{"session_tree summary", SessionTreeEvent{NewLeafID: str("n"), OldLeafID: str("o"), SummaryEntry: raw, FromExtension: &yes},
			map[string]any{"type": "session_tree", "newLeafId": "n", "oldLeafId": "o", "summaryEntry": raw, "fromExtension": true}},
		{"session_compact", SessionCompactEvent{CompactionEntry: raw, FromExtension: true, Reason: "manual"},
			map[string]any{"type": "session_compact", "compactionEntry": raw, "fromExtension": true, "reason": "manual", "willRetry": false}},
		{"session_compact_failed", SessionCompactFailedEvent{Reason: "threshold", ErrorMessage: str("")},
			map[string]any{"type": "session_compact_failed", "reason": "threshold", "aborted": false, "willRetry": false, "fromExtension": false, "errorMessage": ""}},
		{"session_compact_failed aborted", SessionCompactFailedEvent{Reason: "manual", Aborted: true},
			map[string]any{"type": "session_compact_failed", "reason": "manual", "aborted": true, "willRetry": false, "fromExtension": false}},
		{"model_select", ModelSelectEvent{Model: model, Source: "set"}, map[string]any{"type": "model_select", "model": model, "source": "set"}},
		{"model_select previous", ModelSelectEvent{Model: model, PreviousModel: model, Source: "cycle"},
			map[string]any{"type": "model_select", "model": model, "previousModel": model, "source": "cycle"}},
		{"thinking_level_select", ThinkingLevelSelectEvent{Level: "high", PreviousLevel: "off"},
			map[string]any{"type": "thinking_level_select", "level": llm.ThinkingLevel("high"), "previousLevel": llm.ThinkingLevel("off")}},
		{"after_provider_response", AfterProviderResponseEvent{Status: 200, Headers: map[string]string{"x": "y"}},
			map[string]any{"type": "after_provider_response", "status": 200, "headers": map[string]string{"x": "y"}}},
		{"provider_stream_event", ProviderStreamEvent{Provider: "p", API: "a", Model: "m", Data: raw},
			map[string]any{"type": "provider_stream_event", "provider": "p", "api": "a", "model": "m", "data": raw}},
		{"user_bash", UserBashEvent{Command: "ls", Cwd: "/w"},
			map[string]any{"type": "user_bash", "command": "ls", "excludeFromContext": false, "cwd": "/w"}},
		{"tool_call", ToolCallEvent{ToolName: "bash", ToolCallID: "c", Input: raw},
			map[string]any{"type": "tool_call", "toolName": "bash", "toolCallId": "c", "input": raw}},
		{"tool_result", ToolResultEvent{ToolName: "bash", ToolCallID: "c", Input: raw, Content: json.RawMessage(`[]`)},
			map[string]any{"type": "tool_result", "toolName": "bash", "toolCallId": "c", "input": raw, "content": llm.Contents{}, "details": nil, "isError": false}},
		{"turn_end", TurnEndEvent{TurnIndex: 2, ToolResults: []*llm.ToolResultMessage{}, MessageEntryID: "m", ToolResultEntryIDs: []string{}, Outcome: "completed"},
			map[string]any{"type": "turn_end", "turnIndex": 2, "message": (*llm.AssistantMessage)(nil), "toolResults": []*llm.ToolResultMessage{},
				"messageEntryId": "m", "toolResultEntryIds": []string{}, "outcome": "completed"}},
		{"agent_before_settle", AgentBeforeSettleEvent{Outcome: "aborted"}, map[string]any{"type": "agent_before_settle", "outcome": "aborted"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { sameJSON(t, c.typed, c.old) })
	}
}

func TestParamsKeepTheirWire(t *testing.T) {
	raw := json.RawMessage(`{"a":1}`)
	sameJSON(t, ProjectTrustParams{Cwd: "/w"}, map[string]any{"cwd": "/w", "paths": []string(nil)})
	sameJSON(t, InitializeParams{Cwd: "/w", Paths: []string{"x"}, State: InitialState{Cwd: "/w", ProjectTrusted: true}},
		map[string]any{"cwd": "/w", "paths": []string{"x"}, "flagValues": map[string]any(nil), "state": map[string]any{"cwd": "/w", "projectTrusted": true}})
	sameJSON(t, EventParams[Event]{AgentBeforeSettleEvent{Outcome: "completed"}},
		map[string]any{"event": map[string]any{"type": "agent_before_settle", "outcome": "completed"}})
	sameJSON(t, Empty{}, map[string]any{})
	sameJSON(t, InputParams{Text: "hi", Source: "rpc"}, map[string]any{"text": "hi", "source": "rpc"})
	sameJSON(t, InputParams{Text: "hi", Source: "rpc", Images: raw, StreamingBehavior: "steer"},
		map[string]any{"text": "hi", "source": "rpc", "images": raw, "streamingBehavior": "steer"})
	sameJSON(t, Messages{Messages: raw}, map[string]any{"messages": raw})
	sameJSON(t, ExecuteToolParams{Name: "t", ToolCallID: "c", Params: raw}, map[string]any{"name": "t", "toolCallId": "c", "params": raw})
	sameJSON(t, CommandParams{Name: "n", Args: "a b"}, map[string]any{"name": "n", "args": "a b"})
	sameJSON(t, CancelParams{RID: 7}, map[string]any{"rid": 7})
	sameJSON(t, ResourcesDiscoverParams{Cwd: "/w", Reason: "startup"}, map[string]any{"cwd": "/w", "reason": "startup"})
}

func TestPeerResultsKeepTheirWire(t *testing.T) {
	model := &llm.Model{ID: "m", Provider: "p"}
	sameJSON(t, SetModelResult{}, map[string]any{"ok": false})
	sameJSON(t, SetModelResult{OK: true, Model: model, ThinkingLevel: "low"},
		map[string]any{"ok": true, "model": model, "thinkingLevel": llm.ThinkingLevel("low")})
	sameJSON(t, APIKeyResult{Error: "unknown model p/m"}, map[string]any{"ok": false, "error": "unknown model p/m"})
	sameJSON(t, APIKeyResult{OK: true}, map[string]any{"ok": true, "headers": map[string]string(nil)})
	sameJSON(t, APIKeyResult{OK: true, APIKey: "k", Headers: map[string]string{"h": "v"}},
		map[string]any{"ok": true, "apiKey": "k", "headers": map[string]string{"h": "v"}})
	sameJSON(t, ForkResult{Cancelled: true}, map[string]any{"cancelled": true, "selectedText": ""})
}
