package host

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/llm"
	"github.com/gopi-dev/gopi/core/llm/llmtest"
)

func newRetryHost(t *testing.T, turns ...llmtest.Turn) (*Host, *recorder) {
	t.Helper()
	srv := llmtest.New(t, turns...)
	reg, agentDir := newRegistry(t, llm.APIAnthropicMessages, srv.AnthropicURL())
	model, ok := reg.Find("scripted", "scripted-1")
	require.True(t, ok)
	retry := DefaultRetrySettings()
	retry.BaseDelayMs = 1
	h, err := New(Options{Cwd: t.TempDir(), AgentDir: agentDir, Registry: reg, Model: &model, Thinking: llm.ThinkingOff,
		Settings: Settings{Retry: &retry}})
	require.NoError(t, err)
	rec := &recorder{}
	h.Subscribe(rec.add)
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h, rec
}

func (r *recorder) retryEvents() []api.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []api.Event
	for _, e := range r.events {
		switch e.(type) {
		case api.AutoRetryStart, api.AutoRetryEnd:
			out = append(out, e)
		}
	}
	return out
}

// Issue 10: when the restart after a backoff fails, the retry the client
// was told about still ends (auto_retry_end, success false), and the
// attempt counter is reset, so a later success reports no stray end.
func TestRetryRestartFailureEndsTheRetry(t *testing.T) {
	h, rec := newRetryHost(t, llmtest.HTTPError(503, ""), llmtest.Text("later"))
	h.startContinue = func(context.Context) (func(), error) { return nil, errors.New("agent busy") }

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, h.PromptAndWait(ctx, "try", nil))
	evs := rec.retryEvents()
	require.Len(t, evs, 2, "%#v", evs)
	assert.IsType(t, api.AutoRetryStart{}, evs[0])
	end, ok := evs[1].(api.AutoRetryEnd)
	require.True(t, ok)
	assert.False(t, end.Success)
	assert.Equal(t, 1, end.Attempt)
	assert.Contains(t, end.FinalError, "agent busy")

	// The next prompt succeeds without a stray auto_retry_end.
	h.startContinue = func(ctx context.Context) (func(), error) { return h.agent.StartContinue(ctx) }
	require.NoError(t, h.PromptAndWait(ctx, "again", nil))
	assert.Len(t, rec.retryEvents(), 2, "no retry event after a plain success")
}
