package ext

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/llm"
)

// A nested call's tool_call and tool_result events name the call that
// made it (parentToolCallId), as pi sends them; the model's own calls'
// events do not carry the field.
func TestHookEventsNameTheParentCall(t *testing.T) {
	var mu sync.Mutex
	var seen []map[string]any
	record := func(_ context.Context, _ Peer, params json.RawMessage) (any, error) {
		var p struct{ Event map[string]any }
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		mu.Lock()
		seen = append(seen, p.Event)
		mu.Unlock()
		return nil, nil
	}
	f := &Func{
		Regs:    Registrations{Handlers: []string{EventToolCall, EventToolResult}},
		Methods: map[Method]func(context.Context, Peer, json.RawMessage) (any, error){HostToolCall: record, HostToolResult: record},
	}
	m := NewManager(f)
	m.Start(context.Background(), nopPeer{})
	t.Cleanup(func() { _ = m.Close() })
	h := Hooks{M: m, State: func() *State { return &State{} }}
	call := agent.Call{ID: "c1/1", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)}

	nested := agent.WithParentCallID(context.Background(), "c1")
	_, blocked, _, err := h.ToolCall(nested, call)
	require.NoError(t, err)
	require.False(t, blocked)
	_, err = h.ToolResult(nested, call, agent.Result{Content: llm.Contents{llm.TextContent{Text: "ok"}}})
	require.NoError(t, err)
	_, _, _, err = h.ToolCall(context.Background(), agent.Call{ID: "c2", Name: "bash", Args: call.Args})
	require.NoError(t, err)

	require.Len(t, seen, 3)
	assert.Equal(t, "c1", seen[0]["parentToolCallId"])
	assert.Equal(t, "c1", seen[1]["parentToolCallId"])
	assert.NotContains(t, seen[2], "parentToolCallId")
}
