package host

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/agent"
	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

// Issue 10: a panic inside a retry (here: a subscriber that panics on
// auto_retry_start) still ends the retry the client was told about, and a
// later success reports no stray auto_retry_end.
func TestPanicInsideRetryEndsTheRetry(t *testing.T) {
	h, rec := newRetryHost(t, llmtest.HTTPError(503, ""), llmtest.Text("fine"))
	var once atomic.Bool
	h.Subscribe(func(ev api.Event) {
		if _, ok := ev.(api.AutoRetryStart); ok && once.CompareAndSwap(false, true) {
			panic("subscriber exploded")
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, h.PromptAndWait(ctx, "try", nil))
	var ends []api.AutoRetryEnd
	for _, e := range rec.retryEvents() {
		if end, ok := e.(api.AutoRetryEnd); ok {
			ends = append(ends, end)
		}
	}
	require.Len(t, ends, 1, "the retry ends once")
	assert.False(t, ends[0].Success)
	assert.Contains(t, ends[0].FinalError, "subscriber exploded")

	require.NoError(t, h.PromptAndWait(ctx, "again", nil))
	for _, e := range rec.retryEvents() {
		if end, ok := e.(api.AutoRetryEnd); ok {
			assert.False(t, end.Success, "no stray success after the panic")
		}
	}
}

// explodingTool panics whenever it runs.
type explodingTool struct{}

func (explodingTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "explode", Description: "Panics.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (explodingTool) Run(context.Context, agent.Call, func(agent.Result)) (agent.Result, error) {
	panic("tool exploded")
}

// Issue 10: a tool that panics becomes an error result the model reads,
// the panic is reported with its stack, and the host keeps serving.
func TestPanicInToolIsSurvived(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.ToolCalls(llmtest.Call("call_1", "explode", `{}`)),
		llmtest.Text("the tool broke"),
		llmtest.Text("next answer"),
	)
	reg, agentDir := newRegistry(t, llm.APIAnthropicMessages, srv.AnthropicURL())
	model, ok := reg.Find("scripted", "scripted-1")
	require.True(t, ok)
	var mu sync.Mutex
	var reports []string
	h, err := New(Options{Cwd: t.TempDir(), AgentDir: agentDir, Registry: reg, Model: &model, Thinking: llm.ThinkingOff,
		Tools:  []agent.Tool{explodingTool{}},
		Report: func(err error) { mu.Lock(); reports = append(reports, err.Error()); mu.Unlock() },
	})
	require.NoError(t, err)
	defer func() { _ = h.Close(context.Background()) }()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, h.PromptAndWait(ctx, "go", nil))
	var result *llm.ToolResultMessage
	for _, m := range h.agent.Messages() {
		if r, ok := m.(*llm.ToolResultMessage); ok {
			result = r
		}
	}
	require.NotNil(t, result)
	assert.True(t, result.IsError)
	assert.Contains(t, result.Content.Text(), "tool exploded")
	mu.Lock()
	report := strings.Join(reports, "\n")
	mu.Unlock()
	assert.Contains(t, report, "agent: tool explode panicked: tool exploded")
	assert.Contains(t, report, "explodingTool.Run", "the report carries the tool's stack")

	require.NoError(t, h.PromptAndWait(ctx, "again", nil))
	text, _ := h.LastAssistantText()
	assert.Equal(t, "next answer", text)
}
