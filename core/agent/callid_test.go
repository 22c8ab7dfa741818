package agent

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/llm"
)

// Each tool's ctx names the call it runs for, parallel calls included.
func TestToolContextNamesItsCall(t *testing.T) {
	fm := newFakeModel(
		toolTurn(callSpec{"c1", "t", `{}`}, callSpec{"c2", "t", `{}`}),
		textTurn("done"),
	)
	var mu sync.Mutex // guards seen
	seen := map[string]string{}
	tool := &fakeTool{name: "t", run: func(ctx context.Context, call Call, update func(Result)) (Result, error) {
		id, ok := CallID(ctx)
		assert.True(t, ok)
		mu.Lock()
		seen[call.ID] = id
		mu.Unlock()
		return TextResult("ok"), nil
	}}
	a, _ := newTestAgent(t, fm, Config{}, tool)
	require.NoError(t, a.Prompt(context.Background(), llm.UserText("go")))
	assert.Equal(t, map[string]string{"c1": "c1", "c2": "c2"}, seen)
	_, ok := CallID(context.Background())
	assert.False(t, ok, "no call outside a tool")
}
